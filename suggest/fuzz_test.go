package suggest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/suggest"
)

// FuzzAppendSuggestions builds a Set from fuzzed values and aliases (one
// value a line; aliases as alias=index lines naming a value) and asks it
// about a fuzzed received value. Suggestions must come only from the
// values, at most Max and without repeats, none for a value permitted as
// sent; AppendSuggestions must keep what dst held and agree with Suggest;
// and asking twice must answer the same.
func FuzzAppendSuggestions(f *testing.F) {
	for _, s := range []struct{ values, aliases, received string }{
		{"open\npending\nclosed", "OPENED=0\ndone=2", "OPEN"},
		{"open\npending\nclosed", "", "opne"},
		{"GB\nUS\nDE", "UK=0\nUSA=1\nDeutschland=2", "uk"},
		{"Zürich\nZurich\nZÜRICH", "", "zurich"},
		{"a\nb\nc", "", "\xff"},
		{"", "", ""},
		{"x\nx\nX", "x=0\nX=1", "x"},
		{strings.Repeat("ü", 70) + "\nabc", "", strings.Repeat("ü", 69)},
		{"\u202eopen\nopen\u200b", "", "open"},
	} {
		f.Add(s.values, s.aliases, s.received)
	}
	f.Fuzz(func(t *testing.T, valueLines, aliasLines, received string) {
		values := strings.Split(valueLines, "\n")
		if len(values) > 64 {
			values = values[:64]
		}
		aliases := map[string]string{}
		for l := range strings.SplitSeq(aliasLines, "\n") {
			alias, i, ok := strings.Cut(l, "=")
			if !ok || len(i) != 1 {
				continue
			}
			aliases[alias] = values[int(i[0])%len(values)]
		}
		set := suggest.NewSet(values, aliases)
		got := set.Suggest(received)
		if len(got) > suggest.Max {
			t.Fatalf("Suggest(%q) = %q: more than %d", received, got, suggest.Max)
		}
		for i, s := range got {
			if !slices.Contains(values, s) {
				t.Fatalf("Suggest(%q) = %q: %q is not a permitted value", received, got, s)
			}
			if slices.Contains(got[:i], s) {
				t.Fatalf("Suggest(%q) = %q: %q twice", received, got, s)
			}
		}
		if slices.Contains(values, received) && got != nil {
			t.Fatalf("Suggest(%q) = %q for a permitted value", received, got)
		}
		dst := []string{"kept"}
		appended := set.AppendSuggestions(dst, received)
		if appended[0] != "kept" || !slices.Equal(appended[1:], got) {
			t.Fatalf("AppendSuggestions([kept], %q) = %q; Suggest says %q", received, appended, got)
		}
		if again := set.Suggest(received); !slices.Equal(again, got) {
			t.Fatalf("Suggest(%q) = %q, then %q", received, got, again)
		}
	})
}
