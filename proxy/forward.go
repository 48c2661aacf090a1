package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/internal/upstream"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
)

// direct reports whether signpost forwards r itself rather than through
// httputil.ReverseProxy: a plain-http upstream and an ordinary HTTP/1
// exchange. Protocol upgrades and 100-continue take the general path.
func (p *Proxy) direct(r *http.Request) bool {
	if p.conns == nil || r.ProtoMajor != 1 {
		return false
	}
	_, upgrade := r.Header["Upgrade"]
	_, expect := r.Header["Expect"]
	return !upgrade && !expect
}

// forward sends r to the upstream on a pooled connection, lets the rules
// look at the response, and streams it to the caller.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, ex *exchange) {
	ex.out = outgoing{p: p, r: r, body: ex.req.Body, w: w}
	res, err := p.conns.Exchange(r.Context(), p.upstreamAddr, &ex.out, r, &ex.response)
	if err != nil {
		if errors.Is(err, upstream.ErrRequestBody) {
			// The caller's body was malformed or cut short: the upstream
			// got an unfinished request, dropped with its connection.
			p.unreadableBody(w, r, ex)
			return
		}
		p.failed(w, r, ex, err)
		return
	}
	upstream := res.Body
	defer upstream.Close()
	_ = p.modify(res, ex)
	if x := ex.examined; x != nil {
		// Deferred first, so run last: after the body is sent and closed.
		defer recycle(x)
	}
	if res.Body != upstream {
		defer res.Body.Close()
	}

	h := w.Header()
	connectionTokens := res.Header["Connection"]
	for k, vv := range res.Header {
		if !httpwire.HopByHop(k) {
			h[k] = vv
		}
	}
	httpwire.RemoveConnectionHeaders(h, connectionTokens)
	untyped(h, res.Header)
	// The id is signpost's, whatever the upstream's Connection names;
	// observe mode adds nothing.
	if !ex.observing {
		h[RequestIDHeader] = ex.idValue
	}
	// Trailers the upstream announced are announced again, the Trailer
	// field being hop-by-hop, as httputil.ReverseProxy does.
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h["Trailer"] = []string{strings.Join(keys, ", ")}
	}
	w.WriteHeader(res.StatusCode)
	if err := copyBody(w, res, flushesAtOnce(res)); err != nil {
		p.cutMidAnswer(ex, r, errors.Is(err, errUpstreamBody))
		if errors.Is(err, errUpstreamBody) {
			// The caller must see the response cut, not a complete one.
			panic(http.ErrAbortHandler)
		}
		return
	}
	if len(res.Trailer) == 0 {
		return
	}
	// A body of trailers goes chunked, however short.
	http.NewResponseController(w).Flush()
	for k, vv := range res.Trailer {
		if announced == len(res.Trailer) {
			h[k] = vv
		} else {
			h[http.TrailerPrefix+k] = vv
		}
	}
}

// untyped keeps an answer the upstream sent with no Content-Type without
// one: the field is set empty in the caller's header h, which the front
// and net/http's server then leave unset where they would sniff a type,
// as nginx and HAProxy pass such an answer.
func untyped(h, upstream http.Header) {
	if _, typed := upstream["Content-Type"]; !typed {
		h["Content-Type"] = nil
	}
}

// cutMidAnswer books an answer whose body stopped before its end: the
// upstream broke off (its read failed while the caller was there), or the
// caller left. Either way the answer was not the success, or the error,
// it began as.
func (p *Proxy) cutMidAnswer(ex *exchange, r *http.Request, upstreamRead bool) {
	if !upstreamRead || r.Context().Err() != nil {
		ex.outcome = metrics.OutcomeCancelled
		p.log.Info("caller left mid-answer", "request_id", ex.id, "status", ex.status)
		return
	}
	ex.outcome = metrics.OutcomeFailed
	name := metrics.Unrouted
	if ex.route != nil {
		name = ex.route.Name
	}
	p.log.Warn("upstream broke off mid-answer", "request_id", ex.id, "route", name, "status", ex.status)
}

