package front

import (
	"bytes"
	"net/http"
	"net/url"
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
	ctype, body := c.s.refusal("invalid_request_line", "request-line", line, rule)
	c.state.Store(connClosed)
	bw := c.writer()
	writeRefusal(bw, http.StatusBadRequest, ctype, body)
	_ = bw.Flush()
	c.releaseWriter()
	c.lingerClose() // the rest of the request is left unread
	return true
}
