package learn

import (
	"hash/maphash"
	"strconv"
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
	seed  maphash.Seed
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
	r := &repeats{window: window, now: time.Now, seed: maphash.MakeSeed()}
	r.table = join(t, cfg.Callers, func(c *record) { r.live.Add(-int64(len(c.streaks))) })
	return r
}

// failed notes failure e of call on route and returns how many times in a
// row the caller has had it there, this time included.
func (r *repeats) failed(caller callerID, route string, call uint64, e *rewrite.Error) int {
	f := r.failureOf(e, call)
	now := r.now().UnixNano()
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	t := &r.table.callers.Touch(caller).streaks
	s := t.find(route)
	switch {
	case s == nil:
		s = t.add(route)
		r.live.Add(1)
	case s.failure != f || now-s.last > int64(r.window):
		s.count = 0
	}
	s.failure, s.last = f, now
	s.count++
	return s.count
}

// succeeded forgets the caller's failures on route.
func (r *repeats) succeeded(caller callerID, route string) {
	if r.live.Load() == 0 {
		return
	}
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	c, ok := r.table.callers.Peek(caller)
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
// what was refused; but a fault with no value read (absent, or in a body
// signpost could not read) is the same only with the same call, since the
// value may be what the caller changed. It is kept as a 64-bit hash, with
// a seed of the process's own: two failures taken for one by chance are
// one in 2^64.
func (r *repeats) failureOf(e *rewrite.Error, call uint64) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(e.Code)
	h.WriteByte(0)
	h.WriteString(itoa3(e.Status))
	if e.Field == "" && len(e.Errors) == 0 {
		h.WriteByte(0)
		h.WriteString(strconv.FormatUint(call, 16))
		h.WriteByte(0)
		h.WriteString(e.UpstreamMessage)
		return h.Sum64()
	}
	// A value is known by its fingerprint, taken before any mask or cut:
	// two credentials, or two long values alike in their first 64
	// characters, echo alike but were not the same.
	unread := false
	fault := func(field string, sent uint64) {
		h.WriteByte(0)
		h.WriteString(field)
		h.WriteByte('=')
		h.WriteString(strconv.FormatUint(sent, 16))
		unread = unread || sent == 0
	}
	if e.Field != "" {
		fault(e.Field, e.Sent)
	}
	for _, en := range e.Errors {
		fault(en.Field, en.Sent)
	}
	for _, en := range e.Unlisted {
		fault(en.Field, en.Sent)
	}
	if unread {
		h.WriteByte(0)
		h.WriteString(strconv.FormatUint(call, 16))
	}
	return h.Sum64()
}

// itoa3 renders a status, three digits from 100 to 999.
func itoa3(n int) string {
	if n < 100 || n > 999 {
		return "?"
	}
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}
