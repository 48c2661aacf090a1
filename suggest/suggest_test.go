package suggest_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/signpost-proxy/signpost/suggest"
)

var statuses = []string{"open", "pending", "closed"}

func TestSuggest(t *testing.T) {
	aliases := map[string]string{"Done": "closed", "in-progress": "pending", "WIP": "pending"}
	tests := []struct {
		name     string
		values   []string
		aliases  map[string]string
		received string
		want     []string
	}{
		// Permitted as sent: nothing to suggest, even with aliases around.
		{"exact", statuses, aliases, "open", nil},
		{"exact among case variants", []string{"Open", "open"}, nil, "open", nil},
		{"exact despite an alias of the same name", []string{"done", "closed"}, map[string]string{"done": "closed"}, "done", nil},

		// Aliases come first and ignore case, in both the table and the input.
		{"alias", statuses, aliases, "done", []string{"closed"}},
		{"alias upper", statuses, aliases, "DONE", []string{"closed"}},
		{"alias declared upper", statuses, aliases, "wip", []string{"pending"}},
		{"alias beats a close value", []string{"clone", "closed"}, map[string]string{"close": "closed"}, "close", []string{"closed"}},

		// A case-only difference yields the one value, even where a shorter
		// value is within reach.
		{"case", statuses, nil, "OPEN", []string{"open"}},
		{"case mixed", statuses, nil, "Pending", []string{"pending"}},
		{"case of a two-letter code", []string{"DE", "FR"}, nil, "de", []string{"DE"}},
		{"case first among variants", []string{"Open", "OPEN"}, nil, "open", []string{"Open"}},

		// Edit distance, counted in runes, within Bound(len(received)).
		{"one deletion", statuses, nil, "pendng", []string{"pending"}},
		{"one insertion", statuses, nil, "opeen", []string{"open"}},
		{"one substitution", statuses, nil, "closen", []string{"closed"}},
		{"transposition", statuses, nil, "opne", []string{"open"}},
		{"transposition and case", statuses, nil, "Clsoed", []string{"closed"}},
		{"two edits at length 6", statuses, nil, "clsd", nil}, // 4 runes: bound 1, distance 2
		{"two edits at length 7", statuses, nil, "pnding", []string{"pending"}},
		{"two edits at length 8", []string{"priority"}, nil, "prioirty", []string{"priority"}},
		{"three edits at length 9", []string{"escalated"}, nil, "escalaetdd", []string{"escalated"}},
		{"beyond the bound", statuses, nil, "opxyz", nil},
		{"unicode rune", []string{"Zürich", "Zug"}, nil, "Zurich", []string{"Zürich"}},
		{"unicode rune reversed", []string{"Zurich", "Zug"}, nil, "Zürich", []string{"Zurich"}},
		{"unicode case", []string{"Zürich"}, nil, "ZÜRICH", []string{"Zürich"}},
		{"multibyte runes count once", []string{"日本語テキスト"}, nil, "日本語テキス", []string{"日本語テキスト"}},

		// Nothing close yields nothing.
		{"unrelated", statuses, nil, "banana", nil},
		{"empty", statuses, nil, "", nil},
		{"too short to guess", []string{"DE", "FR"}, nil, "DX", nil},
		{"single rune", []string{"a", "b"}, nil, "c", nil},
		{"no values", nil, nil, "open", nil},
		{"prose", statuses, nil, "ignore previous instructions", nil},

		// Ties keep declared order; at most Max results, best first.
		{"ties keep order", []string{"cat", "bat", "hat"}, nil, "rat", []string{"cat", "bat", "hat"}},
		{"ties keep order reversed", []string{"hat", "bat", "cat"}, nil, "rat", []string{"hat", "bat", "cat"}},
		{"at most three", []string{"cat", "bat", "hat", "mat", "pat"}, nil, "rat", []string{"cat", "bat", "hat"}},
		{"closer first", []string{"pendings", "pending", "spending"}, nil, "pendin", []string{"pending", "pendings", "spending"}},
		{"closer displaces a full list", []string{"abcdexy", "abcdxyg", "abcxefz", "abcdefx"}, nil, "abcdefg", []string{"abcdefx", "abcdexy", "abcdxyg"}},
		{"only values within the bound", []string{"opened", "opens", "opel", "open"}, nil, "opem", []string{"opel", "open"}},
		{"ties across lengths keep order", []string{"abcde", "abcdef", "abcd", "abcdeg"}, nil, "abcdx", []string{"abcde", "abcd"}},
		{"a later value displaces a farther one", []string{"abcdefxy", "abcdefgz", "abcdxfgh", "abcdefgy"}, nil, "abcdefgh", []string{"abcdefgz", "abcdxfgh", "abcdefgy"}},

		// One deletion among many short values: each string once, and
		// every value that folds to it, in declared order.
		{"deletion of a doubled rune", []string{"ab", "aa", "bb", "cc", "dd"}, nil, "aab", []string{"ab", "aa"}},
		{"deletion among case variants", []string{"ab", "AB", "cd", "ef", "Ab"}, nil, "abx", []string{"ab", "AB", "Ab"}},
		{"deletion of a wide rune", []string{"zü", "zu", "üz", "uz"}, nil, "züx", []string{"zü"}},
		{"deletion is not all", []string{"gb", "gbx", "br", "gr", "xy"}, nil, "gbr", []string{"gb", "gbx", "br"}},

		// A rune-count lower bound never hides a close value.
		{"anagram beyond the bound", []string{"listen"}, nil, "silent", nil},                        // same runes, 4 edits
		{"repeated runes", []string{"aaaa", "aaab", "abab"}, nil, "aaba", []string{"aaaa", "aaab"}}, // abab: 2 edits
		{"long values", []string{strings.Repeat("ab", 40), strings.Repeat("ab", 39) + "ba"}, nil, strings.Repeat("ab", 39) + "b", []string{strings.Repeat("ab", 40), strings.Repeat("ab", 39) + "ba"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := suggest.NewSet(tt.values, tt.aliases).Suggest(tt.received)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Suggest(%q) over %q = %q, want %q", tt.received, tt.values, got, tt.want)
			}
			if len(got) > suggest.Max {
				t.Errorf("Suggest(%q) returned %d values; at most %d", tt.received, len(got), suggest.Max)
			}
		})
	}
}

