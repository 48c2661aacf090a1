package observe

import (
	"slices"
	"testing"
)

// TestLRU adds, uses and peeks at entries, checking the recency order and
// what was forgotten after each step.
func TestLRU(t *testing.T) {
	var forgot []string
	l := newLRU(3, func(k string, v *int) { forgot = append(forgot, k) })
	order := func() []string {
		var ks []string
		l.each(func(k string, _ *int) { ks = append(ks, k) })
		return ks
	}
	for i, s := range []struct {
		do            func()
		order, forgot []string
	}{
		{func() { *l.add("a") = 1; *l.add("b") = 2; *l.add("c") = 3 }, []string{"c", "b", "a"}, nil},
		{func() { l.get("a") }, []string{"a", "c", "b"}, nil},
		{func() { l.peek("b") }, []string{"a", "c", "b"}, nil},
		{func() { *l.add("d") = 4 }, []string{"d", "a", "c"}, []string{"b"}},
		{func() { l.get("c") }, []string{"c", "d", "a"}, []string{"b"}},
		{func() { l.add("e") }, []string{"e", "c", "d"}, []string{"b", "a"}},
	} {
		s.do()
		if got := order(); !slices.Equal(got, s.order) || !slices.Equal(forgot, s.forgot) {
			t.Fatalf("step %d: order %v, forgot %v; want %v, %v", i, got, forgot, s.order, s.forgot)
		}
	}
	if v, ok := l.get("e"); !ok || *v != 0 {
		t.Errorf("get(e) = %v, %v; want a zero value reused from a, true", v, ok)
	}
	if v, ok := l.peek("d"); !ok || *v != 4 {
		t.Errorf("peek(d) = %v, %v; want 4, true", v, ok)
	}
	if _, ok := l.get("b"); ok || l.len() != 3 {
		t.Errorf("get(b) found a forgotten entry, or len %d != 3", l.len())
	}
}
