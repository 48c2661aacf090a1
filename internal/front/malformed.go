package front

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/internal/httpwire"
)

// requestLineFault returns what net/http would refuse, with a 400, in the
// request line at the start of buf: the rule broken, and the line. ok is false when the line is not complete yet, is one net/http
// accepts, or is one net/http answers otherwise (too long, blank).
func requestLineFault(buf []byte, maxHeaderBytes int) (rule, line string, ok bool) {
	end := bytes.IndexByte(buf, '\n')
	if end <= 0 || end > maxHeaderBytes {
		return "", "", false
	}
	line = strings.TrimSuffix(string(buf[:end]), "\r")
	if line == "" {
		return "", "", false
	}
	const example = "e.g. GET /tickets/T-1 HTTP/1.1"
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	switch {
	case !ok1 || !ok2:
		return "the request line must be a method, a target and a protocol, separated by single spaces, " + example, line, true
	case method == "" || !httpwire.ValidFieldName(method):
		return "the method must be a token such as GET or PATCH, " + example, line, true
	}
	if _, _, good := http.ParseHTTPVersion(proto); !good {
		return "the request line must end with the protocol, HTTP/1.1, after one space; a space or control character in the target is written percent-encoded (%20), " + example, line, true
	}
	if method == http.MethodConnect && !strings.HasPrefix(target, "/") {
		return "", "", false // an authority, which net/http reads apart
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		return "the target must be a path such as /tickets/T-1, with any control character or stray % percent-encoded, " + example, line, true
	}
	return "", "", false
}

// refusesRequestLine answers a request whose request line net/http would
// refuse with a bare 400 in plain text, with the server's Refusal instead,
// and ends the connection. It reports whether it did. Without a Refusal
// the request is net/http's to answer, as it would.
func (c *frontConn) refusesRequestLine() bool {
	if c.s.Refuse == nil {
		return false
	}
	buf, _ := c.br.Peek(c.br.Buffered())
	rule, line, ok := requestLineFault(buf, c.s.maxHeaderBytes)
	if !ok {
		return false
	}
	c.refuse(CodeRequestLine, "request-line", line, rule)
	return true
}

// refusesHead answers a request whose fields net/http would refuse with a
// bare 400 in plain text (see fieldFault) with the server's Refusal
// instead, and ends the connection. It reports whether it did. Without a
// Refusal the request is net/http's to answer, as it would.
func (c *frontConn) refusesHead() bool {
	if c.s.Refuse == nil {
		return false
	}
	buf, _ := c.br.Peek(c.br.Buffered())
	f, v := fieldFault(buf)
	if v != refused {
		return false
	}
	c.refuse(f.code, f.field, f.value, f.rule)
	return true
}

// awaitsFault reports whether the unfinished head in buf holds a field
// line net/http refuses once the byte after it is in: the front waits for
// that byte, to answer the fault itself, where it would hand off a line
// it does not parse at once.
func (c *frontConn) awaitsFault(buf []byte) bool {
	if c.s.Refuse == nil {
		return false
	}
	_, v := fieldFault(buf)
	return v == pending
}

// The codes of the 400s the front answers itself, one per kind of fault.
const (
	CodeRequestLine = "invalid_request_line" // a request line net/http does not parse
	CodeHeader      = "invalid_header"       // a malformed field line, name, value or Content-Length
	CodeMissingHost = "missing_host"         // an HTTP/1.1 request with no Host field
	CodeHost        = "invalid_host"         // several Host fields, or a malformed one
	CodeFraming     = "invalid_framing"      // an HTTP/1.0 request with Transfer-Encoding
)

// RefusalCodes returns every code a Refusal is called with: a closed set,
// so that what counts refusals by code stays bounded.
func RefusalCodes() []string {
	return []string{CodeRequestLine, CodeHeader, CodeMissingHost, CodeHost, CodeFraming}
}

// Refused is a request the front refuses itself with a 400, as its
// Refusal is told of it.
type Refused struct {
	// Code is one of RefusalCodes.
	Code string
	// Field names the field at fault, or is "request-line" or
	// "header-line" for a line that names none.
	Field string
	// Value is the value or line received, as the caller sent it: any
	// bytes, control bytes and secrets included, neither escaped nor cut.
	Value string
	// Rule states the rule broken, with an example of a good line.
	Rule string
	// Remote is the caller's address, host:port.
	Remote string
}

// refuse answers a 400 with the server's Refusal and ends the connection,
// leaving the rest of the request unread.
func (c *frontConn) refuse(code, field, value, rule string) {
	ctype, body := c.s.refusal(Refused{Code: code, Field: field, Value: value, Rule: rule, Remote: c.remote})
	c.state.Store(connClosed)
	bw := c.writer()
	writeRefusal(bw, http.StatusBadRequest, ctype, body)
	_ = bw.Flush()
	c.releaseWriter()
	c.lingerClose()
}

