package rewrite_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// BenchmarkMatchAndRewrite measures the error path's core: matching one
// upstream error against a route's rules and rendering the actionable body.
func BenchmarkMatchAndRewrite(b *testing.B) {
	cfg := loadRules(b)
	rt, req := route(b, cfg, "PATCH", "/tickets/T-8841")
	req.Body = []byte(`{"status":"OPEN","note":"customer asked twice"}`)
	upstream := []byte(`{"error":"Invalid status"}`)
	b.ReportAllocs()
	for b.Loop() {
		up := &rewrite.Upstream{Status: 400, Body: &rules.Body{Raw: upstream}}
		r := *req // a fresh request view, as each exchange has its own
		rule := rt.MatchError(400, up.Body)
		if rule == nil {
			b.Fatal("no match")
		}
		if out := new(rewrite.Error).SetMatch(rt, rule, up, &r, cfg.Limits).JSON(); len(out) == 0 {
			b.Fatal("empty body")
		}
	}
}

// BenchmarkBatchOfThree measures a request answered before the upstream:
// validating every declared field of a body with three faults and
// rendering the one batched body.
func BenchmarkBatchOfThree(b *testing.B) {
	cfg := loadRules(b)
	rt, req := route(b, cfg, "POST", "/tickets")
	req.Body = []byte(`{"title":"Printer on fire","status":"OPEN","priority":"high","due_at":"next Friday","customer_id":"C-1042"}`)
	b.ReportAllocs()
	for b.Loop() {
		r := *req
		e := rewrite.Before(rt, &r, cfg.Limits)
		if e == nil || len(e.Errors) != 3 {
			b.Fatalf("got %+v; want three faults", e)
		}
		if out := e.JSON(); len(out) == 0 {
			b.Fatal("empty body")
		}
	}
}
