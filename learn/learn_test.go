package learn

import (
	"hash/maphash"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

const learnRules = `
learn: {callers: 2, min_count: 2}
routes:
  create_address:
    method: POST
    path: /addresses
    fields:
      country: {enum: [GB, US, DE], hidden: [XK], aliases: {USA: US}}
      city:
`

func body(s string) *rewrite.Request { return &rewrite.Request{Body: []byte(s), Header: http.Header{}} }

func TestLearnerProposesAliases(t *testing.T) {
	cfg, err := rules.Parse("learn.yaml", []byte(learnRules))
	if err != nil {
		t.Fatal(err)
	}
	route := cfg.Routes[0]
	l := newLearner(cfg.Learn, slog.New(slog.DiscardHandler), nil)
	reject := func(caller, sent string) {
		l.rejected(id(caller), route, body(`{"country":"`+sent+`"}`), &rewrite.Error{Field: "country"})
	}
	succeed := func(caller, sent string) { l.succeeded(id(caller), route, body(`{"country":"`+sent+`"}`)) }

	reject("a", "UK")
	succeed("a", "GB") // UK -> GB, once
	reject("b", "UK")
	succeed("b", "GB") // UK -> GB, twice: proposed
	reject("c", "Deutschland")
	succeed("c", "DE") // once: below min_count
	reject("d", "gb")
	succeed("d", "GB") // a case slip, not an alias
	reject("e", "USA")
	succeed("e", "US")
	reject("f", "USA")
	succeed("f", "US") // declared already
	reject("g", "Kosovo")
	succeed("g", "XK") // hidden: never proposed
	reject("h", "Narnia")
	succeed("h", "Narnia") // rejected again would not succeed; same value is no alias
	succeed("i", "GB")     // a success with nothing pending

	// The batched shape counts too, and a success on the route clears it.
	l.rejected(id("j"), route, body(`{"country":"Deutschland"}`), &rewrite.Error{Errors: []rewrite.Entry{{Field: "city"}, {Field: "country"}}})
	succeed("j", "DE")
	succeed("j", "GB") // nothing pending any more

	got := l.proposals(cfg)
	want := []Proposal{
		{Pair{"create_address", "country", "Deutschland", "DE"}, 2},
		{Pair{"create_address", "country", "UK", "GB"}, 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("proposals = %+v\nwant %+v", got, want)
	}
	if n := l.waiting.Load(); n != 0 {
		t.Errorf("%d callers still waiting; want 0", n)
	}
}

func TestLearnerForgetsLeastRecentCallers(t *testing.T) {
	cfg, err := rules.Parse("learn.yaml", []byte(learnRules))
	if err != nil {
		t.Fatal(err)
	}
	route := cfg.Routes[0]
	l := newLearner(cfg.Learn, slog.New(slog.DiscardHandler), nil)
	for _, c := range []string{"a", "b", "c"} { // bound is 2: a is forgotten
		l.rejected(id(c), route, body(`{"country":"UK"}`), &rewrite.Error{Field: "country"})
	}
	if l.table.callers.Len() != 2 || l.waiting.Load() != 2 {
		t.Fatalf("%d callers, %d waiting; want 2 and 2", l.table.callers.Len(), l.waiting.Load())
	}
	for _, c := range []string{"a", "b", "c"} {
		l.succeeded(id(c), route, body(`{"country":"GB"}`))
	}
	if got := l.proposals(cfg); len(got) != 1 || got[0].Count != 2 {
		t.Errorf("proposals = %+v; want UK -> GB seen twice (caller a was forgotten)", got)
	}
}

// TestCallerID names callers: by the caller header's value when there is
// one, else by the address without its port; once per request.
func TestCallerID(t *testing.T) {
	s := New(rules.Learn{CallerHeader: "X-Session-Id", Callers: 1}, nil, nil)
	name := func(header, remote string) callerID {
		h := http.Header{}
		if header != "" {
			h.Set("X-Session-Id", header)
		}
		remote, field, _ := strings.Cut(remote, "|") // address|Name=value
		if k, v, ok := strings.Cut(field, "="); ok {
			h.Set(k, v)
		}
		c := &Caller{Header: h, Remote: remote}
		first := s.caller(c)
		if c.ByAddress() != (header == "") {
			t.Errorf("caller(%q, %q) named by its address: %v", header, remote, c.ByAddress())
		}
		h.Set("X-Session-Id", "changed")
		if again := s.caller(c); again != first {
			t.Errorf("caller(%q, %q) changed with the header after it was named", header, remote)
		}
		return first
	}
	for _, tc := range []struct {
		a, b [2]string // header, remote
		same bool
	}{
		{[2]string{"s-1", "127.0.0.1:5000"}, [2]string{"s-1", "10.0.0.9:7000"}, true},
		{[2]string{"s-1", "127.0.0.1:5000"}, [2]string{"s-2", "127.0.0.1:5000"}, false},
		{[2]string{"", "127.0.0.1:5000"}, [2]string{"", "127.0.0.1:6000"}, true},
		{[2]string{"", "127.0.0.1:5000"}, [2]string{"", "127.0.0.2:5000"}, false},
		{[2]string{"", "[::1]:5000"}, [2]string{"", "::1"}, true},
		{[2]string{"", "pipe"}, [2]string{"", "pipe"}, true},
		{[2]string{"127.0.0.1", "10.0.0.1:1"}, [2]string{"", "127.0.0.1:5000"}, false}, // a header is not an address
		// Behind one address, a credential or a client of its own is a caller of its own.
		{[2]string{"", "127.0.0.1:5000|Authorization=Bearer a"}, [2]string{"", "127.0.0.1:5000|Authorization=Bearer b"}, false},
		{[2]string{"", "127.0.0.1:5000|User-Agent=agent-a"}, [2]string{"", "127.0.0.1:6000|User-Agent=agent-b"}, false},
		{[2]string{"", "127.0.0.1:5000|User-Agent=agent-a"}, [2]string{"", "127.0.0.1:6000|User-Agent=agent-a"}, true},
		{[2]string{"s-1", "127.0.0.1:5000|User-Agent=agent-a"}, [2]string{"s-1", "127.0.0.1:6000|User-Agent=agent-b"}, true},
		// A long session id is compared whole, never dropped for the address.
		{[2]string{strings.Repeat("s", 300) + "1", "127.0.0.1:5000"}, [2]string{strings.Repeat("s", 300) + "2", "127.0.0.1:5000"}, false},
		{[2]string{strings.Repeat("s", 300), "127.0.0.1:5000"}, [2]string{strings.Repeat("s", 300), "10.0.0.9:7000"}, true},
	} {
		if same := name(tc.a[0], tc.a[1]) == name(tc.b[0], tc.b[1]); same != tc.same {
			t.Errorf("callers %q and %q named the same: %v; want %v", tc.a, tc.b, same, tc.same)
		}
	}
}

func TestLearningOff(t *testing.T) {
	if newLearner(rules.Learn{Callers: 0}, nil, nil) != nil {
		t.Error("callers: 0 must turn learning off")
	}
}

// idSeed and id name the callers of the trackers' tests.
var idSeed = maphash.MakeSeed()

func id(s string) callerID { return callerID(maphash.String(idSeed, s)) }
