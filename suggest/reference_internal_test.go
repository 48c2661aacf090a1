package suggest

import (
	"bufio"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceSuggest is the plain version of Suggest that the Set replaced:
// every value through a full-table distance, nothing skipped. The Set must
// give the same answer for every input.
func referenceSuggest(values []string, aliases map[string]string, received string) []string {
	if slices.Contains(values, received) {
		return nil
	}
	folded := strings.ToLower(received)
	for alias, v := range aliases {
		if strings.ToLower(alias) == folded {
			return []string{v}
		}
	}
	for i, v := range values {
		if strings.ToLower(v) == folded {
			return []string{values[i]}
		}
	}
	bound := Bound(utf8.RuneCountInString(folded))
	if bound == 0 {
		return nil
	}
	type hit struct{ i, d int }
	var hits []hit
	for i, v := range values {
		if slices.Index(values, v) < i {
			continue // a repeat counts once, at its first place
		}
		if d := referenceDistance([]rune(folded), []rune(strings.ToLower(v))); d <= bound {
			hits = append(hits, hit{i, d})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.d - b.d })
	var out []string
	for _, h := range hits[:min(len(hits), Max)] {
		out = append(out, values[h.i])
	}
	return out
}

// referenceDistance is the textbook optimal-string-alignment distance.
func referenceDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// referenceSets are value sets to compare the Set with its reference on.
func referenceSets(t testing.TB) map[string][]string {
	f, err := os.Open("testdata/iso3166-1.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var codes, names []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if code, name, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(code, "#") {
			codes, names = append(codes, code), append(names, name)
		}
	}
	return map[string][]string{
		"codes":    codes,
		"names":    names,
		"statuses": {"open", "pending", "closed", "Open", "pending", "in progress", "Zürich", "ZÜRICH", "日本語テキスト", "", "a", "ab"},
		"long":     {strings.Repeat("abc", 22), strings.Repeat("abc", 22) + "d", strings.Repeat("ü", 66), strings.Repeat("ü", 70)},
	}
}

var referenceAliases = map[string]string{"UK": "GB", "England": "GB", "Deutschland": "DE", "wip": "pending", "Zurich": "Zürich"}

// mutate returns s with up to edits random edits, drawn from alphabet.
func mutate(r *rand.Rand, s string, edits int, alphabet []rune) string {
	rs := []rune(s)
	for range r.IntN(edits + 1) {
		c := alphabet[r.IntN(len(alphabet))]
		switch i := r.IntN(len(rs) + 1); r.IntN(5) {
		case 0:
			rs = slices.Insert(rs, i, c)
		case 1:
			if i < len(rs) {
				rs = slices.Delete(rs, i, i+1)
			}
		case 2:
			if i < len(rs) {
				rs[i] = c
			}
		case 3:
			if i+1 < len(rs) {
				rs[i], rs[i+1] = rs[i+1], rs[i]
			}
		case 4:
			if i < len(rs) {
				rs[i] = []rune(strings.ToUpper(string(rs[i])))[0]
			}
		}
	}
	return string(rs)
}

// TestSuggestMatchesReference checks the Set against referenceSuggest on
// values with a few random edits, and on random strings of every length up
// to 70 runes.
func TestSuggestMatchesReference(t *testing.T) {
	alphabet := []rune("abcdeghinoprstuüÜzZ日本 -\u212a\u0130\ufffd")
	r := rand.New(rand.NewPCG(1, 2))
	for name, values := range referenceSets(t) {
		set := NewSet(values, referenceAliases)
		check := func(received string) {
			t.Helper()
			want := referenceSuggest(values, referenceAliases, received)
			if got := set.Suggest(received); !slices.Equal(got, want) {
				t.Fatalf("%s: Suggest(%q) = %q, reference %q", name, received, got, want)
			}
		}
		for range 1000 {
			check(mutate(r, values[r.IntN(len(values))], 4, alphabet))
		}
		for n := range 71 {
			var b strings.Builder
			for range n {
				b.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			check(b.String())
		}
		check("\xff\xfe")
		check("g\xffb")
	}
}

// TestDistanceMatchesReference checks Distance against the full table.
func TestDistanceMatchesReference(t *testing.T) {
	alphabet := []rune("abcü日")
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		a := mutate(r, "", 12, alphabet)
		b := mutate(r, a, 5, alphabet)
		if r.IntN(4) == 0 {
			b = mutate(r, "", 12, alphabet)
		}
		want := referenceDistance([]rune(a), []rune(b))
		for k := range 8 {
			got := Distance(a, b, k)
			if want <= k && got != want || want > k && got != k+1 {
				t.Fatalf("Distance(%q, %q, %d) = %d; full table says %d", a, b, k, got, want)
			}
		}
	}
}

func FuzzSuggest(f *testing.F) {
	for _, s := range []string{"", "UK", "gbr", "Germny", "Zurich", "ZÜRICH", "\xff", strings.Repeat("ü", 65)} {
		f.Add(s)
	}
	sets := referenceSets(f)
	built := make(map[string]*Set)
	for name, values := range sets {
		built[name] = NewSet(values, referenceAliases)
	}
	f.Fuzz(func(t *testing.T, received string) {
		if len(received) > 300 {
			t.Skip("the reference is quadratic; longer values add nothing")
		}
		for name, values := range sets {
			want := referenceSuggest(values, referenceAliases, received)
			if got := built[name].Suggest(received); !slices.Equal(got, want) {
				t.Fatalf("%s: Suggest(%q) = %q, reference %q", name, received, got, want)
			}
		}
	})
}
