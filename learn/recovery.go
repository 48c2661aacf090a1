package learn

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// recovery measures how agents recover from rejections: per caller and
// route, after a rejection, the calls made up to the next success, and the
// rejections no success follows within a window. Callers live in a bounded
// LRU; a sweeper counts the windows that lapse.
type recovery struct {
	window  time.Duration
	metrics *metrics.Metrics
	now     func() time.Time

	pending atomic.Int64 // recoveries under way

	table *table // callers, shared with the other trackers

	stop chan struct{}
	done sync.WaitGroup
}

// newRecovery makes a recovery tracker that keeps its callers in t, or in
// a table of its own if t is nil.
func newRecovery(cfg rules.Learn, m *metrics.Metrics, t *table) *recovery {
	if cfg.Callers <= 0 {
		return nil
	}
	window := cfg.RecoveryWindow
	if window <= 0 {
		window = rules.DefaultRecoveryWindow
	}
	r := &recovery{window: window, metrics: m, now: time.Now, stop: make(chan struct{})}
	r.table = join(t, cfg.Callers, func(c *record) { r.lost(c.tracked) })
	r.done.Add(1)
	go r.sweep(min(window/4, time.Minute))
	return r
}

// rejected notes a rejection on route: the start of a recovery, or one
// more call in one under way.
func (r *recovery) rejected(caller callerID, route, code string) {
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	t := &r.table.callers.Touch(caller).tracked
	if a := t.find(route); a != nil {
		a.calls++
		return
	}
	*t.add(route) = attempt{code: code, since: r.now().UnixNano()}
	r.pending.Add(1)
}

// called notes a call on route that neither succeeded nor was rejected by
// a rule (a wrapped or failed answer): one more call in a recovery.
func (r *recovery) called(caller callerID, route string) {
	if r.pending.Load() == 0 {
		return
	}
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	if c, ok := r.table.callers.Peek(caller); ok {
		if a := c.tracked.find(route); a != nil {
			a.calls++
		}
	}
}

// succeeded ends the caller's recovery on route, if one is under way.
func (r *recovery) succeeded(caller callerID, route string) {
	if r.pending.Load() == 0 {
		return // the common case: nobody is recovering
	}
	r.table.mu.Lock()
	c, ok := r.table.callers.Peek(caller)
	if !ok {
		r.table.mu.Unlock()
		return
	}
	a, ok := c.tracked.remove(route)
	if !ok {
		r.table.mu.Unlock()
		return
	}
	r.pending.Add(-1)
	r.table.mu.Unlock()
	if r.now().UnixNano()-a.since > int64(r.window) {
		r.unrecovered(route, a)
		return
	}
	r.metrics.Recovered(route, a.code, a.calls+1)
}

// stopped notes that the caller was told to stop repeating a call on
// route that failed with code: the recovery under way, or one begun now,
// ends as a loop stopped unless a success follows within the window.
func (r *recovery) stopped(caller callerID, route, code string) {
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	t := &r.table.callers.Touch(caller).tracked
	a := t.find(route)
	if a == nil {
		a = t.add(route)
		*a = attempt{code: code, since: r.now().UnixNano()}
		r.pending.Add(1)
	}
	a.stopped = true
}

// lost counts a forgotten caller's recoveries under way as lost. The
// table's lock is held.
func (r *recovery) lost(t tracked) {
	for _, a := range t {
		r.unrecovered(a.route, a.v)
		r.pending.Add(-1)
	}
}

// unrecovered counts a recovery that ended without a success: a loop
// stopped, or one that never recovered.
func (r *recovery) unrecovered(route string, a attempt) {
	if a.stopped {
		r.metrics.RecoveryStopped(route, a.code)
		return
	}
	r.metrics.Unrecovered(route, a.code)
}

// sweep counts the recoveries whose window lapsed, every interval.
func (r *recovery) sweep(interval time.Duration) {
	defer r.done.Done()
	tick := time.NewTicker(max(interval, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			r.expire()
		}
	}
}

func (r *recovery) expire() {
	cutoff := r.now().Add(-r.window).UnixNano()
	r.table.mu.Lock()
	defer r.table.mu.Unlock()
	r.table.callers.Sweep(func(_ callerID, c *record) bool {
		c.tracked = slices.DeleteFunc(c.tracked, func(a routed[attempt]) bool {
			if a.v.since >= cutoff {
				return false
			}
			r.unrecovered(a.route, a.v)
			r.pending.Add(-1)
			return true
		})
		return !c.empty()
	})
}

func (r *recovery) close() {
	close(r.stop)
	r.done.Wait()
}
