package learn

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// repeats counts, per caller and route, the identical failures in a row:
// the last failure's status, code and field faults, and how often it came
// since the caller's last success there, each within the window of the
// one before. Callers live in the same bounded LRU as the other trackers.
type repeats struct {
	window time.Duration
	now    func() time.Time

	live atomic.Int64 // streaks kept, for the success path to skip

	table *table // callers, shared with the other trackers
}

// streaks holds a caller's last failure, by route name.
type streaks = byRoute[streak]

// streak is a failure and how many times in a row it came.
type streak struct {
	failure string
	count   int
	last    time.Time
}

// newRepeats makes a repeat counter that keeps its callers in t, or in a
// table of its own if t is nil.
func newRepeats(cfg rules.Learn, t *table) *repeats {
	if cfg.Callers <= 0 {
		return nil
	}
	window := cfg.RecoveryWindow
	if window <= 0 {
		window = rules.DefaultRecoveryWindow
	}
	r := &repeats{window: window, now: time.Now}
	r.table = join(t, cfg.Callers, func(c *record) { r.live.Add(-int64(len(c.streaks))) })
	return r
}

// failed notes failure e of call on route and returns how many times in a
// row the caller has had it there, this time included.
func (r *repeats) failed(caller, route string, call uint64, e *rewrite.Error) int {
	f := failureOf(e, call)
	now := r.now()
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	t := &r.table.callers.touch(caller).streaks
	s := t.find(route)
	switch {
	case s == nil:
		s = t.add(route)
		r.live.Add(1)
	case s.failure != f || now.Sub(s.last) > r.window:
		s.count = 0
	}
	s.failure, s.last = f, now
	s.count++
	return s.count
}

// succeeded forgets the caller's failures on route.
func (r *repeats) succeeded(caller, route string) {
	if r.live.Load() == 0 {
		return
	}
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	c, ok := r.table.callers.get(caller)
	if !ok {
		return
	}
	if _, ok := c.streaks.remove(route); ok {
		r.live.Add(-1)
	}
}

// failureOf is what makes two failures the same: status and code, and
// each field at fault with the value it was sent; or, with no field at
// fault, the upstream's own message and the call, so that another call
// on the route, or another word from the upstream, is another failure. A
// field fault is the same whatever else the call changed: the value is
// what was refused.
func failureOf(e *rewrite.Error, call uint64) string {
	var b strings.Builder
	n := len(e.Code) + 24 + len(e.Field) + len(e.Received) + len(e.UpstreamMessage)
	for _, en := range e.Errors {
		n += len(en.Field) + len(en.Received) + 2
	}
	b.Grow(n) // one allocation
	b.WriteString(e.Code)
	b.WriteByte(' ')
	b.WriteString(itoa3(e.Status))
	if e.Field == "" && len(e.Errors) == 0 {
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(call, 16))
		b.WriteByte(0)
		b.WriteString(e.UpstreamMessage)
		return b.String()
	}
	fault := func(field string, received []byte) {
		b.WriteByte(0)
		b.WriteString(field)
		b.WriteByte('=')
		b.Write(received)
	}
	if e.Field != "" {
		fault(e.Field, e.Received)
	}
	for _, en := range e.Errors {
		fault(en.Field, en.Received)
	}
	for _, en := range e.Unlisted {
		fault(en.Field, nil)
	}
	return b.String()
}

// itoa3 renders a status, three digits from 100 to 999.
func itoa3(n int) string {
	if n < 100 || n > 999 {
		return "?"
	}
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}
