package observe

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
)

// inferShape appends to dst the template of path, each segment that names
// one thing rather than a collection read as a variable, and appends the
// variables' values (slices of path) to vals: /tickets/T-88/assign is
// /tickets/{ticket_id}/assign with ticket_id T-88. A variable is named
// after the literal segment before it, singular, plus _id; with no such
// segment it is id, and a name taken twice gets _2, _3, ... A segment
// holding a brace is a variable too: as a literal it would end or open one,
// and the template's variables would no longer be the values appended.
func inferShape(dst []byte, path string, vals []string) ([]byte, []string) {
	start := len(dst)
	prev := "" // the previous segment when a literal, else ""
	rest := path
	for first := true; ; first = false {
		seg, more, found := strings.Cut(rest, "/")
		if !first {
			dst = append(dst, '/')
		}
		if isIdentifier(seg) || strings.ContainsAny(seg, "{}") {
			dst = appendVarName(dst, start, prev)
			vals = append(vals, seg)
			prev = ""
		} else {
			dst = append(dst, seg...)
			prev = seg
		}
		if !found {
			return dst, vals
		}
		rest = more
	}
}

// appendVarName appends "{name}" for a variable after the literal segment
// prev, unique among the names in dst[start:].
func appendVarName(dst []byte, start int, prev string) []byte {
	at := len(dst)
	dst = append(dst, '{')
	if prev == "" {
		dst = append(dst, "id"...)
	} else {
		dst = appendSingular(dst, prev)
		dst = append(dst, "_id"...)
	}
	base := len(dst)
	dst = append(dst, '}')
	for n := 2; bytes.Contains(dst[start:at], dst[at:]); n++ {
		dst = append(dst[:base], '_')
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '}')
	}
	return dst
}

// appendSingular appends the singular of a collection's name, in lower
// case with every other byte than a letter or digit read as _:
// tickets is ticket, categories category, addresses address.
func appendSingular(dst []byte, w string) []byte {
	lw := len(w)
	switch {
	case hasSuffixFold(w, "ies") && lw > 3:
		w = w[:lw-3] + "y"
	case hasSuffixFold(w, "sses"), hasSuffixFold(w, "xes"), hasSuffixFold(w, "ches"), hasSuffixFold(w, "shes"), hasSuffixFold(w, "uses"):
		w = w[:lw-2]
	case hasSuffixFold(w, "ss"), hasSuffixFold(w, "us"), hasSuffixFold(w, "is"):
	case hasSuffixFold(w, "s") && lw > 1:
		w = w[:lw-1]
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// isIdentifier reports whether a path segment names one thing: it holds a
// digit (but is no version such as v2), is a UUID, or is longer than 24
// bytes and not all letters.
func isIdentifier(seg string) bool {
	if seg == "" || isVersion(seg) {
		return false
	}
	letters := true
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if '0' <= c && c <= '9' {
			return true
		}
		if !('a' <= c|0x20 && c|0x20 <= 'z') {
			letters = false
		}
	}
	return isUUID(seg) || (len(seg) > 24 && !letters)
}

// isVersion reports whether seg is an API version such as v1 or v2.1.
func isVersion(seg string) bool {
	if len(seg) < 2 || (seg[0] != 'v' && seg[0] != 'V') {
		return false
	}
	dot := true // a dot may not come first, nor twice
	for i := 1; i < len(seg); i++ {
		switch c := seg[i]; {
		case '0' <= c && c <= '9':
			dot = false
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return !dot
}

// templateVars returns the names of a template's variables in order, as
// the rule file reads them.
var templateVars = rules.TemplateVariables
