package learn

import (
	"sync"

	"github.com/signpost-proxy/signpost/internal/lru"
)

// table is the callers the trackers share: one bound, one lock, and one
// record per caller holding each tracker's part, so that a caller costs
// one entry however many trackers know it.
type table struct {
	mu      sync.Mutex
	callers *lru.LRU[callerID, record]
	forget  []func(*record) // each tracker's part in forgetting a caller
}

// callerID names a caller: a 64-bit hash of its caller header's value, or
// of its address, with a seed of the process's own (State.caller). Two
// callers taken for one by chance are one in 2^64 per pair.
type callerID uint64

// record is what the trackers know of one caller.
type record struct {
	pending pending // the learner's
	tracked tracked // recovery's
	streaks streaks // repeats'
}

// Reuse empties r for the next caller of its slot, keeping the arrays its
// lists hold (lru.Reuser).
func (r *record) Reuse() {
	r.pending.reuse()
	r.tracked.reuse()
	r.streaks.reuse()
}

func (r *record) empty() bool {
	return len(r.pending) == 0 && len(r.tracked) == 0 && len(r.streaks) == 0
}

// newTable makes a table of at most max callers.
func newTable(max int) *table {
	t := &table{}
	t.callers = lru.New(max, func(_ callerID, r *record) {
		for _, f := range t.forget {
			f(r)
		}
	})
	return t
}

// join returns t, or a table of max callers when t is nil, with forget
// added to what forgetting a caller does. t.mu is held when it runs.
func join(t *table, max int, forget func(*record)) *table {
	if t == nil {
		t = newTable(max)
	}
	t.forget = append(t.forget, forget)
	return t
}

// pending holds a caller's last rejected values, per route, by field.
type pending = byRoute[[]fieldValue]

// fieldValue is a value a caller sent for a field.
type fieldValue struct{ field, value string }

// tracked holds a caller's recoveries under way, by route name.
type tracked = byRoute[attempt]

// attempt is a recovery under way: the code of the rejection that began
// it, when, the calls made since, and whether the caller was told to stop
// repeating one.
type attempt struct {
	code    string
	since   int64 // Unix nanoseconds: a third of a time.Time, per caller
	calls   int
	stopped bool
}

// streaks holds a caller's last failure, by route name.
type streaks = byRoute[streak]

// streak is a failure and how many times in a row it came.
type streak struct {
	failure uint64 // failureOf's hash
	count   int
	last    int64 // Unix nanoseconds
}
