package proxy

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/signpost-proxy/signpost/internal/buffers"
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
	ex.out = upstream.Request{In: r, Body: ex.req.Body, Host: p.target.Host, Own: RequestIDHeader, Early: w}
	hs := handshakeOf(ex, r)
	if hs != nil {
		p.withToken(r.Context(), hs, r.Header)
	}
	res, err := p.conns.Exchange(r.Context(), p.upstreamAddr, &ex.out, &ex.response)
	if err == nil && hs != nil && p.handshook(r.Context(), hs, res, r.Header) {
		// Refused for want of the token it hands out: sent again with it.
		// The refusal's body is read for the connection's reuse only when
		// it has arrived: one still on its way is no cause to wait.
		if arrived(res.Body) {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
		}
		res.Body.Close()
		res, err = p.conns.Exchange(r.Context(), p.upstreamAddr, &ex.out, &ex.response)
	}
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

// idempotent reports whether sending r twice does what sending it once
// does (RFC 9110, section 9.2.2), or r carries an idempotency key: what a
// caller may be told when the upstream's answer was lost.
func idempotent(r *http.Request) bool {
	return rewrite.Idempotent(r.Method, r.Header)
}

// errUpstreamBody marks a copy that failed reading the upstream's body, as
// opposed to writing to the caller.
var errUpstreamBody = errors.New("the upstream's body broke off")

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

// copyBody streams the response body to the caller, flushing each read at
// once when the response is a stream.
func copyBody(w http.ResponseWriter, res *http.Response, flush bool) error {
	pool := buffers.For(res.ContentLength)
	lent := pool.Borrow()
	defer pool.Return(lent)
	buf := *lent
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

// dropForwarding removes a caller's forwarding headers, and those spelled
// with underscores that name a header signpost sets or drops, on the
// general path, before httputil sets X-Forwarded-For, -Host and -Proto.
func dropForwarding(h http.Header) {
	for k := range h {
		if httpwire.Forwarding(k) || strings.IndexByte(k, '_') >= 0 && httpwire.Framing(k, RequestIDHeader) {
			delete(h, k)
		}
	}
}
