// Package suggest proposes the permitted values closest to one that was
// rejected: the "did you mean" of an error body or of a rule-file problem.
//
// Suggestions are pure and deterministic. A value that matches an alias
// comes first, then a value that differs only in case, then values within a
// small edit distance, ranked by distance and then by declared order. When
// nothing is close, there is no suggestion: a wrong hint costs the caller more
// than none.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// Max is the most suggestions Suggest returns.
const Max = 3

// Set is a permitted-value set prepared for suggestions. It is never
// modified after NewSet, so any number of goroutines may use it at once.
type Set struct {
	values  []string
	folded  []string          // values, case-folded
	runes   [][]rune          // folded, as runes
	aliases map[string]string // case-folded alias -> permitted value
}

// NewSet prepares values, in declared order, and an alias table mapping
// other names callers send (matched without regard to case) to the permitted
// value they stand for.
func NewSet(values []string, aliases map[string]string) *Set {
	s := &Set{values: values, folded: make([]string, len(values)), runes: make([][]rune, len(values))}
	for i, v := range values {
		s.folded[i] = strings.ToLower(v)
		s.runes[i] = []rune(s.folded[i])
	}
	if len(aliases) > 0 {
		s.aliases = make(map[string]string, len(aliases))
		for alias, v := range aliases {
			s.aliases[strings.ToLower(alias)] = v
		}
	}
	return s
}

// Suggest returns at most Max permitted values for received, best first,
// and nil when received is permitted exactly as sent or nothing is close.
func (s *Set) Suggest(received string) []string {
	for _, v := range s.values {
		if v == received {
			return nil // permitted as sent: nothing to suggest
		}
	}
	folded := strings.ToLower(received)
	if v, ok := s.aliases[folded]; ok {
		return []string{v}
	}
	for i, f := range s.folded {
		if f == folded {
			return []string{s.values[i]}
		}
	}
	rr := []rune(folded)
	bound := Bound(len(rr))
	if bound == 0 {
		return nil
	}
	type hit struct{ i, d int }
	var best [Max]hit
	n := 0
	var rows []int
	for i, f := range s.runes {
		d := distance(rr, f, bound, &rows)
		if d > bound {
			continue
		}
		// Insert keeping (distance, declared order); later equals stay behind.
		j := n
		for j > 0 && best[j-1].d > d {
			j--
		}
		if j >= Max {
			continue
		}
		if n < Max {
			n++
		}
		copy(best[j+1:n], best[j:n-1])
		best[j] = hit{i, d}
	}
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for k := range n {
		out[k] = s.values[best[k].i]
	}
	return out
}

// Closest returns the single best suggestion for received among values, or
// "" when none is close. It serves one-off lookups such as misspelled keys.
func Closest(received string, values []string) string {
	if got := NewSet(values, nil).Suggest(received); len(got) > 0 {
		return got[0]
	}
	return ""
}

// Bound is the largest edit distance at which a value of n runes is still
// taken for a slip rather than a different value: none for one or two runes,
// one up to five, two up to eight, three beyond.
func Bound(n int) int {
	switch {
	case n <= 2:
		return 0
	case n <= 5:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

// Distance is the optimal-string-alignment edit distance between a and b,
// counted in runes, where swapping two adjacent runes costs one. It stops
// early and returns a value above max once the distance must exceed max.
func Distance(a, b string, max int) int {
	if abs(utf8.RuneCountInString(a)-utf8.RuneCountInString(b)) > max {
		return max + 1
	}
	return distance([]rune(a), []rune(b), max, nil)
}

// distance is Distance over runes. When rows is non-nil it holds scratch
// space that one call leaves for the next.
func distance(ra, rb []rune, max int, rows *[]int) int {
	if abs(len(ra)-len(rb)) > max {
		return max + 1
	}
	// Three rolling rows: two back (for transpositions), previous, current.
	w := len(rb) + 1
	var buf []int
	if rows != nil && cap(*rows) >= 3*w {
		buf = (*rows)[:3*w]
	} else {
		buf = make([]int, 3*w)
		if rows != nil {
			*rows = buf
		}
	}
	prev2, prev, cur := buf[:w:w], buf[w:2*w:2*w], buf[2*w:]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d)
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
