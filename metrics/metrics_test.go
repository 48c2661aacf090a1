package metrics_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
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

// declaredRules has a route in enforce mode, with error rules with and
// without a field, a field no rule names and body fields, and a route in
// observe mode.
const declaredRules = `upstream: http://upstream.test
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    fields:
      ticket_id: {pattern: '^T-[0-9]+$', example: T-1}
      status: {enum: [open, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
      - match: {status: 409}
        code: ticket_unassigned
        message: an unassigned ticket cannot be closed
  list_things:
    method: GET
    path: /things
    mode: observe
    fields:
      q: {in: query, required: true}
    errors:
      - match: {status: 403}
        code: not_permitted
        message: this account may not list things
`

// TestDeclare: after Declare, a fresh registry shows at zero exactly the
// series the rule file names: rejections per route, code and field,
// would-be answers for the route in observe mode, oversized bodies and
// upstream failures per route and unrouted; the limits and reload results
// from the start; nothing labelled by an upstream status. A second
// Declare, as after a reload, keeps what was counted.
func TestDeclare(t *testing.T) {
	cfg, err := rules.Parse("rules.yaml", []byte(declaredRules))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Declare(cfg)
	m.DeclareRefusals([]string{"invalid_request_line", "missing_host"})
	want := []string{
		`signpost_rejections_total{code="invalid_json_body",field="",route="update_ticket"} 0`,
		`signpost_rejections_total{code="invalid_status",field="status",route="update_ticket"} 0`,
		`signpost_rejections_total{code="invalid_ticket_id",field="ticket_id",route="update_ticket"} 0`,
		`signpost_rejections_total{code="ticket_unassigned",field="",route="update_ticket"} 0`,
		`signpost_would_rewrite_total{code="invalid_q",route="list_things"} 0`,
		`signpost_would_rewrite_total{code="not_permitted",route="list_things"} 0`,
		`signpost_upstream_error_bodies_oversized_total{route="(unrouted)"} 0`,
		`signpost_upstream_error_bodies_oversized_total{route="list_things"} 0`,
		`signpost_upstream_error_bodies_oversized_total{route="update_ticket"} 0`,
		`signpost_requests_limited_total{limit="concurrency"} 0`,
		`signpost_requests_limited_total{limit="request_body"} 0`,
		`signpost_requests_limited_total{limit="request_body_timeout"} 0`,
		`signpost_requests_refused_total{code="invalid_request_line"} 0`,
		`signpost_requests_refused_total{code="missing_host"} 0`,
		`signpost_rules_reloads_total{result="failure"} 0`,
		`signpost_rules_reloads_total{result="success"} 0`,
	}
	for _, route := range []string{"(unrouted)", "list_things", "update_ticket"} {
		for _, code := range []string{"upstream_invalid_response", "upstream_timeout", "upstream_unavailable"} {
			want = append(want, `signpost_upstream_failures_total{code="`+code+`",route="`+route+`"} 0`)
		}
	}
	slices.Sort(want)
	got := labelledSeries(t, reg)
	if !slices.Equal(got, want) {
		t.Errorf("series after Declare:\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}

	m.Rejected("update_ticket", "invalid_status", "status")
	m.Declare(cfg)
	if got := exposition(t, reg); !strings.Contains(got, `signpost_rejections_total{code="invalid_status",field="status",route="update_ticket"} 1`) {
		t.Errorf("a second Declare lost a count:\n%s", got)
	}
}

// labelledSeries lists the series of reg that carry labels, as the text
// format writes them, sorted.
func labelledSeries(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(exposition(t, reg), "\n") {
		if strings.HasPrefix(line, "signpost_") && strings.Contains(line, "{") {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// TestHelpTexts: each metric's help says what its counter counts, as the
// proxy counts it, and names each of its labels. The phrases are those a
// reader needs to read the numbers right: an unmatched error is wrapped as
// often as it is passed through, a rejection can come before the
// upstream, and every limit a request is refused at is listed.
func TestHelpTexts(t *testing.T) {
	reg := prometheus.NewRegistry()
	touchAll(metrics.New(reg))
	reg.MustRegister(metrics.LogLinesDropped(func() uint64 { return 0 }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name         string
		says, denies []string
	}{
		{"signpost_upstream_errors_unmatched_total", []string{"wrapped", "passed through", "no declared check"}, []string{"unchanged"}},
		{"signpost_rejections_total", []string{"a rule matched", "declared checks explained", "before the upstream", "once per field"}, []string{"rewritten"}},
		{"signpost_would_rewrite_total", []string{"Requests", "before the upstream", "once per request"}, nil},
		{"signpost_upstream_error_bodies_oversized_total", []string{"wrapped or passed through", "inflating"}, []string{"passed through unread"}},
		{"signpost_upstream_failures_total", []string{"could not be reached", "did not answer in time", "status below 100"}, nil},
		{"signpost_requests_limited_total", []string{"request_body (413)", "request_body_timeout (408)", "concurrency (503)"}, nil},
		{"signpost_requests_refused_total", []string{"malformed head", "not counted"}, nil},
		{"signpost_unrecovered_total", []string{"forgotten", "signpost_recovery_stopped_total"}, nil},
		{"signpost_buffer_budget_exhausted_total", []string{"wrapped unread", "forwarded unchecked", "copies"}, nil},
	} {
		i := slices.IndexFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == tt.name })
		if i < 0 {
			t.Errorf("%s is not registered", tt.name)
			continue
		}
		help := mfs[i].GetHelp()
		for _, s := range tt.says {
			if !strings.Contains(help, s) {
				t.Errorf("%s help %q does not say %q", tt.name, help, s)
			}
		}
		for _, s := range tt.denies {
			if strings.Contains(help, s) {
				t.Errorf("%s help %q says %q, which is not what it counts", tt.name, help, s)
			}
		}
	}
	// Every label is named: "by route and code".
	for _, mf := range mfs {
		if !strings.HasSuffix(mf.GetHelp(), ".") {
			t.Errorf("%s help %q is not a sentence", mf.GetName(), mf.GetHelp())
		}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			if !regexp.MustCompile(`\b` + l.GetName() + `\b`).MatchString(mf.GetHelp()) {
				t.Errorf("%s help %q does not name its label %s", mf.GetName(), mf.GetHelp(), l.GetName())
			}
		}
	}
}

// touchAll touches every collector of m once, so that each exports a
// series.
func touchAll(m *metrics.Metrics) {
	m.Rejected("r", "c", "f")
	m.Unmatched("r", 400)
	m.WouldRewrite("r", "c")
	m.Oversized("r")
	m.UpstreamFailed("r", "upstream_timeout")
	m.BodyTokens("r", 40)
	m.Uncounted()
	m.Recovered("r", "c", 2)
	m.Unrecovered("r", "c")
	m.RecoveryStopped("r", "c")
	m.RepeatStopped("r", "c")
	m.Duration("r", metrics.OutcomeSuccess, 0.01)
	m.Reloaded(true, 1)
	m.Limited("concurrency")
	m.Refused("missing_host")
	m.BufferBudget(64 << 20)
	m.BufferBudgetInUse(1)
	m.BufferBudgetExhausted()
}