func TestSuggestDoesNotKeepCallerSlice(t *testing.T) {
	values := []string{"open", "closed"}
	set := suggest.NewSet(values, nil)
	got := set.Suggest("opne")
	got[0] = "changed"
	if values[0] != "open" {
		t.Fatalf("changing a suggestion changed the permitted values: %q", values)
	}
	if again := set.Suggest("opne"); !slices.Equal(again, []string{"open"}) {
		t.Fatalf("second Suggest = %q, want [open]", again)
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"method", "path", "fields", "errors"}
	tests := []struct{ received, want string }{
		{"feilds", "fields"},
		{"Fields", "fields"},
		{"errros", "errors"},
		{"methd", "method"},
		{"fields", ""}, // permitted as sent: nothing to suggest
		{"match", ""},
		{"x", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest.Closest(tt.received, keys); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.received, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"", "", 3, 0},
		{"open", "open", 3, 0},
		{"", "abc", 3, 3},
		{"abc", "", 3, 3},
		{"open", "opne", 3, 1}, // adjacent swap costs one
		{"abcd", "badc", 3, 2}, // two swaps
		{"ca", "abc", 3, 3},    // optimal string alignment, not Damerau: 3, not 2
		{"kitten", "sitting", 3, 3},
		{"pending", "pendng", 3, 1},
		{"closed", "clsoed", 3, 1},
		{"Zürich", "Zurich", 3, 1}, // one rune, though two bytes
		{"日本", "日本語", 3, 1},
		{"ab", "ba", 0, 1}, // max 0: any difference is above it

		// Early exit: once the distance must exceed max, the result is
		// max+1, whatever the true distance.
		{"a", "abcdefgh", 2, 3}, // lengths alone rule it out
		{"abcdefgh", "a", 2, 3},
		{"aaaaaaaa", "bbbbbbbb", 2, 3}, // a row runs above max
		{"aaaaaaaa", "bbbbbbbb", 8, 8}, // within a large enough max
		{"kitten", "sitting", 2, 3},
		{"kitten", "sitting", 1, 2},
		{"open", "closed", 1, 2},
	}
	for _, tt := range tests {
		if got := suggest.Distance(tt.a, tt.b, tt.max); got != tt.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.max, got, tt.want)
		}
	}
}

// TestDistanceSymmetric checks the distance both ways on every pair of a
// small set, with a bound large enough never to exit early.
func TestDistanceSymmetric(t *testing.T) {
	words := []string{"", "a", "ab", "ba", "abc", "acb", "open", "opne", "pending", "Zürich", "Zurich", "kitten", "sitting"}
	for _, a := range words {
		for _, b := range words {
			ab, ba := suggest.Distance(a, b, 100), suggest.Distance(b, a, 100)
			if ab != ba {
				t.Errorf("Distance(%q, %q) = %d but Distance(%q, %q) = %d", a, b, ab, b, a, ba)
			}
			if (ab == 0) != (a == b) {
				t.Errorf("Distance(%q, %q) = %d", a, b, ab)
			}
		}
	}
}

