package httpwire

import (
	"iter"
	"net/http"
	"net/textproto"
	"strings"
)

// Tokens yields the elements of the comma-separated lists in values, as
// RFC 9110, section 5.6.1, reads them: trimmed, the empty ones skipped.
func Tokens(values []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, v := range values {
			for f := range strings.SplitSeq(v, ",") {
				if f = textproto.TrimString(f); f != "" && !yield(f) {
					return
				}
			}
		}
	}
}

// Listed reports whether the comma-separated lists in values name k, in
// any case.
func Listed(values []string, k string) bool {
	for f := range Tokens(values) {
		if strings.EqualFold(f, k) {
			return true
		}
	}
	return false
}

// RemoveConnectionHeaders drops from h the fields that the Connection
// values name, as httputil.ReverseProxy drops them.
func RemoveConnectionHeaders(h http.Header, connection []string) {
	for f := range Tokens(connection) {
		h.Del(f)
	}
}

// HasToken reports whether the first of values names tok, as net/http's
// server checks Connection for close: tok anywhere in the value, between
// spaces, tabs or commas, in any case. It is looser than Listed, which
// the framing of a request follows; the front answers as net/http's
// server does, so it needs both.
func HasToken(values []string, tok string) bool {
	v := FirstValue(values)
	for i := 0; i+len(tok) <= len(v); i++ {
		if (i == 0 || tokenBoundary(v[i-1])) && (i+len(tok) == len(v) || tokenBoundary(v[i+len(tok)])) &&
			strings.EqualFold(v[i:i+len(tok)], tok) {
			return true
		}
	}
	return false
}

func tokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }
