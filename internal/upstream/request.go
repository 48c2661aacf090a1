package upstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/signpost-proxy/signpost/internal/buffers"
	"github.com/signpost-proxy/signpost/internal/httpwire"
)

// Request is a caller's request as the upstream receives it: written each
// time an exchange asks, since a request may go again on a fresh
// connection.
type Request struct {
	// In is the caller's request: its method, target, header and, unless
	// Body holds it, its body.
	In *http.Request
	// Body is In's body, already read whole; nil when it streams from
	// In.Body as it is written.
	Body []byte
	// Host is the Host the upstream is sent.
	Host string
	// Own names the header the proxy sets on In itself (its request id):
	// sent though the caller's Connection lists it, and dropped when the
	// caller spells it with underscores.
	Own string
	// Early receives the informational answers before the final one,
	// 103 Early Hints say, as httputil.ReverseProxy passes them on; nil
	// drops them.
	Early interface {
		Header() http.Header
		WriteHeader(code int)
	}
}

// streams reports whether the body streams from the caller as it is
// written, and so takes as long as the caller does.
func (r *Request) streams() bool {
	return r.Body == nil && r.In.Body != nil && r.In.Body != http.NoBody
}

// resendable reports whether the body can be written again: there is
// none, or it was read whole before.
func (r *Request) resendable() bool { return !r.streams() }

// replayable reports whether the request may be sent again on its own
// once written, as httputil.ReverseProxy's transport judges: a request with
// a body, which it cannot rewind, never goes twice once written, whether
// the body was read whole or not; one without goes again when its method
// reads, or it carries an idempotency key.
func (r *Request) replayable() bool {
	if r.Body != nil || r.streams() {
		return false
	}
	switch r.In.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := r.In.Header["Idempotency-Key"]
	_, xkey := r.In.Header["X-Idempotency-Key"]
	return key || xkey
}

// informational passes on a 1xx answer.
func (r *Request) informational(code int, h http.Header) {
	if r.Early == nil {
		return
	}
	wh := r.Early.Header()
	for k, vv := range h {
		wh[k] = vv
	}
	r.Early.WriteHeader(code)
	clear(wh) // a 1xx answer's fields are its own
}

// write writes the request line, header and body as the upstream receives
// them: hop-by-hop headers dropped, forwarding headers set from the
// connection rather than trusted from the caller, and the body framed by
// its length, or chunked when the length is unknown.
func (r *Request) write(bw *bufio.Writer) error {
	in := r.In
	bw.WriteString(in.Method)
	bw.WriteByte(' ')
	bw.WriteString(requestURI(in.URL))
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(r.Host)
	bw.WriteString("\r\n")
	connectionTokens := in.Header["Connection"]
	for k, vv := range in.Header {
		if httpwire.Framing(k, r.Own) || k != r.Own && httpwire.Listed(connectionTokens, k) {
			continue
		}
		for _, v := range vv {
			httpwire.WriteField(bw, k, v)
		}
	}
	if te := in.Header["Te"]; len(te) > 0 && httpwire.Listed(te, "trailers") {
		httpwire.WriteField(bw, "Te", "trailers")
	}
	if ip, _, err := net.SplitHostPort(in.RemoteAddr); err == nil {
		httpwire.WriteField(bw, "X-Forwarded-For", ip)
	}
	httpwire.WriteField(bw, "X-Forwarded-Host", in.Host)
	if in.TLS == nil {
		httpwire.WriteField(bw, "X-Forwarded-Proto", "http")
	} else {
		httpwire.WriteField(bw, "X-Forwarded-Proto", "https")
	}

	size := in.ContentLength
	if r.Body != nil {
		size = int64(len(r.Body))
	}
	streamed := r.streams()
	switch {
	case size > 0 || size == 0 && sendsLength(in.Method):
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.FormatInt(size, 10))
		bw.WriteString("\r\n\r\n")
	case size < 0 && streamed:
		bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		if err := flushUnlessArrived(bw, in.Body); err != nil {
			return err
		}
		return copyChunked(bw, callerBody{in.Body})
	default:
		_, err := bw.WriteString("\r\n")
		return err
	}
	switch {
	case r.Body != nil:
		_, err := bw.Write(r.Body)
		return err
	case streamed:
		if err := flushUnlessArrived(bw, in.Body); err != nil {
			return err
		}
		n, err := copyBody(flushing{bw}, io.LimitReader(callerBody{in.Body}, size))
		if err == nil && n < size {
			err = fmt.Errorf("%w: %w", ErrRequestBody, errShortBody)
		}
		return err
	}
	return nil
}

