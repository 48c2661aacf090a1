package proxy

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// recovery measures how agents recover from rejections: per caller and
// route, after a rejection, the calls made up to the next success, and the
// rejections no success follows within a window. Callers live in a bounded
// LRU; a sweeper counts the windows that lapse.
type recovery struct {
	window  time.Duration
	max     int
	metrics *metrics.Metrics
	now     func() time.Time

	pending atomic.Int64 // recoveries under way

	mu      sync.Mutex
	callers map[string]*list.Element // of *tracked
	order   *list.List               // most recently seen first

	stop chan struct{}
	done sync.WaitGroup
}

type tracked struct {
	id     string
	routes map[string]*attempt // by route name
}

// attempt is a recovery under way: the code of the rejection that began
// it, when, and the calls made since.
type attempt struct {
	code  string
	since time.Time
	calls int
}

func newRecovery(cfg rules.Learn, m *metrics.Metrics) *recovery {
	if cfg.Callers <= 0 {
		return nil
	}
	window := cfg.RecoveryWindow
	if window <= 0 {
		window = rules.DefaultRecoveryWindow
	}
	r := &recovery{window: window, max: cfg.Callers, metrics: m, now: time.Now,
		callers: map[string]*list.Element{}, order: list.New(), stop: make(chan struct{})}
	r.done.Add(1)
	go r.sweep(min(window/4, time.Minute))
	return r
}

// rejected notes a rejection on route: the start of a recovery, or one
// more call in one under way.
func (r *recovery) rejected(caller, route, code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.touch(caller)
	if a := t.routes[route]; a != nil {
		a.calls++
		return
	}
	t.routes[route] = &attempt{code: code, since: r.now()}
	r.pending.Add(1)
}

// called notes a call on route that neither succeeded nor was rejected by
// a rule (a wrapped or failed answer): one more call in a recovery.
func (r *recovery) called(caller, route string) {
	if r.pending.Load() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.callers[caller]; ok {
		if a := el.Value.(*tracked).routes[route]; a != nil {
			a.calls++
		}
	}
}

// succeeded ends the caller's recovery on route, if one is under way.
func (r *recovery) succeeded(caller, route string) {
	if r.pending.Load() == 0 {
		return // the common case: nobody is recovering
	}
	r.mu.Lock()
	el, ok := r.callers[caller]
	if !ok {
		r.mu.Unlock()
		return
	}
	t := el.Value.(*tracked)
	a := t.routes[route]
	if a == nil {
		r.mu.Unlock()
		return
	}
	delete(t.routes, route)
	r.pending.Add(-1)
	r.mu.Unlock()
	if r.now().Sub(a.since) > r.window {
		r.metrics.Unrecovered(route, a.code)
		return
	}
	r.metrics.Recovered(route, a.code, a.calls+1)
}

// touch returns the caller's entry, most recently seen, evicting the least
// recently seen caller beyond the bound; its recoveries count as lost.
// r.mu must be held.
func (r *recovery) touch(caller string) *tracked {
	if el, ok := r.callers[caller]; ok {
		r.order.MoveToFront(el)
		return el.Value.(*tracked)
	}
	t := &tracked{id: caller, routes: map[string]*attempt{}}
	r.callers[caller] = r.order.PushFront(t)
	if r.order.Len() > r.max {
		old := r.order.Back()
		r.forget(old.Value.(*tracked))
		r.order.Remove(old)
	}
	return t
}

func (r *recovery) forget(t *tracked) {
	for route, a := range t.routes {
		r.metrics.Unrecovered(route, a.code)
		r.pending.Add(-1)
	}
	delete(r.callers, t.id)
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
	cutoff := r.now().Add(-r.window)
	r.mu.Lock()
	defer r.mu.Unlock()
	for el := r.order.Back(); el != nil; {
		prev := el.Prev()
		t := el.Value.(*tracked)
		for route, a := range t.routes {
			if a.since.Before(cutoff) {
				r.metrics.Unrecovered(route, a.code)
				delete(t.routes, route)
				r.pending.Add(-1)
			}
		}
		if len(t.routes) == 0 {
			delete(r.callers, t.id)
			r.order.Remove(el)
		}
		el = prev
	}
}

func (r *recovery) close() {
	close(r.stop)
	r.done.Wait()
}

// tracked notes a rejection e of the exchange for alias learning and
// recovery tracking.
func (p *Proxy) tracked(ex *exchange, e *rewrite.Error) {
	s := p.state
	if s.learner == nil && s.recovery == nil {
		return
	}
	caller := s.caller(ex.req.Header, ex.remote)
	if s.learner != nil {
		s.learner.rejected(caller, ex.route, &ex.req, e)
	}
	if s.recovery != nil {
		s.recovery.rejected(caller, ex.route.Name, e.Code)
	}
}

// succeeded notes a success of the exchange, which ends a recovery and may
// confirm an alias.
func (p *Proxy) succeeded(ex *exchange) {
	s := p.state
	if (s.learner == nil || s.learner.waiting.Load() == 0) && (s.recovery == nil || s.recovery.pending.Load() == 0) {
		return
	}
	caller := s.caller(ex.req.Header, ex.remote)
	if s.learner != nil {
		s.learner.succeeded(caller, ex.route, &ex.req)
	}
	if s.recovery != nil {
		s.recovery.succeeded(caller, ex.route.Name)
	}
}

// calledOn notes an answer that was neither a success nor a rejection.
func (p *Proxy) calledOn(ex *exchange) {
	if r := p.state.recovery; r != nil && ex.route != nil && r.pending.Load() > 0 {
		r.called(p.state.caller(ex.req.Header, ex.remote), ex.route.Name)
	}
}