// outgoing is a request as the upstream receives it, written by writeTo,
// whose informational answers go to w.
type outgoing struct {
	p    *Proxy
	r    *http.Request
	body []byte // r's body, already read, or nil
	w    http.ResponseWriter
}

func (o *outgoing) WriteRequest(bw *bufio.Writer) error { return o.p.writeRequest(bw, o.r, o.body) }

func (o *outgoing) Informational(code int, h http.Header) {
	wh := o.w.Header()
	for k, vv := range h {
		wh[k] = vv
	}
	o.w.WriteHeader(code)
	clear(wh) // a 1xx answer's fields are its own
}

func (o *outgoing) Streams() bool {
	return o.body == nil && o.r.Body != nil && o.r.Body != http.NoBody
}

func (o *outgoing) Resendable() bool { return !o.Streams() }

// Replayable judges as httputil.ReverseProxy's transport does: a request
// with a body, which it cannot rewind, never goes twice once written,
// whether signpost buffered the body or not.
func (o *outgoing) Replayable() bool { return o.body == nil && !o.Streams() && replayable(o.r) }

// replayable judges as http.Transport does before sending a request
// without a body again on its own: the method is one that reads, or the
// request carries an idempotency key.
func replayable(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return idempotencyKey(r.Header)
}

// idempotent reports whether sending r twice does what sending it once
// does (RFC 9110, section 9.2.2), or r carries an idempotency key: what a
// caller may be told when the upstream's answer was lost.
func idempotent(r *http.Request) bool {
	return rewrite.Idempotent(r.Method, r.Header)
}

// idempotencyKey reports whether h carries a key by which the upstream
// tells a repeated request from a new one.
func idempotencyKey(h http.Header) bool {
	_, key := h["Idempotency-Key"]
	_, xkey := h["X-Idempotency-Key"]
	return key || xkey
}

// writeRequest writes the request line, headers and body of r as the
// upstream receives them: hop-by-hop headers dropped, forwarding headers
// set from the connection rather than trusted from the caller, and the body
// framed by its length, or chunked when the length is unknown. body, when
// not nil, is r's body, already read.
func (p *Proxy) writeRequest(bw *bufio.Writer, r *http.Request, body []byte) error {
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	bw.WriteString(requestURI(r.URL))
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(p.target.Host)
	bw.WriteString("\r\n")
	connectionTokens := r.Header["Connection"]
	for k, vv := range r.Header {
		if framing(k) || k != RequestIDHeader && httpwire.Listed(connectionTokens, k) {
			continue
		}
		for _, v := range vv {
			httpwire.WriteField(bw, k, v)
		}
	}
	if te := r.Header["Te"]; len(te) > 0 && httpwire.Listed(te, "trailers") {
		httpwire.WriteField(bw, "Te", "trailers")
	}
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		httpwire.WriteField(bw, "X-Forwarded-For", ip)
	}
	httpwire.WriteField(bw, "X-Forwarded-Host", r.Host)
	if r.TLS == nil {
		httpwire.WriteField(bw, "X-Forwarded-Proto", "http")
	} else {
		httpwire.WriteField(bw, "X-Forwarded-Proto", "https")
	}

	size := r.ContentLength
	if body != nil {
		size = int64(len(body))
	}
	streamed := body == nil && r.Body != nil && r.Body != http.NoBody
	switch {
	case size > 0 || size == 0 && sendsLength(r.Method):
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.FormatInt(size, 10))
		bw.WriteString("\r\n\r\n")
	case size < 0 && streamed:
		bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		if err := flushUnlessArrived(bw, r.Body); err != nil {
			return err
		}
		return copyChunked(bw, callerBody{r.Body})
	default:
		_, err := bw.WriteString("\r\n")
		return err
	}
	switch {
	case body != nil:
		_, err := bw.Write(body)
		return err
	case streamed:
		if err := flushUnlessArrived(bw, r.Body); err != nil {
			return err
		}
		n, err := copyRequestBody(flushing{bw}, io.LimitReader(callerBody{r.Body}, size))
		if err == nil && n < size {
			err = fmt.Errorf("%w: %w", upstream.ErrRequestBody, errShortBody)
		}
		return err
	}
	return nil
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
	buf := largeBuffers.Get()
	defer largeBuffers.Put(buf)
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

