package draft

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/signpost-proxy/signpost/observe"
)

// commentValue shows a value in a comment: as it is when it reads plainly,
// else as a Go string; cut to 60 characters.
func commentValue(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == '#' }) || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// count says n of a noun: "1 request", "3 requests", "2 recoveries".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// percentOf says what share of total n is, e.g. "12% of 100 requests".
func percentOf(n, total int64, noun string) string {
	if total <= 0 {
		return "of no " + noun + " counted"
	}
	return fmt.Sprintf("%d%% of %d %s", n*100/total, total, noun)
}

// valueList shows values with their counts, the first max of them.
func valueList(vs []observe.Value, max int) string {
	var parts []string
	for i, v := range vs {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(vs)-max))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", commentValue(v.Value), v.Count))
	}
	return strings.Join(parts, ", ")
}

// exampleNote is ", e.g. V" for the most frequent value not masked.
func exampleNote(vs []observe.Value) string {
	for _, v := range vs {
		if !strings.Contains(v.Value, masked) {
			return ", e.g. " + commentValue(v.Value)
		}
	}
	return ""
}

// sortAliases orders aliases most seen first, then by name.
func sortAliases(as []aliasDraft) {
	slices.SortStableFunc(as, func(a, b aliasDraft) int {
		if a.count != b.count {
			if a.count > b.count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.from, b.from)
	})
}
