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
		if out := rewrite.ForMatch(rt, rule, up, &r, cfg.Limits).JSON(); len(out) == 0 {
			b.Fatal("empty body")
		}
	}
}
