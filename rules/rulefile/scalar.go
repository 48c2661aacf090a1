package rulefile

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// plainText is what a scalar may hold unquoted in block and flow context
// alike, if YAML also reads it back as the same string: no comma, bracket,
// brace, colon or #, and no indicator first.
var plainText = regexp.MustCompile(`^[A-Za-z0-9_./$^()+\\][A-Za-z0-9 _./@$^()+=\\'’!?;-]*$`)

// Scalar renders s as a YAML string usable in block and flow context
// ([a, b] and {k: v}): plain when that reads back as the same string under
// YAML 1.2 and 1.1, else quoted.
func Scalar(s string) string {
	if plainText.MatchString(s) && !strings.HasSuffix(s, " ") && !yaml11NotString(s) && readsBack(s) {
		return s
	}
	return Quoted(s)
}

// BlockScalar renders s as a block mapping's value, where more may stay
// plain than in a flow: a path template (/tickets/{ticket_id}), a call
// (list_tickets(status)), a sentence with commas. Written anywhere else,
// use Scalar.
func BlockScalar(s string) string {
	if q := Scalar(s); q == s {
		return q
	}
	if s == "" || strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`", rune(s[0])) || strings.TrimSpace(s) != s ||
		yaml11NotString(s) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return Quoted(s)
	}
	if v, ok := readAs("k: " + s); !ok || v != s {
		return Quoted(s)
	}
	return s
}

// Quoted renders s always quoted: single quotes, or double quotes with
// escapes when s holds what single quotes cannot (a line break, a control
// or other unprintable character). A pattern reads best this way. A byte
// that is not UTF-8, which no YAML file can hold, is written as an escape
// and reads back as the character of that number.
func Quoted(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(s) // Go's escapes are a subset of YAML's double-quoted ones
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// FlowList renders values as a flow sequence of strings: [a, b].
func FlowList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = Scalar(v)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// KV is one key of a flow mapping with its value already rendered.
type KV struct{ Key, Value string }

// Pair is the key k with its rendered value v.
func Pair(k, v string) KV { return KV{k, v} }

// FlowMap renders pairs as a flow mapping: {k: v, k2: v2}.
func FlowMap(pairs ...KV) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = Scalar(p.Key) + ": " + p.Value
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// readsBack reports whether s, written plain, reads back as the string s
// as a block mapping's value and inside a flow mapping.
func readsBack(s string) bool {
	for _, doc := range []string{"k: " + s, "{k: " + s + "}"} {
		if v, ok := readAs(doc); !ok || v != s {
			return false
		}
	}
	return true
}

// readAs reads a one-key mapping and returns its value, if a string.
func readAs(doc string) (string, bool) {
	var n yaml.Node
	if yaml.Unmarshal([]byte(doc), &n) != nil || len(n.Content) != 1 || len(n.Content[0].Content) != 2 {
		return "", false
	}
	v := n.Content[0].Content[1]
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return "", false
	}
	return v.Value, true
}

// YAML 1.1's implicit types, as its resolvers (PyYAML, SnakeYAML, older
// Ruby and Go libraries) apply them to plain scalars. yaml.v3 reads most of
// these as strings; a rule file should read the same to every tool.
var (
	yaml11Bool      = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "true": true, "false": true, "on": true, "off": true}
	yaml11Null      = map[string]bool{"": true, "~": true, "null": true}
	yaml11Int       = regexp.MustCompile(`^[-+]?(0b[01_]+|0[0-7_]+|(0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)$`)
	yaml11Float     = regexp.MustCompile(`^([-+]?([0-9][0-9_]*)?\.[0-9._]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
	yaml11Timestamp = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)$`)
)

// yaml11NotString reports whether a YAML 1.1 reader takes s, written plain,
// for a boolean, null, number or timestamp, or for the merge key or value
// indicator.
func yaml11NotString(s string) bool {
	l := strings.ToLower(s)
	return yaml11Bool[l] || yaml11Null[l] || s == "<<" || s == "=" ||
		yaml11Int.MatchString(s) || yaml11Float.MatchString(s) || yaml11Timestamp.MatchString(s)
}