// ErrRequestBody marks a failure to read the caller's body as a request
// was written: the caller's fault, not the upstream's.
var ErrRequestBody = errors.New("the request body could not be read")

// errShortBody is a request body that ended before its Content-Length.
var errShortBody = errors.New("the request body ended before its declared Content-Length")

// callerBody tags the errors of reading a request body with
// ErrRequestBody.
type callerBody struct{ io.Reader }

func (b callerBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", ErrRequestBody, err)
	}
	return n, err
}

// flushUnlessArrived sends what bw holds of a request, its head, before
// its body streams from the caller, as http.Transport does: the upstream
// may answer the head alone (401, 413) while the caller is still sending.
// A body that has arrived whole goes with the head, in one write.
func flushUnlessArrived(bw *bufio.Writer, body io.Reader) error {
	if b, ok := body.(httpwire.ArrivedBody); ok && b.Arrived() {
		return nil
	}
	return bw.Flush()
}

// flushing writes each piece of a streamed body on at once, as it comes
// from the caller, rather than once a buffer fills.
type flushing struct{ bw *bufio.Writer }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.bw.Write(p)
	if err == nil {
		err = f.bw.Flush()
	}
	return n, err
}

// copyChunked writes src to bw in chunked framing, each piece sent on as
// it comes from the caller, then the last chunk.
func copyChunked(bw *bufio.Writer, src io.Reader) error {
	lent := buffers.Large.Borrow()
	defer buffers.Large.Return(lent)
	buf := *lent
	var size [16]byte
	for {
		n, err := src.Read(buf)
		if n > 0 {
			bw.Write(strconv.AppendInt(size[:0], int64(n), 16))
			bw.WriteString("\r\n")
			bw.Write(buf[:n])
			bw.WriteString("\r\n")
			if ferr := bw.Flush(); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			_, err = bw.WriteString("0\r\n\r\n")
			return err
		}
		if err != nil {
			return err
		}
	}
}

// copyBody streams a request body through a pooled buffer.
func copyBody(dst io.Writer, src io.Reader) (int64, error) {
	lent := buffers.Large.Borrow()
	defer buffers.Large.Return(lent)
	return io.CopyBuffer(writerOnly{dst}, src, *lent)
}

// writerOnly hides a writer's ReadFrom, so that io.CopyBuffer uses the
// pooled buffer it is given.
type writerOnly struct{ io.Writer }

// requestURI is u's target as httputil.ReverseProxy forwards it: a query
// holding a semicolon or a malformed escape, which servers split in
// different places, is written again with the parameters net/url cannot
// parse left out, so that the upstream reads the parameters the proxy read.
func requestURI(u *url.URL) string {
	if plainQuery(u.RawQuery) {
		return u.RequestURI()
	}
	v, _ := url.ParseQuery(u.RawQuery)
	clean := *u
	clean.RawQuery = v.Encode()
	return clean.RequestURI()
}

// plainQuery reports whether q holds no semicolon and only well-formed
// escapes.
func plainQuery(q string) bool {
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// sendsLength reports whether an empty body is still announced with
// Content-Length: 0, as http.Transport does for methods that carry one.
func sendsLength(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}
