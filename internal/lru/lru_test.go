package lru

import (
	"fmt"
	"slices"
	"testing"
)

// order lists the keys, most recently used first.
func (l *LRU[K, V]) order() []K {
	var ks []K
	l.Each(func(k K, _ *V) { ks = append(ks, k) })
	return ks
}

// TestLRU touches, gets, peeks, forgets and sweeps entries, checking the
// recency order and what forgotten was told after each step.
func TestLRU(t *testing.T) {
	var forgotten []string
	l := New(3, func(k string, v *int) { forgotten = append(forgotten, fmt.Sprintf("%s=%d", k, *v)) })
	for i, s := range []struct {
		do            func()
		order, forgot []string
	}{
		{func() { *l.Touch("a") = 1; *l.Touch("b") = 2; *l.Add("c") = 3 }, []string{"c", "b", "a"}, nil},
		{func() { l.Touch("a") }, []string{"a", "c", "b"}, nil},
		{func() { *l.Touch("d") = 4 }, []string{"d", "a", "c"}, []string{"b=2"}},
		{func() { l.Peek("c") }, []string{"d", "a", "c"}, []string{"b=2"}}, // Peek does not use
		{func() { l.Get("c") }, []string{"c", "d", "a"}, []string{"b=2"}},
		{func() { GetBytes(l, []byte("d")) }, []string{"d", "c", "a"}, []string{"b=2"}},
		{func() { l.Sweep(func(k string, v *int) bool { return *v != 1 }) }, []string{"d", "c"}, []string{"b=2"}},
		{func() { *l.Touch("e") = 5 }, []string{"e", "d", "c"}, []string{"b=2"}}, // a's slot, reused
		{func() { *l.Touch("f") = 6 }, []string{"f", "e", "d"}, []string{"b=2", "c=3"}},
	} {
		s.do()
		if got := l.order(); !slices.Equal(got, s.order) {
			t.Fatalf("step %d: order %v; want %v", i, got, s.order)
		}
		if !slices.Equal(forgotten, s.forgot) {
			t.Fatalf("step %d: forgotten %v; want %v", i, forgotten, s.forgot)
		}
		if l.Len() != len(s.order) {
			t.Fatalf("step %d: len %d; want %d", i, l.Len(), len(s.order))
		}
	}
	if v, ok := l.Peek("e"); !ok || *v != 5 {
		t.Errorf("Peek(e) = %v, %v; want 5, true", v, ok)
	}
	if _, ok := l.Get("a"); ok {
		t.Errorf("Get(a) found an entry swept away")
	}
	if l.used != 3 {
		t.Errorf("%d slots handed out for 6 keys, at most 3 at once; want 3, each reused", l.used)
	}
}

// TestLRUTurnsOver passes many more keys than the bound through, across
// chunks: each keeps its value while there, and the slots stop growing at
// the bound.
func TestLRUTurnsOver(t *testing.T) {
	const max = 3*chunkSize + 7
	forgotten := 0
	l := New(max, func(k string, v *string) {
		if *v != k {
			t.Fatalf("forgotten %s holding %q", k, *v)
		}
		forgotten++
	})
	first := l.Touch("key-0")
	*first = "key-0"
	for i := 1; i < 10*max; i++ {
		k := fmt.Sprint("key-", i)
		*l.Touch(k) = k
		if i < max && *first != "key-0" {
			t.Fatalf("after %d keys the first one's value moved: %q", i, *first)
		}
	}
	if l.Len() != max || forgotten != 9*max || int(l.used) != max || len(l.chunks) != 4 {
		t.Errorf("len %d, forgotten %d, slots %d in %d chunks; want %d, %d, %d in 4", l.Len(), forgotten, l.used, len(l.chunks), max, 9*max, max)
	}
}

// list is a value that keeps its array for the next entry of its slot.
type list []string

func (l *list) Reuse() {
	clear(*l)
	*l = (*l)[:0]
}

// TestLRUReusesValues turns entries over past the bound: a new entry finds
// a Reuser value emptied, with its array kept and nothing of the entry
// before it, and costs no allocation; another value is zeroed.
func TestLRUReusesValues(t *testing.T) {
	l := New[string, list](2, nil)
	for _, k := range []string{"a", "b"} {
		*l.Touch(k) = append(*l.Touch(k), k)
	}
	v := l.Touch("c") // a's slot
	if len(*v) != 0 || cap(*v) == 0 {
		t.Fatalf("a new entry's value: len %d, cap %d; want 0 and a's array", len(*v), cap(*v))
	}
	keys := []string{"d", "e", "f", "g"}
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			*l.Touch(k) = append(*l.Touch(k), k)
		}
	}); n != 0 {
		t.Errorf("turning entries over allocated %v times; want 0", n)
	}
	z := New[string, int](1, nil)
	*z.Touch("a") = 7
	if v := z.Touch("b"); *v != 0 {
		t.Errorf("a new entry's int holds %d, the entry before's; want 0", *v)
	}
}
