package rewrite

import (
	"strconv"
	"testing"
	"unicode/utf8"
)

// quoteByRune quotes s one code point at a time, so that no run of plain
// ASCII is ever copied whole.
func quoteByRune(s string, max int, markup bool) string {
	var dst []byte
	for i, n := 0, 0; i < len(s); n++ {
		if n == max {
			return string(dst) + "…[+" + strconv.Itoa(utf8.RuneCountInString(s[i:])) + " chars]"
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		q := quote(nil, s[i:i+size], -1, markup)
		dst = append(dst, q[1:len(q)-1]...)
		i += size
	}
	return string(dst)
}

// FuzzQuoteRuns checks that copying runs of plain ASCII whole escapes and
// cuts a string exactly as quoting it one code point at a time does.
func FuzzQuoteRuns(f *testing.F) {
	for _, s := range []string{"", "open", `say "hi"\`, "a<b>c", "żółw 東京", "x\u202ey", "\xff\xfeab", "abc\n\t"} {
		f.Add(s, 3, true)
		f.Add(s, -1, false)
	}
	f.Fuzz(func(t *testing.T, s string, max int, markup bool) {
		if max < -1 {
			max = -1
		}
		got := quote(nil, s, max, markup)
		want := `"` + quoteByRune(s, max, markup) + `"`
		if string(got) != want {
			t.Errorf("quote(%q, %d, %v) = %s, want %s", s, max, markup, got, want)
		}
	})
}
