package learn

import (
	"hash/maphash"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

func TestRepeats(t *testing.T) {
	failed := &rewrite.Error{Status: 500, Code: "upstream_failed"}
	timeout := &rewrite.Error{Status: 504, Code: "upstream_timeout"}
	// sent stands for the fingerprint rewrite takes of a value sent.
	seed := maphash.MakeSeed()
	sent := func(v string) uint64 { return maphash.String(seed, v) | 1 }
	fault := func(received string) *rewrite.Error {
		return &rewrite.Error{Status: 422, Code: "invalid_status", Field: "status", Received: []byte(received), Sent: sent(received)}
	}
	// masked is a credential's fault: its echo hides the value sent.
	masked := func(value string) *rewrite.Error {
		return &rewrite.Error{Status: 401, Code: "invalid_token", Field: "token", Received: []byte(`"[masked]"`), Sent: sent(value)}
	}
	// unread is a fault of a value signpost did not read: absent, or in a
	// body it could not parse.
	unread := &rewrite.Error{Status: 400, Code: "invalid_limit", Field: "limit"}
	rejected := func(said string) *rewrite.Error {
		return &rewrite.Error{Status: 404, Code: "upstream_rejected", UpstreamMessage: said}
	}
	batch := func(received string) *rewrite.Error {
		return &rewrite.Error{Status: 422, Code: "invalid_fields", Errors: []rewrite.Entry{
			{Field: "status", Code: "invalid_status", Received: []byte(`"done"`), Sent: sent(`"done"`)},
			{Field: "priority", Code: "invalid_priority", Received: []byte(received), Sent: sent(received)}}}
	}
	type step struct {
		caller, route string
		e             *rewrite.Error // nil: a success
		wait          time.Duration  // before the step
		want          int
		call          uint64
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"identical failures count up", []step{
			{"a", "export", failed, 0, 1, 0}, {"a", "export", failed, 0, 2, 0}, {"a", "export", failed, 0, 3, 0}}},
		{"another failure starts over", []step{
			{"a", "export", failed, 0, 1, 0}, {"a", "export", failed, 0, 2, 0}, {"a", "export", timeout, 0, 1, 0}, {"a", "export", failed, 0, 1, 0}}},
		{"a success starts over", []step{
			{"a", "export", failed, 0, 1, 0}, {"a", "export", failed, 0, 2, 0}, {"a", "export", nil, 0, 0, 0}, {"a", "export", failed, 0, 1, 0}}},
		{"a success elsewhere does not", []step{
			{"a", "export", failed, 0, 1, 0}, {"a", "import", nil, 0, 0, 0}, {"b", "export", nil, 0, 0, 0}, {"a", "export", failed, 0, 2, 0}}},
		{"callers and routes apart", []step{
			{"a", "export", failed, 0, 1, 0}, {"b", "export", failed, 0, 1, 0}, {"a", "import", failed, 0, 1, 0}, {"a", "export", failed, 0, 2, 0}}},
		{"the window passing starts over", []step{
			{"a", "export", failed, 0, 1, 0}, {"a", "export", failed, 30 * time.Second, 2, 0}, {"a", "export", failed, 61 * time.Second, 1, 0}}},
		{"another call starts over", []step{
			{"a", "export", failed, 0, 1, 0}, {"a", "export", failed, 0, 2, 0}, {"a", "export", failed, 0, 1, 7}, {"a", "export", failed, 0, 2, 7}}},
		{"other words from the upstream start over", []step{
			{"a", "export", rejected("No such ticket"), 0, 1, 0}, {"a", "export", rejected("No such ticket"), 0, 2, 0}, {"a", "export", rejected("Gone"), 0, 1, 0}}},
		{"a field fault in another call is the same", []step{
			{"a", "update", fault(`"done"`), 0, 1, 1}, {"a", "update", fault(`"done"`), 0, 2, 2}}},
		{"a fault with no value read, in another call, is another", []step{
			{"a", "set", unread, 0, 1, 1}, {"a", "set", unread, 0, 1, 2}, {"a", "set", unread, 0, 2, 2}}},
		{"the same value sent again", []step{
			{"a", "update", fault(`"done"`), 0, 1, 0}, {"a", "update", fault(`"done"`), 0, 2, 0}, {"a", "update", fault(`"closed!"`), 0, 1, 0}}},
		{"two values sent that echo alike", []step{
			{"a", "read", masked("Bearer A"), 0, 1, 0}, {"a", "read", masked("Bearer B"), 0, 1, 0}, {"a", "read", masked("Bearer B"), 0, 2, 0}}},
		{"a batch with one value changed", []step{
			{"a", "update", batch(`"p9"`), 0, 1, 0}, {"a", "update", batch(`"p9"`), 0, 2, 0}, {"a", "update", batch(`"p8"`), 0, 1, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepeats(rules.Learn{Callers: 10, RecoveryWindow: time.Minute}, nil)
			now := time.Date(2026, 3, 11, 9, 0, 0, 0, time.UTC)
			r.now = func() time.Time { return now }
			for i, s := range tc.steps {
				now = now.Add(s.wait)
				if s.e == nil {
					r.succeeded(id(s.caller), s.route)
					continue
				}
				if got := r.failed(id(s.caller), s.route, s.call, s.e); got != s.want {
					t.Errorf("step %d (%s on %s): count %d, want %d", i, s.caller, s.route, got, s.want)
				}
			}
		})
	}
}

// TestRepeatsBounded keeps no more callers than the bound, and a
// forgotten caller starts over.
func TestRepeatsBounded(t *testing.T) {
	r := newRepeats(rules.Learn{Callers: 2}, nil)
	e := &rewrite.Error{Status: 500, Code: "upstream_failed"}
	r.failed(id("a"), "export", 0, e)
	r.failed(id("a"), "import", 0, e)
	r.failed(id("b"), "export", 0, e)
	r.failed(id("c"), "export", 0, e)
	if n, live := r.table.callers.Len(), r.live.Load(); n != 2 || live != 2 {
		t.Errorf("%d callers, %d streaks kept; want 2 and 2", n, live)
	}
	if got := r.failed(id("a"), "export", 0, e); got != 1 {
		t.Errorf("a forgotten caller's count: %d, want 1", got)
	}
	r.succeeded(id("a"), "export")
	r.succeeded(id("c"), "export")
	if live := r.live.Load(); live != 0 {
		t.Errorf("%d streaks kept after the successes; want 0", live)
	}
}
