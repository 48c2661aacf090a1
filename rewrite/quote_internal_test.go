package rewrite

import (
	"strconv"
	"strings"
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

// TestMaskBounded: only the head of a long value is masked, a secret
// across the head's end included, and no secret shows after the cut.
func TestMaskBounded(t *testing.T) {
	key := "ghp_0123456789abcdefghij0123456789abcdef"
	for _, tc := range []struct{ name, in string }{
		{"secret at the start", key + " " + strings.Repeat("x", 4000)},
		{"secret across the head's end", strings.Repeat("x", maskedHead(64)-10) + " " + key + " " + strings.Repeat("y", 4000)},
		{"a head of secrets", strings.Repeat("token="+key+" ", 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(appendEcho(nil, mask(tc.in, 64), 64))
			if strings.Contains(got, "0123456789abcdef") {
				t.Errorf("a secret shows: %s", got)
			}
		})
	}
}
