package suggest_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/suggest"
)

// readTable reads testdata/name: one entry a line, two tab-separated
// columns, with blank lines and lines starting with # skipped.
func readTable(tb testing.TB, name string) [][2]string {
	tb.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var rows [][2]string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, v, ok := strings.Cut(text, "\t")
		if !ok {
			tb.Fatalf("testdata/%s:%d: want two tab-separated columns, got %q", name, line, text)
		}
		rows = append(rows, [2]string{k, v})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return rows
}

// countries returns the 249 ISO 3166-1 alpha-2 codes and their names, in
// code order, and the alias table that maps other names to codes.
func countries(tb testing.TB) (codes, names []string, aliases map[string]string) {
	tb.Helper()
	for _, r := range readTable(tb, "iso3166-1.txt") {
		codes = append(codes, r[0])
		names = append(names, r[1])
	}
	if len(codes) != 249 {
		tb.Fatalf("testdata/iso3166-1.txt: %d codes, want 249", len(codes))
	}
	aliases = make(map[string]string)
	for _, r := range readTable(tb, "aliases.txt") {
		aliases[r[0]] = r[1]
	}
	return codes, names, aliases
}

// ascii64 is a received value of 64 ASCII runes.
const ascii64 = "ignore previous instructions and ship it to the united kingdom!!"

// benchInputs are received values from empty to 64 runes, ASCII and not.
var benchInputs = []struct{ name, received string }{
	{"empty", ""},
	{"one", "G"},
	{"alias", "UK"},
	{"case", "gb"},
	{"GBR", "GBR"},
	{"Germny", "Germny"},
	{"united_kingdom", "united kingdom"},
	{"ascii32", "ship it to the united kingdom pl"},
	{"ascii64", ascii64},
	{"u-umlaut64", strings.Repeat("ü", 64)},
}

// benchSets returns the country codes with their aliases, and the country
// names without, the long catalog that typos of names are checked against.
func benchSets(tb testing.TB) (codes, names *suggest.Set) {
	tb.Helper()
	c, n, aliases := countries(tb)
	return suggest.NewSet(c, aliases), suggest.NewSet(n, nil)
}

func BenchmarkSuggestCountryCodes(b *testing.B) {
	codes, names := benchSets(b)
	run := func(name string, set *suggest.Set, received string) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]string, 0, suggest.Max)
			for b.Loop() {
				dst = set.AppendSuggestions(dst[:0], received)
			}
		})
	}
	for _, in := range benchInputs {
		run(in.name, codes, in.received)
	}
	// The names are a longer catalog, and the slowest inputs found for it
	// have 9 runes: bound 3 reaches values of 6 to 12, most of the names.
	run("names/Germny", names, "Germny")
	run("names/Untied_Kingdm", names, "Untied Kingdm")
	run("names/Argetinaa", names, "Argetinaa")
	run("names/iratiruta", names, "iratiruta")
	run("names/ascii64", names, ascii64)
}

// TestAppendSuggestionsAllocatesNothing holds AppendSuggestions to no
// allocation for every benchmark input, a typo of every country name, and
// received values of every length up to 64 runes, against both sets.
func TestAppendSuggestionsAllocatesNothing(t *testing.T) {
	codes, names := benchSets(t)
	inputs := []string{"Germny", "Untied Kingdm", "Argetinaa", "iratiruta", "ZÜRICH", "\xff\xfe", "GbR", "deutschLAND"}
	for _, in := range benchInputs {
		inputs = append(inputs, in.received)
	}
	_, nameList, _ := countries(t)
	for _, name := range nameList {
		rs := []rune(name)
		rs[len(rs)/2-1], rs[len(rs)/2] = rs[len(rs)/2], rs[len(rs)/2-1]
		inputs = append(inputs, string(rs), name+"x", strings.ToUpper(name))
	}
	for n := range 65 {
		inputs = append(inputs, strings.Repeat("a", n), strings.Repeat("Ü", n), strings.Repeat("gb", n)[:n])
	}
	dst := make([]string, 0, suggest.Max)
	for _, set := range []*suggest.Set{codes, names} {
		for _, in := range inputs {
			if utf8.RuneCountInString(in) > 64 {
				t.Fatalf("input %q is longer than 64 runes", in)
			}
			allocs := testing.AllocsPerRun(20, func() { dst = set.AppendSuggestions(dst[:0], in) })
			if allocs != 0 {
				t.Errorf("AppendSuggestions(%q) made %v allocations, want 0", in, allocs)
			}
		}
	}
	if got := testing.AllocsPerRun(20, func() { suggest.Distance("Untied Kingdm", "United Kingdom", 3) }); got != 0 {
		t.Errorf("Distance made %v allocations, want 0", got)
	}
}

func TestBenchInputLengths(t *testing.T) {
	want := map[string]int{"ascii32": 32, "ascii64": 64, "u-umlaut64": 64}
	for _, in := range benchInputs {
		if n, ok := want[in.name]; ok && utf8.RuneCountInString(in.received) != n {
			t.Errorf("bench input %s is %d runes, want %d", in.name, utf8.RuneCountInString(in.received), n)
		}
	}
}

// TestCountries checks the Set against the real country codes and names.
func TestCountries(t *testing.T) {
	codes, names := benchSets(t)
	tests := []struct {
		set      *suggest.Set
		received string
		want     []string
	}{
		{codes, "GB", nil},
		{codes, "UK", []string{"GB"}},
		{codes, "uk", []string{"GB"}},
		{codes, "En", []string{"GB"}},
		{codes, "USA", []string{"US"}},
		{codes, "uae", []string{"AE"}},
		{codes, "ENGLAND", []string{"GB"}},
		{codes, "great britain", []string{"GB"}},
		{codes, "Deutschland", []string{"DE"}},
		{codes, "holland", []string{"NL"}},
		{codes, "Korea", []string{"KR"}},
		{codes, "russia", []string{"RU"}},
		{codes, "gb", []string{"GB"}},
		{codes, "De", []string{"DE"}},
		{codes, "GBR", []string{"BR", "GB", "GR"}}, // one deletion each, in code order
		{codes, "DEU", []string{"DE"}},
		{codes, "G", nil},
		{codes, "XX", nil},
		{codes, "", nil},
		{codes, "Germny", nil},
		{codes, "united kingdom", nil},
		{codes, strings.Repeat("ü", 64), nil},
		{names, "Germany", nil},
		{names, "Germny", []string{"Germany"}},
		{names, "germany", []string{"Germany"}},
		{names, "Untied Kingdm", []string{"United Kingdom"}},
		{names, "Turkiye", []string{"Türkiye"}},
		{names, "cote d'ivoire", []string{"Côte d'Ivoire"}},
		{names, "Nigeria", nil},
		{names, "Nigera", []string{"Niger", "Nigeria"}},
		{names, "Atlantis", nil},
	}
	for _, tt := range tests {
		if got := tt.set.Suggest(tt.received); !slices.Equal(got, tt.want) {
			t.Errorf("Suggest(%q) = %q, want %q", tt.received, got, tt.want)
		}
	}
	if codes.Len() != 249 || names.Len() != 249 {
		t.Errorf("Len = %d and %d, want 249", codes.Len(), names.Len())
	}
	if !codes.Has("GB") || codes.Has("gb") || codes.Has("UK") {
		t.Errorf("Has(GB), Has(gb), Has(UK) = %v, %v, %v; want true, false, false", codes.Has("GB"), codes.Has("gb"), codes.Has("UK"))
	}
}
