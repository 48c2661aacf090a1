package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/signpost-proxy/signpost/metrics"
)

// exposition renders what /metrics would serve from reg.
func exposition(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Rejected("update_ticket", "invalid_status", "status")
	m.Rejected("update_ticket", "invalid_status", "status")
	m.Rejected("update_ticket", "ticket_unassigned", "")
	m.Unmatched(metrics.Unrouted, 418)
	m.Unmatched("update_ticket", 999) // no such status: one bounded label
	m.Unmatched("update_ticket", -1)
	m.Oversized("update_ticket")
	m.UpstreamFailed("update_ticket", "upstream_timeout")
	m.RepeatStopped("export", "upstream_failed")
	m.RecoveryStopped("export", "upstream_failed")
	got := exposition(t, reg)
	for _, want := range []string{
		`signpost_rejections_total{code="invalid_status",field="status",route="update_ticket"} 2`,
		`signpost_rejections_total{code="ticket_unassigned",field="",route="update_ticket"} 1`,
		`signpost_upstream_errors_unmatched_total{route="(unrouted)",status="418"} 1`,
		`signpost_upstream_errors_unmatched_total{route="update_ticket",status="other"} 2`,
		`signpost_upstream_error_bodies_oversized_total{route="update_ticket"} 1`,
		`signpost_upstream_failures_total{code="upstream_timeout",route="update_ticket"} 1`,
		`signpost_repeats_stopped_total{code="upstream_failed",route="export"} 1`,
		`signpost_recovery_stopped_total{code="upstream_failed",route="export"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("exposition lacks %s\n%s", want, got)
		}
	}
}

func TestRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.New(reg)
	defer func() {
		if recover() == nil {
			t.Error("a second set of collectors on one registry did not panic")
		}
	}()
	metrics.New(reg)
}

// TestBufferBudget: the budget's gauges add up what is lent and given
// back, in any order, and the counter says how often it had no room.
func TestBufferBudget(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.BufferBudget(64 << 20)
	m.BufferBudgetInUse(900 << 10)
	m.BufferBudgetInUse(16 << 10)
	m.BufferBudgetInUse(-900 << 10)
	m.BufferBudgetExhausted()
	m.BufferBudgetExhausted()
	got := exposition(t, reg)
	for _, want := range []string{
		`signpost_buffer_budget_bytes 6.7108864e+07`,
		`signpost_buffer_budget_in_use_bytes 16384`,
		`signpost_buffer_budget_exhausted_total 2`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("exposition lacks %s\n%s", want, got)
		}
	}
}
