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

// reference is the plain version of Suggest that the Set replaced: every
// value through a full-table distance, but for those whose length alone
// puts them past the bound, an edit changing the length by one rune at
// most. The Set must give the same answer for every input. What depends on
// the values alone, each one folded and whether it repeats an earlier one,
// newReference works out once. A reference keeps its table from one
// distance to the next, so it serves one goroutine at a time.
type reference struct {
	values  []string
	aliases map[string]string
	folded  []string // strings.ToLower of each value
	runes   [][]rune // folded, as runes
	repeat  []bool   // the value is declared earlier too
	table   osaTable
}

func newReference(values []string, aliases map[string]string) *reference {
	r := &reference{values: values, aliases: aliases}
	for i, v := range values {
		f := strings.ToLower(v)
		r.folded = append(r.folded, f)
		r.runes = append(r.runes, []rune(f))
		r.repeat = append(r.repeat, slices.Index(values, v) < i)
	}
	return r
}

// suggest is what Suggest must return for received.
func (r *reference) suggest(received string) []string {
	if slices.Contains(r.values, received) {
		return nil
	}
	folded := strings.ToLower(received)
	for alias, v := range r.aliases {
		if strings.ToLower(alias) == folded {
			return []string{v}
		}
	}
	for i, f := range r.folded {
		if f == folded {
			return []string{r.values[i]}
		}
	}
	bound := Bound(utf8.RuneCountInString(folded))
	if bound == 0 {
		return nil
	}
	type hit struct{ i, d int }
	var hits []hit
	a := []rune(folded)
	for i, b := range r.runes {
		if r.repeat[i] {
			continue // a repeat counts once, at its first place
		}
		if abs(len(a)-len(b)) > bound {
			continue // an edit changes the length by one rune at most
		}
		if d := r.table.distance(a, b); d <= bound {
			hits = append(hits, hit{i, d})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.d - b.d })
	var out []string
	for _, h := range hits[:min(len(hits), Max)] {
		out = append(out, r.values[h.i])
	}
	return out
}

// referenceDistance is the textbook optimal-string-alignment distance.
func referenceDistance(a, b []rune) int {
	var d osaTable
	return d.distance(a, b)
}

// osaTable is the full table of the textbook optimal-string-alignment
// distance, kept from one distance to the next.
type osaTable []int

// distance is the distance between a and b: cell i*w+j of the table is the
// distance between a[:i] and b[:j].
func (t *osaTable) distance(a, b []rune) int {
	w := len(b) + 1
	if n := (len(a) + 1) * w; len(*t) < n {
		*t = make(osaTable, n)
	}
	d := *t
	for i := range len(a) + 1 {
		d[i*w] = i
	}
	for j := range w {
		d[j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i*w+j] = min(d[(i-1)*w+j]+1, d[i*w+j-1]+1, d[(i-1)*w+j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i*w+j] = min(d[i*w+j], d[(i-2)*w+j-2]+1)
			}
		}
	}
	return d[len(a)*w+len(b)]
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
		set, ref := NewSet(values, referenceAliases), newReference(values, referenceAliases)
		check := func(received string) {
			t.Helper()
			want := ref.suggest(received)
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

// fuzzRunes is where FuzzSuggest cuts a received value. Past the longest
// value or alias plus the largest Bound (70 + 3 runes) neither the Set nor
// the reference has anything to suggest, so a longer value finds nothing a
// shorter one cannot; it only lengthens the fuzzer's minimizing, which
// tries every span of a value that finds new coverage.
const fuzzRunes = 80

// FuzzSuggest checks the Set against the reference on every set of
// referenceSets, for received values cut at fuzzRunes runes.
func FuzzSuggest(f *testing.F) {
	for _, s := range []string{"", "UK", "gbr", "Germny", "Zurich", "ZÜRICH", "\xff", strings.Repeat("ü", 65)} {
		f.Add(s)
	}
	type checked struct {
		name string
		set  *Set
		ref  *reference
	}
	var sets []checked
	longest := 0
	for alias := range referenceAliases {
		longest = max(longest, utf8.RuneCountInString(alias))
	}
	for name, values := range referenceSets(f) {
		sets = append(sets, checked{name, NewSet(values, referenceAliases), newReference(values, referenceAliases)})
		for _, v := range values {
			longest = max(longest, utf8.RuneCountInString(v))
		}
	}
	if longest+maxBound >= fuzzRunes {
		f.Fatalf("a value or alias of %d runes is within reach of a received value of %d, where FuzzSuggest cuts; raise fuzzRunes", longest, fuzzRunes)
	}
	f.Fuzz(func(t *testing.T, received string) {
		n := 0
		for i := range received {
			if n == fuzzRunes {
				received = received[:i]
				break
			}
			n++
		}
		for _, s := range sets {
			want := s.ref.suggest(received)
			if got := s.set.Suggest(received); !slices.Equal(got, want) {
				t.Fatalf("%s: Suggest(%q) = %q, reference %q", s.name, received, got, want)
			}
		}
	})
}
