package learn

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// TestSharedTable has the three trackers keep their callers in one table:
// a caller all three know counts once against the bound, and forgetting
// it forgets it in each.
func TestSharedTable(t *testing.T) {
	cfg, err := rules.Parse("learn.yaml", []byte(learnRules)) // callers: 2
	if err != nil {
		t.Fatal(err)
	}
	route := cfg.Routes[0]
	reg := prometheus.NewRegistry()
	s := New(cfg.Learn, metrics.New(reg), nil)
	defer s.Close()
	reject := func(caller string) {
		c := &Caller{Header: http.Header{"X-Session-Id": {caller}}}
		e := &rewrite.Error{Code: "invalid_country", Status: 400, Field: "country", Received: []byte(`"UK"`)}
		s.Repeated(c, route, 1, e)
		s.Rejected(c, route, body(`{"country":"UK"}`), e)
	}
	reject("a")
	reject("b")
	if n := s.learner.table.callers.Len(); n != 2 || s.learner.table != s.recovery.table || s.recovery.table != s.repeats.table {
		t.Fatalf("%d callers in the table (want 2), or the trackers keep tables apart", n)
	}
	if w, p, l := s.learner.waiting.Load(), s.recovery.pending.Load(), s.repeats.live.Load(); w != 2 || p != 2 || l != 2 {
		t.Fatalf("waiting %d, pending %d, live %d; want 2 each", w, p, l)
	}
	reject("c") // past the bound: a is forgotten by all three
	if w, p, l := s.learner.waiting.Load(), s.recovery.pending.Load(), s.repeats.live.Load(); w != 2 || p != 2 || l != 2 {
		t.Errorf("after a third caller: waiting %d, pending %d, live %d; want 2 each", w, p, l)
	}
	if c := metricstest.Counter(t, reg, "signpost_unrecovered_total", "route", route.Name, "code", "invalid_country"); c != 1 {
		t.Errorf("signpost_unrecovered_total = %v; want 1, the caller forgotten", c)
	}
	if _, ok := s.learner.table.callers.Peek(s.caller(&Caller{Header: http.Header{"X-Session-Id": {"a"}}})); ok {
		t.Error("caller a is still known past the bound")
	}
}

// TestCallersReuseSlots turns callers over past the bound, each with a
// route in each tracker's list: a new caller finds its slot's lists empty,
// with nothing of the caller before it, and, the lists' arrays kept, costs
// no allocation.
func TestCallersReuseSlots(t *testing.T) {
	tb := newTable(2)
	for _, id := range []callerID{1, 2} {
		*tb.callers.Touch(id).pending.add("update_ticket") = []fieldValue{{"status", "done"}}
	}
	r := tb.callers.Touch(3) // 1's slot
	if len(r.pending) != 0 || cap(r.pending) == 0 {
		t.Fatalf("a new caller's list: len %d, cap %d; want 0 and the caller before's array", len(r.pending), cap(r.pending))
	}
	if stale := r.pending[:1][0]; stale.route != "" || stale.v != nil {
		t.Fatalf("a new caller's array still holds %+v, the caller before", stale)
	}
	id := callerID(10)
	allocs := testing.AllocsPerRun(100, func() {
		tb.callers.Touch(id).pending.add("update_ticket")
		id++
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per new caller past the bound; want 0", allocs)
	}
}