// fault is a request head net/http refuses with a 400: the code it is
// answered with, the field at fault ("header-line" for a line that names
// none), the value or line received, and the rule it broke.
type fault struct{ code, field, value, rule string }

// verdict is what the bytes of a head so far say about its fields.
type verdict int

const (
	// noFault: net/http accepts the fields, answers them otherwise, or
	// the bytes so far do not tell yet.
	noFault verdict = iota
	// refused: net/http answers the head with a 400 for the fault.
	refused
	// pending: a field line holds a fault, and net/http answers it once
	// the byte after the line shows whether the line goes on.
	pending
)

// The rules a head's fields break, each with an example of a good line.
const (
	ruleFolded = "a field line cannot begin with a space or tab: the first field has no line above it to continue, e.g. Accept: application/json"
	ruleColon  = "a field line is a name, a colon and a value, e.g. Accept: application/json"
	ruleName   = "a field name is a token, letters, digits and !#$%&'*+-.^_`|~ only, e.g. X-Request-Id: 42"
	ruleSpaced = "a field name is followed by its colon, with no space or tab before it, e.g. X-Request-Id: 42"
	ruleValue  = "a field value holds no control character but tab: no NUL, CR, LF or DEL within it; percent-encode such bytes, e.g. X-Note: two words"
	ruleNoHost = "an HTTP/1.1 request carries a Host field naming the service, e.g. Host: api.example.com"
	ruleHost   = "the Host field holds a host name or address and an optional port, e.g. Host: api.example.com:8080"
	ruleLength = "Content-Length is the body's size in bytes, one decimal number, and repeated fields must agree, e.g. Content-Length: 42"
)

// fieldFault reads the head at the start of buf as net/http's server reads
// a request (net/http's readRequest, textproto's ReadMIMEHeader, then the
// server's checks, in their order) and returns the first fault it would
// answer with a 400 after a request line it accepts: a malformed field
// line, a field name that is not a token, a value with a control byte,
// several Host fields, a malformed Content-Length, a missing or malformed
// Host. A head net/http accepts, or answers otherwise (a request line it
// refuses, 501 for a Transfer-Encoding, 505 for a version), yields noFault,
// as does one it would not judge on these bytes alone.
//
// Only bytes in buf are read: a fault is found at the point net/http would
// find it, so net/http, given the same bytes, reads no further and never
// reaches its header limit (431), which is past the front's buffer.
func fieldFault(buf []byte) (fault, verdict) {
	line, pos, ok := nextLine(buf, 0)
	if !ok {
		return fault{}, noFault
	}
	method, major, minor, ok := acceptedRequestLine(string(line))
	if !ok {
		return fault{}, noFault
	}
	var hosts, lengths []string
	spaced, spacedRule, chunked := "", "", false
	for n := 0; ; n++ {
		if n == 0 && pos < len(buf) && (buf[pos] == ' ' || buf[pos] == '\t') {
			// textproto refuses a first field line that would continue
			// the request line.
			if line, _, ok := nextLine(buf, pos); ok {
				return fault{CodeHeader, "header-line", string(line), ruleFolded}, refused
			}
			return fault{}, noFault
		}
		line, next, ok := nextLine(buf, pos)
		if !ok {
			return fault{}, noFault
		}
		if len(line) == 0 {
			break // the end of the head
		}
		if bytes.IndexByte(line, ':') < 0 {
			// Refused as soon as the line is read, before textproto
			// looks for a continuation.
			return fault{CodeHeader, "header-line", string(line), ruleColon}, refused
		}
		// Lines that begin with a space or tab continue the line above
		// (obs-fold), each joined by one space.
		kv, whole := string(trimBlanks(line)), false
		for {
			if next >= len(buf) {
				break
			}
			if buf[next] != ' ' && buf[next] != '\t' {
				whole = true
				break
			}
			more, after, ok := nextLine(buf, next+leadingBlanks(buf[next:]))
			if !ok {
				break
			}
			kv, next = kv+" "+string(trimBlanks(more)), after
		}
		k, v, f, bad := fieldLine(kv)
		switch {
		case bad && whole:
			return f, refused
		case bad:
			return f, pending
		case !whole:
			return fault{}, noFault
		}
		switch k {
		case "Host":
			hosts = append(hosts, v)
		case "Content-Length":
			lengths = append(lengths, v)
		case "Transfer-Encoding":
			chunked = true
		}
		if spaced == "" && strings.ContainsRune(k, ' ') {
			spaced, spacedRule = kv, nameRule(k)
		}
		pos = next
	}
	// The head is whole: net/http's readRequest, then its server.
	if len(hosts) > 1 {
		return fault{CodeHost, "Host", strings.Join(hosts, ", "),
			"a request carries one Host field, not " + strconv.Itoa(len(hosts)) + ", e.g. Host: api.example.com"}, refused
	}
	if chunked {
		return fault{}, noFault // net/http may answer 501, or frame the body
	}
	if len(lengths) > 0 {
		first := textproto.TrimString(lengths[0])
		for _, l := range lengths[1:] {
			if textproto.TrimString(l) != first {
				return fault{CodeHeader, "Content-Length", strings.Join(lengths, ", "), ruleLength}, refused
			}
		}
		if first == "" {
			return fault{}, noFault // a GODEBUG setting may let net/http accept it
		}
		if _, err := strconv.ParseUint(first, 10, 63); err != nil {
			return fault{CodeHeader, "Content-Length", first, ruleLength}, refused
		}
	}
	if major != 1 {
		return fault{}, noFault // 505, or HTTP/2's preface
	}
	switch {
	case minor >= 1 && len(hosts) == 0 && method != http.MethodConnect:
		return fault{CodeMissingHost, "Host", "", ruleNoHost}, refused
	case len(hosts) == 1 && !httpwire.ValidHost(hosts[0]):
		return fault{CodeHost, "Host", hosts[0], ruleHost}, refused
	case spaced != "":
		return fault{CodeHeader, "header-line", spaced, spacedRule}, refused
	}
	return fault{}, noFault
}

