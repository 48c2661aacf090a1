package draft

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/signpost-proxy/signpost/observe"
	"gopkg.in/yaml.v3"
)

// writer builds a YAML file line by line, so that an inference can be
// written commented out beside the active ones; every scalar goes through
// scalar, which quotes it as yaml.v3 does.
type writer struct{ b strings.Builder }

// line writes one line at an indent of spaces; commented writes it behind
// "# ", for the reviewer to confirm.
func (w *writer) line(indent int, commented bool, text string) {
	w.b.WriteString(strings.Repeat(" ", indent))
	if commented {
		w.b.WriteString("#")
		if text != "" {
			w.b.WriteString(" ")
		}
	}
	w.b.WriteString(text)
	w.b.WriteByte('\n')
}

// comment writes a comment, one line per line of text.
func (w *writer) comment(indent int, text string) {
	for _, l := range strings.Split(text, "\n") {
		w.line(indent, true, oneLine(l))
	}
}

func (w *writer) blank() { w.b.WriteByte('\n') }

// plainScalar is text that may be written unquoted in block and flow
// context alike, if it also reads back as the same string.
var plainScalar = regexp.MustCompile(`^[A-Za-z0-9_./$^()+][A-Za-z0-9 _./@$^()+=-]*$`)

// yaml11Words read as booleans or null to YAML 1.1 tools, which other
// readers of the file may be: quote them though yaml.v3 reads them as text.
var yaml11Words = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true, "~": true, "null": true, "true": true, "false": true}

// scalar renders s as a YAML string usable in block and flow context: plain
// when that reads back as the same string, else quoted by yaml.v3 (single
// quotes, or double quotes with escapes for what single ones cannot hold).
func scalar(s string) string {
	if plainScalar.MatchString(s) && !strings.HasSuffix(s, " ") && !yaml11Words[strings.ToLower(s)] && readsAs(s) {
		return s
	}
	style := yaml.SingleQuotedStyle
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == '\u2028' || r == '\u2029' }) {
		style = yaml.DoubleQuotedStyle
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: style})
	if err != nil || strings.Count(strings.TrimSuffix(string(out), "\n"), "\n") > 0 {
		return strconv.Quote(s) // a JSON string is a YAML double-quoted one
	}
	return strings.TrimSuffix(string(out), "\n")
}

// blockScalar renders s as a YAML string for block context only, where a
// path template or a call may stay plain: /tickets/{ticket_id}.
func blockScalar(s string) string {
	if q := scalar(s); q == s || s == "" || strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`", rune(s[0])) ||
		strings.TrimSpace(s) != s || yaml11Words[strings.ToLower(s)] || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return q
	}
	var n yaml.Node
	if yaml.Unmarshal([]byte("k: "+s), &n) != nil || len(n.Content) != 1 || len(n.Content[0].Content) != 2 {
		return scalar(s)
	}
	if v := n.Content[0].Content[1]; v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value != s {
		return scalar(s)
	}
	return s
}

// readsAs reports whether s, written plain, reads back as the string s as
// a mapping value and in a flow mapping.
func readsAs(s string) bool {
	for _, doc := range []string{"k: " + s, "{k: " + s + "}"} {
		var n yaml.Node
		if yaml.Unmarshal([]byte(doc), &n) != nil || len(n.Content) != 1 || len(n.Content[0].Content) != 2 {
			return false
		}
		v := n.Content[0].Content[1]
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value != s {
			return false
		}
	}
	return true
}

// flowList renders values as a flow sequence of strings.
func flowList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = scalar(v)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// kv is one key and its already rendered value, for a flow mapping.
type kv struct{ k, v string }

func flowMap(pairs []kv) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = scalar(p.k) + ": " + p.v
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// oneLine keeps text to one printable line, for a comment.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
}

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