// requestURI is u's target as httputil.ReverseProxy forwards it: a query
// holding a semicolon or a malformed escape, which servers split in
// different places, is written again with the parameters net/url cannot
// parse left out, so that the upstream reads the parameters signpost read.
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

// copyRequestBody streams a request body the proxy did not buffer through a
// pooled buffer.
func copyRequestBody(dst io.Writer, src io.Reader) (int64, error) {
	buf := largeBuffers.Get()
	defer largeBuffers.Put(buf)
	return io.CopyBuffer(writerOnly{dst}, src, buf)
}

// writerOnly hides a writer's ReadFrom, so that io.CopyBuffer uses the
// pooled buffer it is given.
type writerOnly struct{ io.Writer }

// errUpstreamBody marks a copy that failed reading the upstream's body, as
// opposed to writing to the caller.
var errUpstreamBody = errors.New("the upstream's body broke off")

// callerBody tags the errors of reading a request body with
// upstream.ErrRequestBody.
type callerBody struct{ io.Reader }

func (b callerBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", upstream.ErrRequestBody, err)
	}
	return n, err
}

// unreadableBody answers a request whose body could not be read to its
// end: malformed chunked framing, or a caller that stopped sending.
func (p *Proxy) unreadableBody(w http.ResponseWriter, r *http.Request, ex *exchange) {
	if r.Context().Err() != nil {
		p.cancelled(w, r, ex)
		return
	}
	ex.outcome = metrics.OutcomeRejected
	p.answer(w, ex, rewrite.Failure(http.StatusBadRequest, rewrite.CodeUnreadableBody,
		"the request body could not be read to its end; send the whole body again", true))
}

// errShortBody is a request body that ended before its Content-Length.
var errShortBody = errors.New("the request body ended before its declared Content-Length")

// copyBody streams the response body to the caller, flushing each read at
// once when the response is a stream.
func copyBody(w http.ResponseWriter, res *http.Response, flush bool) error {
	pool := buffersFor(res.ContentLength)
	buf := pool.Get()
	defer pool.Put(buf)
	flusher, _ := w.(http.Flusher)
	for {
		n, rerr := res.Body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			if flush && flusher != nil {
				flusher.Flush()
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return errUpstreamBody
		}
	}
}

// flushesAtOnce reports whether a response is a stream whose parts the
// caller needs as they come: server-sent events, or a body of unknown
// length.
func flushesAtOnce(res *http.Response) bool {
	return res.ContentLength == -1 || isEventStream(res.Header)
}

// forwarding reports whether a header says where a request came from:
// Forwarded and every X-Forwarded-*. Signpost sets X-Forwarded-For, -Host
// and -Proto from the connection it accepted; a caller's own are not passed
// on, since any caller can write them.
func forwarding(k string) bool {
	return k == "Forwarded" || strings.HasPrefix(k, "X-Forwarded-")
}

// dropForwarding removes a caller's forwarding headers, and those spelled
// with underscores that name a header signpost sets or drops, on the
// general path, before httputil sets X-Forwarded-For, -Host and -Proto.
func dropForwarding(h http.Header) {
	for k := range h {
		if forwarding(k) || strings.IndexByte(k, '_') >= 0 && framing(k) {
			delete(h, k)
		}
	}
}

// framing reports whether a request header is one signpost writes itself or
// drops: hop-by-hop, forwarding, Content-Length. A name spelled with
// underscores counts as the one with dashes, since CGI-style upstreams read
// X_Forwarded_For as X-Forwarded-For.
func framing(k string) bool {
	if strings.IndexByte(k, '_') >= 0 {
		k = textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(k, "_", "-"))
		if k == "Host" || k == RequestIDHeader {
			return true
		}
	}
	return httpwire.HopByHop(k) || forwarding(k) || k == "Content-Length"
}