// acceptedRequestLine parses a request line as net/http's readRequest
// does, and reports whether it accepts it.
func acceptedRequestLine(line string) (method string, major, minor int, ok bool) {
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !httpwire.ValidFieldName(method) {
		return "", 0, 0, false
	}
	if major, minor, ok = http.ParseHTTPVersion(proto); !ok {
		return "", 0, 0, false
	}
	if method == http.MethodConnect && !strings.HasPrefix(target, "/") {
		target = "http://" + target // an authority, read as net/http reads it
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		return "", 0, 0, false
	}
	return method, major, minor, true
}

// fieldLine splits a field line, its continuations joined, as textproto
// does: the name, canonical unless it holds a space, and the value less
// its leading blanks; or the fault textproto refuses it for.
func fieldLine(kv string) (name, value string, f fault, bad bool) {
	k, v, _ := strings.Cut(kv, ":")
	spaced := false
	for i := 0; i < len(k); i++ {
		switch {
		case httpwire.ValidFieldName(k[i : i+1]):
		case k[i] == ' ':
			// textproto takes it; the server refuses it once the head
			// is read.
			spaced = true
		default:
			return "", "", fault{CodeHeader, "header-line", kv, nameRule(k)}, true
		}
	}
	if k == "" {
		return "", "", fault{CodeHeader, "header-line", kv, ruleName}, true
	}
	if !spaced {
		k = textproto.CanonicalMIMEHeaderKey(k)
	}
	value = strings.TrimLeft(v, " \t")
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < ' ' && b != '\t' || b == 0x7f {
			if spaced {
				return "", "", fault{CodeHeader, "header-line", kv, ruleValue}, true
			}
			return "", "", fault{CodeHeader, k, value, ruleValue}, true
		}
	}
	return k, value, fault{}, false
}

// nameRule is the rule a field name that is not a token broke: a blank
// before the colon, or a byte no token holds.
func nameRule(k string) string {
	if t := strings.TrimRight(k, " \t"); t != k && httpwire.ValidFieldName(t) {
		return ruleSpaced
	}
	return ruleName
}

// nextLine returns the line of buf that starts at pos, without its LF and
// a CR before it, as bufio's ReadLine does, and where the next begins; ok
// is false when the line has not ended yet.
func nextLine(buf []byte, pos int) (line []byte, next int, ok bool) {
	if pos >= len(buf) {
		return nil, 0, false
	}
	i := bytes.IndexByte(buf[pos:], '\n')
	if i < 0 {
		return nil, 0, false
	}
	return bytes.TrimSuffix(buf[pos:pos+i], []byte("\r")), pos + i + 1, true
}

// trimBlanks drops the spaces and tabs around b, as textproto trims a
// field line.
func trimBlanks(b []byte) []byte { return bytes.Trim(b, " \t") }

// leadingBlanks counts the spaces and tabs b starts with.
func leadingBlanks(b []byte) int { return len(b) - len(bytes.TrimLeft(b, " \t")) }
