package rewrite

import "testing"

// TestLookalikeNote names the first look-alike of a value by its Unicode
// name and what it reads as, counts the others once each, and says
// nothing of plain ASCII or of other letters.
func TestLookalikeNote(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"T-8841", ""},
		{"Zürich", ""},
		{"Т-8841", "it holds U+0422 CYRILLIC CAPITAL LETTER TE where T is expected"},
		{"ＴＩＣＫ", "it holds U+FF34 FULLWIDTH LATIN CAPITAL LETTER T where T is expected, and 3 more characters that look like others"},
		{"ａ", "it holds U+FF41 FULLWIDTH LATIN SMALL LETTER A where a is expected"},
		{"８８４１", "it holds U+FF18 FULLWIDTH DIGIT EIGHT where 8 is expected, and 2 more characters that look like others"},
		{"ТТ", "it holds U+0422 CYRILLIC CAPITAL LETTER TE where T is expected"},
		{"a\u00a0b", "it holds U+00A0 NO-BREAK SPACE where a space is expected"},
		{"2024\u20131", "it holds U+2013 EN DASH where - is expected"},
		{"\ufeffopen", "it holds U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible character"},
	} {
		if got := lookalikeNote(tc.value); got != tc.want {
			t.Errorf("lookalikeNote(%q) = %q, want %q", tc.value, got, tc.want)
		}
	}
}
