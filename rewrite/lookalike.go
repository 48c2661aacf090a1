package rewrite

import (
	"fmt"
	"strconv"
)

// lookalike is a character that reads as another to the eye, an ASCII one
// or none at all, with its Unicode name.
type lookalike struct {
	like rune // 0: nothing, an invisible character
	name string
}

// lookalikes are the characters most often sent in place of ASCII letters,
// digits and punctuation: Cyrillic and Greek letters, dashes, quotes, the
// no-break space, and the invisible ones. Fullwidth forms are worked out
// in lookalikeOf.
var lookalikes = map[rune]lookalike{
	'\u0410': {'A', "CYRILLIC CAPITAL LETTER A"},
	'\u0412': {'B', "CYRILLIC CAPITAL LETTER VE"},
	'\u0415': {'E', "CYRILLIC CAPITAL LETTER IE"},
	'\u041A': {'K', "CYRILLIC CAPITAL LETTER KA"},
	'\u041C': {'M', "CYRILLIC CAPITAL LETTER EM"},
	'\u041D': {'H', "CYRILLIC CAPITAL LETTER EN"},
	'\u041E': {'O', "CYRILLIC CAPITAL LETTER O"},
	'\u0420': {'P', "CYRILLIC CAPITAL LETTER ER"},
	'\u0421': {'C', "CYRILLIC CAPITAL LETTER ES"},
	'\u0422': {'T', "CYRILLIC CAPITAL LETTER TE"},
	'\u0425': {'X', "CYRILLIC CAPITAL LETTER HA"},
	'\u0405': {'S', "CYRILLIC CAPITAL LETTER DZE"},
	'\u0406': {'I', "CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I"},
	'\u0408': {'J', "CYRILLIC CAPITAL LETTER JE"},
	'\u0430': {'a', "CYRILLIC SMALL LETTER A"},
	'\u0435': {'e', "CYRILLIC SMALL LETTER IE"},
	'\u043E': {'o', "CYRILLIC SMALL LETTER O"},
	'\u0440': {'p', "CYRILLIC SMALL LETTER ER"},
	'\u0441': {'c', "CYRILLIC SMALL LETTER ES"},
	'\u0443': {'y', "CYRILLIC SMALL LETTER U"},
	'\u0445': {'x', "CYRILLIC SMALL LETTER HA"},
	'\u0455': {'s', "CYRILLIC SMALL LETTER DZE"},
	'\u0456': {'i', "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I"},
	'\u0458': {'j', "CYRILLIC SMALL LETTER JE"},
	'\u04BB': {'h', "CYRILLIC SMALL LETTER SHHA"},
	'\u0501': {'d', "CYRILLIC SMALL LETTER KOMI DE"},
	'\u0391': {'A', "GREEK CAPITAL LETTER ALPHA"},
	'\u0392': {'B', "GREEK CAPITAL LETTER BETA"},
	'\u0395': {'E', "GREEK CAPITAL LETTER EPSILON"},
	'\u0396': {'Z', "GREEK CAPITAL LETTER ZETA"},
	'\u0397': {'H', "GREEK CAPITAL LETTER ETA"},
	'\u0399': {'I', "GREEK CAPITAL LETTER IOTA"},
	'\u039A': {'K', "GREEK CAPITAL LETTER KAPPA"},
	'\u039C': {'M', "GREEK CAPITAL LETTER MU"},
	'\u039D': {'N', "GREEK CAPITAL LETTER NU"},
	'\u039F': {'O', "GREEK CAPITAL LETTER OMICRON"},
	'\u03A1': {'P', "GREEK CAPITAL LETTER RHO"},
	'\u03A4': {'T', "GREEK CAPITAL LETTER TAU"},
	'\u03A5': {'Y', "GREEK CAPITAL LETTER UPSILON"},
	'\u03A7': {'X', "GREEK CAPITAL LETTER CHI"},
	'\u03B9': {'i', "GREEK SMALL LETTER IOTA"},
	'\u03BD': {'v', "GREEK SMALL LETTER NU"},
	'\u03BF': {'o', "GREEK SMALL LETTER OMICRON"},
	'\u0131': {'i', "LATIN SMALL LETTER DOTLESS I"},
	'\u2010': {'-', "HYPHEN"},
	'\u2011': {'-', "NON-BREAKING HYPHEN"},
	'\u2012': {'-', "FIGURE DASH"},
	'\u2013': {'-', "EN DASH"},
	'\u2014': {'-', "EM DASH"},
	'\u2212': {'-', "MINUS SIGN"},
	'\u2018': {'\'', "LEFT SINGLE QUOTATION MARK"},
	'\u2019': {'\'', "RIGHT SINGLE QUOTATION MARK"},
	'\u201C': {'"', "LEFT DOUBLE QUOTATION MARK"},
	'\u201D': {'"', "RIGHT DOUBLE QUOTATION MARK"},
	'\u00A0': {' ', "NO-BREAK SPACE"},
	'\u200B': {0, "ZERO WIDTH SPACE"},
	'\u200C': {0, "ZERO WIDTH NON-JOINER"},
	'\u200D': {0, "ZERO WIDTH JOINER"},
	'\u2060': {0, "WORD JOINER"},
	'\uFEFF': {0, "ZERO WIDTH NO-BREAK SPACE"},
}

var digitNames = [...]string{"ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"}

// lookalikeOf returns what r reads as, when it is a lookalike.
func lookalikeOf(r rune) (lookalike, bool) {
	switch {
	case r < 0x80:
		return lookalike{}, false
	case r >= '\uFF10' && r <= '\uFF19':
		return lookalike{r - 0xFEE0, "FULLWIDTH DIGIT " + digitNames[r-'\uFF10']}, true
	case r >= '\uFF21' && r <= '\uFF3A':
		return lookalike{r - 0xFEE0, "FULLWIDTH LATIN CAPITAL LETTER " + string(r-0xFEE0)}, true
	case r >= '\uFF41' && r <= '\uFF5A':
		return lookalike{r - 0xFEE0, "FULLWIDTH LATIN SMALL LETTER " + string(r-0xFEE0-0x20)}, true
	}
	l, ok := lookalikes[r]
	return l, ok
}

// lookalikeNote says which character of a value that failed its rule is
// not what it looks like, and how many others are, or "" when none is:
// "it holds U+0422 CYRILLIC CAPITAL LETTER TE where T is expected". A
// value that reads as valid to the eye is otherwise told a rule it seems
// to meet.
func lookalikeNote(s string) string {
	var first rune
	var l lookalike
	n := 0
	seen := map[rune]bool{}
	for _, r := range s {
		la, ok := lookalikeOf(r)
		if !ok || seen[r] {
			continue
		}
		seen[r] = true
		if n == 0 {
			first, l = r, la
		}
		n++
	}
	if n == 0 {
		return ""
	}
	note := fmt.Sprintf("it holds U+%04X %s", first, l.name)
	switch l.like {
	case 0:
		note += ", an invisible character"
	case ' ':
		note += " where a space is expected"
	default:
		note += " where " + string(l.like) + " is expected"
	}
	switch {
	case n == 2:
		note += ", and 1 more character that looks like another"
	case n > 2:
		note += ", and " + strconv.Itoa(n-1) + " more characters that look like others"
	}
	return note
}
