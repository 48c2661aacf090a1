package rules

import (
	"errors"
	"strings"
	"testing"
)

// oneRoute is a rule file of one route, to which a test adds its fields.
const oneRoute = "routes:\n  r:\n    method: GET\n    path: /x\n"

// TestRFC3339UTCWantsTwoDigitHours: RFC 3339 writes the hour with two
// digits, as the tool schema's pattern does; time.Parse also takes one.
func TestRFC3339UTCWantsTwoDigitHours(t *testing.T) {
	f := &Field{Name: "at", In: InQuery, Format: FormatNamed("rfc3339-utc")}
	for in, want := range map[string]bool{"2026-03-11T09:14:02Z": true, "2026-03-11T9:14:02Z": false, "2026-03-11T09:14:2Z": false} {
		if got := f.Check(Text(in)); got != want {
			t.Errorf("rfc3339-utc on %q: %v, want %v", in, got, want)
		}
	}
}

// TestFileListTokensZeroListsNoSet: limits.list_tokens: 0 is a budget of
// nothing, not a limit left unset.
func TestFileListTokensZeroListsNoSet(t *testing.T) {
	cfg, err := Parse("x.yaml", []byte("limits: {list_tokens: 0}\n"+oneRoute+"    fields:\n      s: {enum: [open, closed]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f := cfg.Routes[0].Fields[0]; f.Listed || f.ListBudget != 0 {
		t.Errorf("limits.list_tokens: 0 gave a budget of %d, listed %v; want 0, not listed", f.ListBudget, f.Listed)
	}
}

// TestAliasesAlikeButForCase: of aliases that differ only in case, the one
// that sorts first wins on every load; and a field's own alias wins over a
// catalog's whichever case either is written in.
func TestAliasesAlikeButForCase(t *testing.T) {
	tests := []struct {
		name, fields, sent, want string
	}{
		{"two of the field's", "s: {enum: [a, b], aliases: {X: a, x: b}}", "x", "a"},
		{"the field's over the catalog's", "c: {catalog: testdata/catalogs/colours.yaml, aliases: {ROUGE: green}}", "rouge", "green"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 50 {
				cfg, err := Parse("rules.yaml", []byte(oneRoute+"    fields:\n      "+tt.fields+"\n"))
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := cfg.Routes[0].Fields[0].AliasFor(tt.sent); got != tt.want {
					t.Fatalf("AliasFor(%q) = %q, want %q", tt.sent, got, tt.want)
				}
			}
		})
	}
}

// TestRuleFileMistakesFound: mistakes that loaded and then misbehaved are
// now problems, each at its line.
func TestRuleFileMistakesFound(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"a catalog field's example not in the catalog",
			oneRoute + "    fields:\n      c: {catalog: testdata/catalogs/colours.yaml, example: ZZZZ}\n",
			`rules.yaml:6:61: routes.r.fields.c.example: example "ZZZZ" is not one of the catalog's permitted values`},
		{"spaces around a path variable's name",
			"routes:\n  r:\n    method: GET\n    path: '/tickets/{ ticket_id }'\n",
			`rules.yaml:4:11: routes.r.path: path "/tickets/{ ticket_id }": variable { ticket_id } has spaces around its name; write {ticket_id}`},
		{"an empty first document",
			"---\n---\n" + oneRoute,
			`rules.yaml:2:1: the rule file's first YAML document is empty, and a second starts here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("rules.yaml", []byte(tt.src))
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 || !strings.HasPrefix(ps[0].String(), tt.want) {
				t.Errorf("got %v\nwant a problem starting %q", err, tt.want)
			}
		})
	}
}

// TestRoutesToldApartByTheirPatterns: two templates that differ only in
// their variables' patterns route apart, and load; two that differ only
// in their variables' names route alike, and do not.
func TestRoutesToldApartByTheirPatterns(t *testing.T) {
	two := func(a, b string) string {
		return "routes:\n  first:\n    method: GET\n    path: '" + a + "'\n  second:\n    method: GET\n    path: '" + b + "'\n"
	}
	tests := []struct {
		a, b  string
		alike bool
	}{
		{"/events/{id:[0-9]+}", "/events/{slug:[a-z-]+}", false},
		{"/events/{id:[0-9]{3}}", "/events/{id:[0-9]{4}}", false},
		{"/events/{id}", "/events/{slug}", true},
		{"/events/{id}", "/events/{slug:[^/]+}", true},
		{"/events/{id:[0-9]+}", "/events/{n:[0-9]+}", true},
	}
	for _, tt := range tests {
		_, err := Parse("x.yaml", []byte(two(tt.a, tt.b)))
		if refused := err != nil && strings.Contains(err.Error(), "is already routed"); refused != tt.alike {
			t.Errorf("%s and %s: refused as routed alike %v, want %v (%v)", tt.a, tt.b, refused, tt.alike, err)
		}
	}
}
