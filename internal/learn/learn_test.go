package learn

import (
	"log/slog"
	"net/http"
	"reflect"
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
		l.rejected(caller, route, body(`{"country":"`+sent+`"}`), &rewrite.Error{Field: "country"})
	}
	succeed := func(caller, sent string) { l.succeeded(caller, route, body(`{"country":"`+sent+`"}`)) }

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
	l.rejected("j", route, body(`{"country":"Deutschland"}`), &rewrite.Error{Errors: []rewrite.Entry{{Field: "city"}, {Field: "country"}}})
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
		l.rejected(c, route, body(`{"country":"UK"}`), &rewrite.Error{Field: "country"})
	}
	if l.table.callers.len() != 2 || l.waiting.Load() != 2 {
		t.Fatalf("%d callers, %d waiting; want 2 and 2", l.table.callers.len(), l.waiting.Load())
	}
	for _, c := range []string{"a", "b", "c"} {
		l.succeeded(c, route, body(`{"country":"GB"}`))
	}
	if got := l.proposals(cfg); len(got) != 1 || got[0].Count != 2 {
		t.Errorf("proposals = %+v; want UK -> GB seen twice (caller a was forgotten)", got)
	}
}

func TestCallerID(t *testing.T) {
	l := New(rules.Learn{CallerHeader: "X-Session-Id", Callers: 1}, nil, nil)
	for _, tc := range []struct {
		header, remote, want string
	}{
		{"s-1", "127.0.0.1:5000", "h:s-1"},
		{"", "127.0.0.1:5000", "a:127.0.0.1"},
		{"", "[::1]:5000", "a:::1"},
		{"", "pipe", "a:pipe"},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("X-Session-Id", tc.header)
		}
		c := &Caller{Header: h, Remote: tc.remote}
		if got := l.caller(c); got != tc.want {
			t.Errorf("caller(%q, %q) = %q; want %q", tc.header, tc.remote, got, tc.want)
		}
		h.Set("X-Session-Id", "changed")
		if got := l.caller(c); got != tc.want {
			t.Errorf("caller(%q, %q) the second time = %q; want the first answer, %q", tc.header, tc.remote, got, tc.want)
		}
	}
}

func TestLearningOff(t *testing.T) {
	if newLearner(rules.Learn{Callers: 0}, nil, nil) != nil {
		t.Error("callers: 0 must turn learning off")
	}
}