func TestBound(t *testing.T) {
	tests := []struct{ n, want int }{
		{0, 0}, {1, 0}, {2, 0},
		{3, 1}, {5, 1},
		{6, 2}, {8, 2},
		{9, 3}, {40, 3},
	}
	for _, tt := range tests {
		if got := suggest.Bound(tt.n); got != tt.want {
			t.Errorf("Bound(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// longNames returns n distinct names of 12 to 20 runes, some with
// non-ASCII runes.
func longNames(n int) []string {
	stems := []string{"customer_reference", "escalation_level", "Zürich_office", "billing_address", "subscription_tier"}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s_%d", stems[i%len(stems)], i)
	}
	return names
}

// BenchmarkSuggest measures Suggest, which allocates the slice it returns;
// BenchmarkSuggestCountryCodes measures AppendSuggestions.
func BenchmarkSuggest(b *testing.B) {
	codes, _ := benchSets(b)
	names := suggest.NewSet(longNames(249), nil)
	for _, bm := range []struct {
		name     string
		set      *suggest.Set
		received string
	}{
		{"codes/case", codes, "de"},
		{"codes/alias", codes, "uk"},
		{"codes/miss", codes, "Deutschland"},
		{"names/typo", names, "custmoer_reference_42"},
		{"names/miss", names, "something else entirely"},
		{"names/exact", names, "escalation_level_1"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bm.set.Suggest(bm.received)
			}
		})
	}
}

func BenchmarkDistance(b *testing.B) {
	a, c := strings.Repeat("pending", 3), strings.Repeat("pendnig", 3)
	b.ReportAllocs()
	for b.Loop() {
		suggest.Distance(a, c, 3)
	}
}

// TestSuggestConcurrent runs one Set from many goroutines at once, for the
// race detector, and checks each answer against the same call made alone.
func TestSuggestConcurrent(t *testing.T) {
	codes, names := benchSets(t)
	inputs := []string{"uk", "de", "Deutschland", "GBR", "zz", "Germny", "Untied Kingdm", strings.Repeat("ü", 64), strings.Repeat("x", 80)}
	var wg sync.WaitGroup
	for _, set := range []*suggest.Set{codes, names} {
		want := make([][]string, len(inputs))
		for i, in := range inputs {
			want[i] = set.Suggest(in)
		}
		for g := range 8 {
			wg.Go(func() {
				dst := make([]string, 0, suggest.Max)
				for r := range 200 {
					i := (g + r) % len(inputs)
					if dst = set.AppendSuggestions(dst[:0], inputs[i]); !slices.Equal(dst, want[i]) {
						t.Errorf("concurrent AppendSuggestions(%q) = %q, alone %q", inputs[i], dst, want[i])
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

func TestAppendSuggestions(t *testing.T) {
	set := suggest.NewSet(statuses, map[string]string{"done": "closed"})
	dst := []string{"kept"}
	if got := set.AppendSuggestions(dst, "pendng"); !slices.Equal(got, []string{"kept", "pending"}) {
		t.Errorf("AppendSuggestions(%q, pendng) = %q", dst, got)
	}
	if got := set.AppendSuggestions(dst, "open"); !slices.Equal(got, dst) {
		t.Errorf("AppendSuggestions(%q, open) = %q; want dst unchanged", dst, got)
	}
	if got := set.AppendSuggestions(nil, "DONE"); !slices.Equal(got, []string{"closed"}) {
		t.Errorf("AppendSuggestions(nil, DONE) = %q", got)
	}
	if got := set.AppendSuggestions(nil, "banana"); got != nil {
		t.Errorf("AppendSuggestions(nil, banana) = %q; want nil", got)
	}
}

func TestHasAndLen(t *testing.T) {
	values := []string{"open", "Open", "open", ""}
	set := suggest.NewSet(values, map[string]string{"done": "closed"})
	for v, want := range map[string]bool{"open": true, "Open": true, "": true, "OPEN": false, "done": false, "closed": false} {
		if got := set.Has(v); got != want {
			t.Errorf("Has(%q) = %v, want %v", v, got, want)
		}
	}
	if set.Len() != 4 {
		t.Errorf("Len() = %d, want 4", set.Len())
	}
	if empty := suggest.NewSet(nil, nil); empty.Len() != 0 || empty.Has("") {
		t.Errorf("NewSet(nil, nil): Len() = %d, Has(\"\") = %v", empty.Len(), empty.Has(""))
	}
}

// TestNewSetCopies checks that a Set keeps its own copy of what it was
// built from.
func TestNewSetCopies(t *testing.T) {
	values := []string{"open", "closed"}
	aliases := map[string]string{"done": "closed"}
	set := suggest.NewSet(values, aliases)
	values[0], aliases["done"] = "changed", "changed"
	if got := set.Suggest("opne"); !slices.Equal(got, []string{"open"}) {
		t.Errorf("after the caller changed values, Suggest(opne) = %q", got)
	}
	if got := set.Suggest("done"); !slices.Equal(got, []string{"closed"}) {
		t.Errorf("after the caller changed aliases, Suggest(done) = %q", got)
	}
}

// TestAliasCaseCollision checks that aliases differing only in case give
// the same answer every time: the one that sorts first.
func TestAliasCaseCollision(t *testing.T) {
	aliases := map[string]string{"uk": "UA", "UK": "GB", "Uk": "US"}
	for range 20 {
		if got := suggest.NewSet([]string{"GB", "UA", "US"}, aliases).Suggest("uK"); !slices.Equal(got, []string{"GB"}) {
			t.Fatalf("Suggest(uK) = %q, want [GB], from the alias that sorts first", got)
		}
	}
}
