// Package learn holds what signpost learns of its callers across requests
// and reloads: the aliases their corrections reveal, how they recover from
// rejections, their identical failures in a row (repeat detection, which
// tells a caller in a loop to stop), and the tokens of the bodies they
// were sent. A caller is its session header, else its address with its
// credential and client; the trackers share one bounded table of callers.
package learn

import (
	"hash/maphash"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"sync"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// State is what outlives a reload of the rules: the aliases learned so far,
// recoveries and repeats under way, and the worker counting body tokens.
// proxy.NewShared makes one, which every Proxy built after it uses.
type State struct {
	callerHeader string // canonical, to index the header map directly
	seed         maphash.Seed
	learner      *learner
	recovery     *recovery
	repeats      *repeats
	tokens       *tokenCounter
	metrics      *metrics.Metrics
	closing      sync.Once
}

// New makes the state for the caller tracking cfg describes. m may be nil
// (nothing is counted) and so may log.
func New(cfg rules.Learn, m *metrics.Metrics, log *slog.Logger) *State {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var t *table // one for the three trackers
	if cfg.Callers > 0 {
		t = newTable(cfg.Callers)
	}
	s := &State{callerHeader: textproto.CanonicalMIMEHeaderKey(cfg.CallerHeader), seed: maphash.MakeSeed(), metrics: m, learner: newLearner(cfg, log, t), repeats: newRepeats(cfg, t)}
	if m != nil {
		s.tokens = newTokenCounter(m)
		s.recovery = newRecovery(cfg, m, t)
	}
	return s
}

// Close stops the state's background work, counting what is queued. It
// may be called more than once.
func (s *State) Close() {
	s.closing.Do(func() {
		if s.tokens != nil {
			s.tokens.close()
		}
		if s.recovery != nil {
			s.recovery.close()
		}
	})
}

// Caller is who sent a request: its header, read for the caller header
// (learn.caller_header), and the client's address. Its id is worked out
// once, by the first State method that needs it.
type Caller struct {
	Header http.Header
	Remote string
	id     callerID
	named  bool
	// byAddress says no caller header named it: the address did.
	byAddress bool
}

// ByAddress reports whether c, once a State named it, was named by the
// client's address, with its credential and User-Agent, for want of a
// caller header: agents behind one address with the same of both are one
// caller then, and what is said of its calls must be said of the address.
func (c *Caller) ByAddress() bool { return c.byAddress }

// addressFields tell apart the callers behind one address, where the
// request allows: a credential of its own, a client of its own.
var addressFields = [...]string{"Authorization", "X-Api-Key", "User-Agent"}

// Rejected notes a rejection e of a request to route, sent by c, for alias
// learning and recovery tracking.
func (s *State) Rejected(c *Caller, route *rules.Route, req *rewrite.Request, e *rewrite.Error) {
	if s.learner == nil && s.recovery == nil {
		return
	}
	caller := s.caller(c)
	if s.learner != nil {
		s.learner.rejected(caller, route, req, e)
	}
	if s.recovery != nil {
		s.recovery.rejected(caller, route.Name, e.Code)
	}
}

// Succeeded notes a success on route, which ends a recovery and may
// confirm an alias.
func (s *State) Succeeded(c *Caller, route *rules.Route, req *rewrite.Request) {
	if (s.learner == nil || s.learner.waiting.Load() == 0) && (s.recovery == nil || s.recovery.pending.Load() == 0) &&
		(s.repeats == nil || s.repeats.live.Load() == 0) {
		return
	}
	caller := s.caller(c)
	if s.learner != nil {
		s.learner.succeeded(caller, route, req)
	}
	if s.recovery != nil {
		s.recovery.succeeded(caller, route.Name)
	}
	if s.repeats != nil {
		s.repeats.succeeded(caller, route.Name)
	}
}

// Repeated notes the failure e about to be answered on route to c, and
// returns how many times in a row the caller
// has had that same failure there, this time included, each within the
// recovery window of the one before; a success on the route starts the
// count over. The same failure has the same status and code, and the same
// fields at fault with the same values; or, with no field at fault, the
// same call (call identifies it: its path, query and body, say) and the
// same words from the upstream. It returns 0 when callers are not
// tracked.
func (s *State) Repeated(c *Caller, route *rules.Route, call uint64, e *rewrite.Error) int {
	if s.repeats == nil || route == nil {
		return 0
	}
	return s.repeats.failed(s.caller(c), route.Name, call, e)
}

// Called notes an answer on route that was neither a success nor a
// rejection: one more call in a recovery under way.
func (s *State) Called(c *Caller, route *rules.Route) {
	if r := s.recovery; r != nil && route != nil && r.pending.Load() > 0 {
		r.called(s.caller(c), route.Name)
	}
}

// Stopped notes that the caller was told to stop repeating a call on
// route that failed with code: counted, and, unless a success follows
// within the recovery window, its recovery ends as a loop stopped.
func (s *State) Stopped(c *Caller, route *rules.Route, code string) {
	if s.metrics != nil {
		s.metrics.RepeatStopped(route.Name, code)
	}
	if s.recovery != nil {
		s.recovery.stopped(s.caller(c), route.Name, code)
	}
}

// CountTokens has the tokens of an error body written for route counted,
// off the request path; nothing when metrics are off.
func (s *State) CountTokens(route string, body []byte) {
	if s.tokens != nil {
		s.tokens.observe(s.metrics, route, body)
	}
}

// Proposals returns the aliases learned so far that cfg does not declare
// yet, most frequent first, and whether aliases are learned at all.
func (s *State) Proposals(cfg *rules.Config) ([]Proposal, bool) {
	if s == nil || s.learner == nil {
		return []Proposal{}, false
	}
	return s.learner.proposals(cfg), true
}

// caller identifies who sent a request: the configured header's first
// value, of any length, hashed whole, else the client address with the
// request's credential and User-Agent. The hash is keyed with a seed of
// the process's own. Alias learning, recovery tracking and repeats share
// it.
func (s *State) caller(c *Caller) callerID {
	if c.named {
		return c.id
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	if v := httpwire.FirstValue(c.Header[s.callerHeader]); s.callerHeader != "" && v != "" {
		h.WriteByte('h')
		h.WriteString(v)
	} else {
		host, _, err := net.SplitHostPort(c.Remote)
		if err != nil {
			host = c.Remote
		}
		h.WriteByte('a')
		h.WriteString(host)
		for _, k := range addressFields {
			h.WriteByte(0)
			h.WriteString(httpwire.FirstValue(c.Header[k]))
		}
		c.byAddress = true
	}
	c.id, c.named = callerID(h.Sum64()), true
	return c.id
}

// CallerOf returns the hash that names c's sender, as the trackers name it:
// for records kept apart from the State, such as observe mode's.
func (s *State) CallerOf(c *Caller) uint64 { return uint64(s.caller(c)) }
