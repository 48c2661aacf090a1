package learn

import (
	"cmp"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// learner finds aliases in traffic. When a caller has a value rejected for
// an enum field and then succeeds on the same route with another, permitted
// value for that field, the pair (rejected, accepted) is one observation
// that the first is another name for the second. Memory is bounded: callers
// in an LRU, pairs in a capped table.
type learner struct {
	cfg rules.Learn
	log *slog.Logger

	waiting atomic.Int64 // callers with rejections awaiting a success

	table *table // callers, shared with the other trackers

	mu    sync.Mutex // over pairs
	pairs map[Pair]int
}

// Pair is an observed alias: Rejected was sent for Field of Route and
// refused, then Accepted succeeded.
type Pair struct {
	Route, Field, Rejected, Accepted string
}

// CaseOnly reports whether the pair differs only in case: a slip that
// did_you_mean answers already, and no alias.
func (p Pair) CaseOnly() bool { return strings.EqualFold(p.Rejected, p.Accepted) }

// Proposal is a pair seen often enough to propose as an alias.
type Proposal struct {
	Pair
	Count int
}

const (
	maxPairs       = 4096
	maxAliasLength = 64
)

// newLearner makes a learner that keeps its callers in t, or in a table
// of its own if t is nil.
func newLearner(cfg rules.Learn, log *slog.Logger, t *table) *learner {
	if cfg.Callers <= 0 {
		return nil
	}
	l := &learner{cfg: cfg, log: log, pairs: map[Pair]int{}}
	l.table = join(t, cfg.Callers, func(r *record) {
		if len(r.pending) > 0 {
			l.waiting.Add(-1)
		}
	})
	return l
}

// rejected notes the values of the enum fields at fault in e.
func (l *learner) rejected(id callerID, route *rules.Route, req *rewrite.Request, e *rewrite.Error) {
	var buf [4]fieldValue
	noted := noteRejected(buf[:0], route, req, e.Field)
	for _, en := range e.Errors {
		noted = noteRejected(noted, route, req, en.Field)
	}
	if len(noted) == 0 {
		return
	}
	l.table.mu.Lock()
	defer l.table.mu.Unlock()
	p := &l.table.callers.Touch(id).pending
	if len(*p) == 0 {
		l.waiting.Add(1)
	}
	// The route's last rejection is replaced, in the list it was kept in.
	m := p.find(route.Name)
	if m == nil {
		m = p.add(route.Name)
	}
	*m = (*m)[:0]
	for _, n := range noted {
		if !slices.ContainsFunc(*m, func(k fieldValue) bool { return k.field == n.field }) {
			*m = append(*m, n)
		}
	}
}

// noteRejected appends the value sent for field name when it is a string
// its enum does not permit, a candidate alias. The value is copied: read
// from the request body, it would hold the whole body for as long as it
// is kept.
func noteRejected(noted []fieldValue, route *rules.Route, req *rewrite.Request, name string) []fieldValue {
	f := route.Field(name)
	if f == nil || f.Enum == nil {
		return noted
	}
	if v := req.Value(f); v.Type == gjson.String && v.Str != "" && len(v.Str) <= maxAliasLength && !f.Permits(v.Str) {
		return append(noted, fieldValue{f.Name, strings.Clone(v.Str)})
	}
	return noted
}

// succeeded turns the caller's pending rejections on route into
// observations where the successful request sent another permitted value.
func (l *learner) succeeded(id callerID, route *rules.Route, req *rewrite.Request) {
	if l.waiting.Load() == 0 {
		return // the common case: nobody is recovering
	}
	l.table.mu.Lock()
	r, ok := l.table.callers.Peek(id)
	if !ok {
		l.table.mu.Unlock()
		return
	}
	noted, ok := r.pending.remove(route.Name)
	if !ok {
		l.table.mu.Unlock()
		return
	}
	if len(r.pending) == 0 {
		l.waiting.Add(-1)
	}
	l.table.mu.Unlock()
	l.mu.Lock()
	var seen []Proposal
	for _, n := range noted {
		f := route.Field(n.field)
		v := req.Value(f)
		i := slices.Index(f.Enum, v.Str)
		if v.Type != gjson.String || i < 0 {
			continue
		}
		// The enum's own string, not the body's: the pair is kept.
		p := Pair{route.Name, n.field, n.value, f.Enum[i]}
		if p.CaseOnly() {
			continue
		}
		if _, known := l.pairs[p]; !known && len(l.pairs) >= maxPairs {
			continue
		}
		l.pairs[p]++
		seen = append(seen, Proposal{p, l.pairs[p]})
	}
	l.mu.Unlock()
	for _, s := range seen {
		l.log.Info("alias observed", "route", s.Route, "field", s.Field, "rejected", s.Rejected, "accepted", s.Accepted, "count", s.Count)
	}
}

// Proposals returns the pairs seen at least MinCount times whose rejected
// value is not an alias already, most frequent first.
func (l *learner) proposals(cfg *rules.Config) []Proposal {
	l.mu.Lock()
	out := make([]Proposal, 0, len(l.pairs))
	for p, n := range l.pairs {
		if n >= l.cfg.MinCount {
			out = append(out, Proposal{p, n})
		}
	}
	l.mu.Unlock()
	out = slices.DeleteFunc(out, func(p Proposal) bool { return Declared(cfg, p.Pair) })
	slices.SortFunc(out, func(a, b Proposal) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Route, b.Route), cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Rejected, b.Rejected), cmp.Compare(a.Accepted, b.Accepted))
	})
	return out
}

// Declared reports whether the rule file already maps p's rejected value,
// as an alias, for its field.
func Declared(cfg *rules.Config, p Pair) bool {
	if r := cfg.Route(p.Route); r != nil {
		if f := r.Field(p.Field); f != nil {
			_, ok := f.AliasFor(p.Rejected)
			return ok
		}
	}
	return false
}
