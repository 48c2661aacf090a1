package learn

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

func TestRecovery(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	r := newRecovery(rules.Learn{Callers: 3, RecoveryWindow: time.Minute}, m, nil)
	defer r.close()
	now := time.Date(2026, 3, 11, 9, 0, 0, 0, time.UTC)
	r.table.mu.Lock()
	r.now = func() time.Time { return now }
	r.table.mu.Unlock()

	// Callers that recover after 1, 3 and 5 calls: rejections, wrapped
	// errors and the success all count as calls after the first rejection.
	r.rejected(id("one"), "update_ticket", "invalid_status")
	r.succeeded(id("one"), "update_ticket")

	r.rejected(id("three"), "update_ticket", "invalid_status")
	r.rejected(id("three"), "update_ticket", "invalid_status")
	r.called(id("three"), "update_ticket")
	r.succeeded(id("three"), "update_ticket")

	r.rejected(id("five"), "update_ticket", "invalid_status")
	for range 4 {
		r.rejected(id("five"), "update_ticket", "ticket_unassigned")
	}
	r.succeeded(id("five"), "update_ticket")

	// A success on another route, or by another caller, ends nothing.
	r.rejected(id("never"), "update_ticket", "invalid_status")
	r.succeeded(id("never"), "get_ticket")
	r.succeeded(id("someone else"), "update_ticket")

	n, sum := metricstest.Histogram(t, reg, "signpost_recovery_attempts", "route", "update_ticket", "code", "invalid_status")
	if n != 3 || sum != 1+3+5 {
		t.Errorf("recovery attempts: %d samples summing %v; want 3 summing 9", n, sum)
	}
	if c := metricstest.Counter(t, reg, "signpost_unrecovered_total"); c != 0 {
		t.Errorf("unrecovered before the window lapses: %v", c)
	}

	// The window lapses: the caller that never recovered is counted, once.
	now = now.Add(2 * time.Minute)
	r.expire()
	r.expire()
	if c := metricstest.Counter(t, reg, "signpost_unrecovered_total", "route", "update_ticket", "code", "invalid_status"); c != 1 {
		t.Errorf("unrecovered = %v; want 1", c)
	}
	if r.pending.Load() != 0 || r.table.callers.Len() != 0 {
		t.Errorf("%d pending, %d callers left; want none", r.pending.Load(), r.table.callers.Len())
	}

	// A success after the window is no recovery.
	r.rejected(id("late"), "update_ticket", "invalid_status")
	now = now.Add(2 * time.Minute)
	r.succeeded(id("late"), "update_ticket")
	if c := metricstest.Counter(t, reg, "signpost_unrecovered_total", "route", "update_ticket", "code", "invalid_status"); c != 2 {
		t.Errorf("unrecovered after a late success = %v; want 2", c)
	}

	// Beyond the bound the least recent caller is forgotten and its
	// recovery counted as lost.
	for _, c := range []string{"a", "b", "c", "d"} {
		r.rejected(id(c), "get_ticket", "unknown_ticket")
	}
	if c := metricstest.Counter(t, reg, "signpost_unrecovered_total", "route", "get_ticket", "code", "unknown_ticket"); c != 1 || r.table.callers.Len() != 3 {
		t.Errorf("after eviction: unrecovered %v, %d callers; want 1 and 3", c, r.table.callers.Len())
	}
}

func TestRecoverySweeps(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newRecovery(rules.Learn{Callers: 10, RecoveryWindow: 40 * time.Millisecond}, metrics.New(reg), nil)
	defer r.close()
	r.rejected(id("x"), "update_ticket", "invalid_status")
	deadline := time.Now().Add(5 * time.Second)
	for metricstest.Counter(t, reg, "signpost_unrecovered_total") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sweeper never counted a lapsed recovery")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRecoveryStopped: a caller told to stop ends its recovery as a loop
// stopped, not as one never recovered, unless a success follows; a stop
// with no recovery under way begins one.
func TestRecoveryStopped(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newRecovery(rules.Learn{Callers: 10, RecoveryWindow: time.Minute}, metrics.New(reg), nil)
	defer r.close()
	now := time.Date(2026, 3, 11, 9, 0, 0, 0, time.UTC)
	r.table.mu.Lock()
	r.now = func() time.Time { return now }
	r.table.mu.Unlock()

	r.rejected(id("looping"), "book_slot", "slot_taken")
	r.stopped(id("looping"), "book_slot", "slot_taken")
	r.stopped(id("wrapped"), "export", "upstream_failed") // no rejection before
	r.rejected(id("recovers"), "book_slot", "slot_taken")
	r.stopped(id("recovers"), "book_slot", "slot_taken")
	r.called(id("recovers"), "book_slot")
	r.succeeded(id("recovers"), "book_slot")
	r.rejected(id("plain"), "book_slot", "slot_taken")

	now = now.Add(2 * time.Minute)
	r.expire()
	for _, c := range []struct {
		name        string
		route, code string
		want        float64
	}{
		{"signpost_recovery_stopped_total", "book_slot", "slot_taken", 1},
		{"signpost_recovery_stopped_total", "export", "upstream_failed", 1},
		{"signpost_unrecovered_total", "book_slot", "slot_taken", 1},
	} {
		if got := metricstest.Counter(t, reg, c.name, "route", c.route, "code", c.code); got != c.want {
			t.Errorf("%s{%s,%s} = %v; want %v", c.name, c.route, c.code, got, c.want)
		}
	}
	if n, sum := metricstest.Histogram(t, reg, "signpost_recovery_attempts", "route", "book_slot", "code", "slot_taken"); n != 1 || sum != 2 {
		t.Errorf("recovery attempts: %d samples summing %v; want the one recovery, in 2 calls", n, sum)
	}
	if r.pending.Load() != 0 {
		t.Errorf("%d pending; want none", r.pending.Load())
	}
}
