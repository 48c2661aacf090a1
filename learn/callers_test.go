package learn

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// order lists the callers known, most recently seen first.
func (c *callers[K, T]) order() []K {
	var ids []K
	for i := c.head; i != none; i = c.at(i).next {
		ids = append(ids, c.at(i).id)
	}
	return ids
}

// TestCallers touches, evicts and sweeps callers, checking the recency
// order and what forgotten was told after each step.
func TestCallers(t *testing.T) {
	var forgotten []string
	c := newCallers(3, func(id string, v *int) { forgotten = append(forgotten, fmt.Sprintf("%s=%d", id, *v)) })
	steps := []struct {
		do            func()
		order, forgot []string
	}{
		{func() { *c.touch("a") = 1; *c.touch("b") = 2; *c.touch("c") = 3 }, []string{"c", "b", "a"}, nil},
		{func() { c.touch("a") }, []string{"a", "c", "b"}, nil},
		{func() { *c.touch("d") = 4 }, []string{"d", "a", "c"}, []string{"b=2"}},
		{func() { c.get("c") }, []string{"d", "a", "c"}, []string{"b=2"}}, // get does not touch
		{func() { c.sweep(func(id string, v *int) bool { return *v != 1 }) }, []string{"d", "c"}, []string{"b=2"}},
		{func() { *c.touch("e") = 5 }, []string{"e", "d", "c"}, []string{"b=2"}}, // a's slot, reused
		{func() { *c.touch("f") = 6 }, []string{"f", "e", "d"}, []string{"b=2", "c=3"}},
	}
	for i, s := range steps {
		s.do()
		if got := c.order(); !slices.Equal(got, s.order) {
			t.Fatalf("step %d: order %v; want %v", i, got, s.order)
		}
		if !slices.Equal(forgotten, s.forgot) {
			t.Fatalf("step %d: forgotten %v; want %v", i, forgotten, s.forgot)
		}
		if c.len() != len(s.order) {
			t.Fatalf("step %d: len %d; want %d", i, c.len(), len(s.order))
		}
	}
	if v, ok := c.get("e"); !ok || *v != 5 {
		t.Errorf("get(e) = %v, %v; want 5, true", v, ok)
	}
	if _, ok := c.get("a"); ok {
		t.Errorf("get(a) found a caller swept away")
	}
	if c.used != 3 {
		t.Errorf("%d slots handed out for 6 callers, at most 3 at once; want 3, each reused", c.used)
	}
}

// TestCallersTurnOver passes many more callers than the bound through,
// across chunks: each keeps its value while known, and the slots stop
// growing at the bound.
func TestCallersTurnOver(t *testing.T) {
	const max = 3*chunkSize + 7
	forgotten := 0
	c := newCallers(max, func(id string, v *string) {
		if *v != id {
			t.Fatalf("forgotten %s holding %q", id, *v)
		}
		forgotten++
	})
	first := c.touch("caller-0")
	*first = "caller-0"
	for i := 1; i < 10*max; i++ {
		id := fmt.Sprint("caller-", i)
		*c.touch(id) = id
		if i < max && *first != "caller-0" {
			t.Fatalf("after %d callers the first one's value moved: %q", i, *first)
		}
	}
	if c.len() != max || forgotten != 9*max || int(c.used) != max || len(c.chunks) != 4 {
		t.Errorf("len %d, forgotten %d, slots %d in %d chunks; want %d, %d, %d in 4", c.len(), forgotten, c.used, len(c.chunks), max, 9*max, max)
	}
}

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
	if n := s.learner.table.callers.len(); n != 2 || s.learner.table != s.recovery.table || s.recovery.table != s.repeats.table {
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
	if _, ok := s.learner.table.callers.get(s.caller(&Caller{Header: http.Header{"X-Session-Id": {"a"}}})); ok {
		t.Error("caller a is still known past the bound")
	}
}

// TestCallersReuseSlots turns callers over past the bound, each with a
// route: a new caller finds its slot's list empty, with nothing of the
// caller before it, and, the lists' arrays kept, costs no allocation.
func TestCallersReuseSlots(t *testing.T) {
	c := newCallers(2, func(string, *byRoute[string]) {})
	for _, id := range []string{"a", "b"} {
		*c.touch(id).add("update_ticket") = id
	}
	b := c.touch("c") // a's slot
	if len(*b) != 0 || cap(*b) == 0 {
		t.Fatalf("a new caller's list: len %d, cap %d; want 0 and a's array", len(*b), cap(*b))
	}
	if stale := (*b)[:1][0]; stale != (routed[string]{}) {
		t.Fatalf("a new caller's array still holds %+v, the caller before", stale)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprint("caller-", i)
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		*c.touch(ids[i%len(ids)]).add("update_ticket") = "v"
		i++
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per new caller past the bound; want 0", allocs)
	}
}
