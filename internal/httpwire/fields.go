package httpwire

import (
	"bufio"
	"net/http"
	"net/textproto"
	"strings"
)

// WriteField writes one header field, its value cleaned as net/http cleans
// it: line breaks become spaces, surrounding blanks go.
func WriteField(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(cleanValue(v))
	bw.WriteString("\r\n")
}

// AppendField appends the field WriteField writes to b.
func AppendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, cleanValue(v)...)
	return append(b, "\r\n"...)
}

// newlineToSpace turns the line breaks of a field value into spaces.
var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// cleanValue returns v as a field may carry it: line breaks made spaces,
// surrounding blanks trimmed, as net/http writes it.
func cleanValue(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] == '\r' || v[i] == '\n' {
			v = newlineToSpace.Replace(v)
			break
		}
	}
	return textproto.TrimString(v)
}

// ValidFieldName reports whether k is a token, as a header field name must
// be; net/http drops fields whose name is not.
func ValidFieldName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !tokenByte[k[i]] {
			return false
		}
	}
	return true
}

// tokenChars are the bytes of a token (RFC 9110, section 5.6.2).
const tokenChars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// tokenByte marks the bytes of tokenChars.
var tokenByte = func() (t [256]bool) {
	for i := 0; i < len(tokenChars); i++ {
		t[tokenChars[i]] = true
	}
	return t
}()

// PlainBytes reports whether a head holds no control byte but tab and
// CRLF line ends, as both head parsers require.
func PlainBytes(head []byte) bool {
	for i, b := range head {
		if b < ' ' && b != '\t' && b != '\r' && b != '\n' || b == 0x7f || b == '\r' && (i+1 == len(head) || head[i+1] != '\n') {
			return false
		}
	}
	return true
}

// CutField splits the first line off rest, a run of CRLF-ended field
// lines: the field's canonical name and trimmed value, and the lines after
// it. ok is false for a line that is not a well-formed field.
func CutField(rest string) (k, v, tail string, ok bool) {
	i := strings.IndexByte(rest, '\n')
	field := rest[:i-1]
	colon := strings.IndexByte(field, ':')
	if colon <= 0 || !ValidFieldName(field[:colon]) {
		return "", "", "", false
	}
	return textproto.CanonicalMIMEHeaderKey(field[:colon]), textproto.TrimString(field[colon+1:]), rest[i+1:], true
}

// AddValue adds v to h[k], taking a first value's slice from values, one
// backing array for the whole head; it returns what is left of values.
func AddValue(h http.Header, values []string, k, v string) []string {
	values[0] = v
	if vv := h[k]; vv == nil {
		h[k] = values[:1:1]
	} else {
		h[k] = append(vv, v)
	}
	return values[1:]
}

// HopByHop reports whether a header concerns one connection only, so a
// proxy must not pass it on (RFC 9110, section 7.6.1).
func HopByHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// Forwarding reports whether a header says where a request came from:
// Forwarded and every X-Forwarded-*. A proxy sets its own from the
// connection it accepted; a caller's are not passed on, since any caller
// can write them.
func Forwarding(k string) bool {
	return k == "Forwarded" || strings.HasPrefix(k, "X-Forwarded-")
}

// Framing reports whether a request header is one a proxy writes itself
// or drops: hop-by-hop, forwarding, Content-Length. A name spelled with
// underscores counts as the one with dashes, since CGI-style upstreams read
// X_Forwarded_For as X-Forwarded-For; so do Host and own, a header the
// proxy sets itself, spelled so.
func Framing(k, own string) bool {
	if strings.IndexByte(k, '_') >= 0 {
		k = textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(k, "_", "-"))
		if k == "Host" || k == own {
			return true
		}
	}
	return HopByHop(k) || Forwarding(k) || k == "Content-Length"
}

// FirstValue is vs' first value, or "": http.Header.Get for a key known
// to be canonical, without canonicalizing it again.
func FirstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
