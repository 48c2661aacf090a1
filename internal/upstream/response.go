package upstream

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/internal/httpwire"
)

// readSimpleResponse reads the head of an upstream's response of the
// common kind, HTTP/1.1 with a Content-Length, from what br already holds,
// at less cost than http.ReadResponse. It returns false, having consumed
// nothing, for anything else: 1xx, 204 and 304 answers, answers to HEAD,
// chunked or unframed bodies, folded or malformed lines, and fields
// http.ReadResponse treats specially; http.ReadResponse reads those.
// The response and its header are into's, written over, when into is not
// nil.
func readSimpleResponse(br *bufio.Reader, req *http.Request, into *Reused) (*http.Response, bool) {
	if req.Method == http.MethodHead {
		return nil, false
	}
	buf, _ := br.Peek(br.Buffered())
	end, crlf := httpwire.HeadEnd(buf)
	if end == 0 || !crlf {
		return nil, false
	}
	head := buf[:end-2] // through the CRLF of the last field
	if !httpwire.PlainBytes(head) {
		return nil, false
	}
	// HTTP/1.1 SP 3DIGIT [SP reason] CRLF
	if len(head) < 14 || string(head[:9]) != "HTTP/1.1 " {
		return nil, false
	}
	code := 0
	for _, b := range head[9:12] {
		if b < '0' || b > '9' {
			return nil, false
		}
		code = code*10 + int(b-'0')
	}
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified || head[12] != ' ' && head[12] != '\r' {
		return nil, false
	}
	// One string holds the head; the status and every field are parts of it.
	s := string(head)
	line := strings.IndexByte(s, '\n')
	res := into.response()
	*res = http.Response{
		Status:     strings.TrimLeft(s[9:line-1], " "),
		StatusCode: code,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Request:    req,
	}
	n := strings.Count(s[line+1:], "\n")
	h := into.header(n)
	values := make([]string, n)
	length := int64(-1)
	connection := 0
	for rest := s[line+1:]; rest != ""; {
		k, v, tail, ok := httpwire.CutField(rest)
		if !ok {
			return nil, false
		}
		rest = tail
		switch k {
		case "Transfer-Encoding", "Trailer", "Pragma":
			return nil, false
		case "Content-Length":
			if length >= 0 || v == "" || len(v) > 18 {
				return nil, false
			}
			for i := 0; i < len(v); i++ {
				if v[i] < '0' || v[i] > '9' {
					return nil, false
				}
			}
			length, _ = strconv.ParseInt(v, 10, 64)
		case "Connection":
			if connection++; connection > 1 {
				return nil, false // http.ReadResponse drops them all when one says close
			}
			if httpwire.Listed([]string{v}, "close") {
				res.Close = true
				continue // http.ReadResponse drops it, the framing said
			}
		}
		values = httpwire.AddValue(h, values, k, v)
	}
	if length < 0 {
		return nil, false
	}
	res.Header = h
	res.ContentLength = length
	if length == 0 {
		res.Body = http.NoBody
	} else {
		res.Body = into.body(br, length)
	}
	_, _ = br.Discard(end)
	return res, true
}

// Reused is what readSimpleResponse parses an answer's head into
// for a caller that is done with the last one: the response, its header
// map and its body's reader. The header's values are not reused: a
// caller's response header may share them.
type Reused struct {
	res   http.Response
	h     http.Header
	fixed fixedBody
}

// response returns r's response, or a new one when r is nil.
func (r *Reused) response() *http.Response {
	if r == nil {
		return new(http.Response)
	}
	return &r.res
}

// body returns r's body reader for an answer of length bytes from br, or a
// new one when r is nil.
func (r *Reused) body(br *bufio.Reader, length int64) *fixedBody {
	if r == nil {
		return &fixedBody{r: br, left: length}
	}
	r.fixed = fixedBody{r: br, left: length}
	return &r.fixed
}

// header returns r's header, emptied, with room for n fields; a new one
// when r is nil or n is over keptFields.
func (r *Reused) header(n int) http.Header {
	if r == nil || n > keptFields {
		return make(http.Header, n)
	}
	if r.h == nil {
		r.h = make(http.Header, n)
	}
	clear(r.h)
	return r.h
}

// fixedBody is a response body of declared length: one that ends before
// it is cut short, io.ErrUnexpectedEOF.
type fixedBody struct {
	r    *bufio.Reader
	left int64
}

func (b *fixedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		return n, io.EOF
	case err == io.EOF:
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *fixedBody) Close() error { return nil }

// keptFields bounds the header map a Reused keeps from one answer to the
// next.
const keptFields = 32

// Clear empties r for the next answer, keeping its header map.
func (r *Reused) Clear() {
	h := r.h
	clear(h)
	*r = Reused{h: h}
}
