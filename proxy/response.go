package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/internal/upstream"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// modifyResponse replaces an upstream error that a rule of the matched
// route concerns, and, under the wrap policy, any other error. Everything
// else streams through as it arrived, with the request id added.
func (p *Proxy) modifyResponse(res *http.Response) error {
	if res.StatusCode < 100 {
		// No caller can be sent it: httputil.ReverseProxy answers the
		// error through upstreamFailed instead.
		return upstream.InvalidStatus(res.StatusCode)
	}
	ex, _ := res.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return nil
	}
	if err := p.modify(res, ex); err != nil {
		return err
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		return nil // the body is the upgraded connection, used as it is
	}
	if ex.w != nil {
		untyped(ex.w.Header(), res.Header)
	}
	ex.watched = watchedBody{ReadCloser: res.Body, ex: ex}
	res.Body = &ex.watched
	return nil
}

// watchedBody notes that reading the upstream's body failed, for
// httputil.ReverseProxy's path, which aborts the answer either way.
type watchedBody struct {
	io.ReadCloser
	ex *exchange
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.ex.upstreamBroke = true
	}
	return n, err
}

// modify is modifyResponse for the exchange ex.
func (p *Proxy) modify(res *http.Response, ex *exchange) error {
	if ex.observing {
		return p.observeResponse(res, ex)
	}
	// The caller's id wins over any the upstream set: it is the one the
	// caller knows and signpost logs.
	res.Header[RequestIDHeader] = ex.idValue
	status := res.StatusCode
	ex.status = status
	if status < 400 {
		if status < 300 && ex.batch != nil {
			return p.inspectBatch(res, ex)
		}
		if status < 300 && ex.route != nil {
			if ex.route.Concerns(status) {
				return p.inspectSuccess(res, ex)
			}
			p.state.Succeeded(&ex.caller, ex.route, &ex.req)
		}
		return nil
	}
	ex.outcome = metrics.OutcomePassthrough
	route, name, policy := ex.route, metrics.Unrouted, p.cfg.Unmatched
	if route != nil {
		name, policy = route.Name, route.Unmatched
	}
	concerned := route != nil && route.Concerns(status)
	x := examine(status, res.Header)
	up := &x.upstream
	if !concerned && policy == rules.Passthrough {
		if rewrite.Unexplained(route, up, &ex.req, p.cfg.Limits) != nil {
			// The declared checks explain it: their answer, not the
			// upstream's words, which may name a hidden value.
			res.Body.Close()
			p.explained(res, ex, x)
			return nil
		}
		p.unmatched(ex, name, up, "passed through")
		return nil
	}
	decode, decodable := decoderFor(httpwire.FirstValue(res.Header["Content-Encoding"]))
	limit := p.cfg.Limits.ErrorBody
	switch {
	case isEventStream(res.Header):
		// A stream is never buffered: passed on, or wrapped unread.
		return p.unreadable(res, ex, name, x, policy, "stream")
	case res.ContentLength > limit:
		p.oversized(name)
		return p.unreadable(res, ex, name, x, policy, "oversized")
	}
	// The buffers are given back when this returns, or when the body that
	// still reads them is closed.
	c := &x.charge
	defer c.End()
	raw, err := p.readError(res, ex, c, limit)
	if errors.Is(err, errSlowBody) {
		// Passed through, the caller gets the whole body as it comes, as
		// without signpost; wrapped, a whole answer now.
		if policy == rules.Passthrough {
			p.unmatched(ex, name, up, "upstream body slow, passed through")
			return nil
		}
		return p.unreadable(res, ex, name, x, policy, "upstream body slow")
	}
	if errors.Is(err, budget.ErrSpent) {
		// Other errors hold the budget: this one is treated as too large
		// to read. No 503: the upstream has answered, and its status
		// stands.
		if policy == rules.Passthrough {
			res.Body = c.KeepUntilClosed(putBack(raw, res.Body, nil))
			p.unmatched(ex, name, up, "over the buffer budget, passed through")
			return nil
		}
		return p.unreadable(res, ex, name, x, policy, "over the buffer budget")
	}
	if err != nil {
		// The upstream broke off or stalled mid-body. Passed through, the
		// caller gets what arrived and the break; wrapped, a whole answer.
		if policy == rules.Passthrough {
			res.Body = c.KeepUntilClosed(putBack(raw, res.Body, err))
			p.unmatched(ex, name, up, "upstream body broke off, passed through")
			return nil
		}
		return p.unreadable(res, ex, name, x, policy, "upstream body broke off")
	}
	if int64(len(raw)) > limit {
		p.oversized(name)
		if policy == rules.Passthrough {
			res.Body = c.KeepUntilClosed(putBack(raw, res.Body, nil))
			p.unmatched(ex, name, up, "oversized, passed through")
			return nil
		}
		return p.unreadable(res, ex, name, x, policy, "oversized")
	}
	res.Body.Close()
	body := raw
	if !decodable {
		return p.answerUnmatched(res, ex, name, x, policy, raw, "undecodable encoding")
	}
	if decode != nil {
		if body, err = decode(raw, limit, c); err != nil {
			what := "corrupt encoding"
			switch {
			case errors.Is(err, errTooLarge):
				p.oversized(name)
				what = "oversized once decoded"
			case errors.Is(err, budget.ErrSpent):
				what = "over the buffer budget once decoded"
			}
			return p.answerUnmatched(res, ex, name, x, policy, raw, what)
		}
	}
	x.body = rules.Body{Raw: body}
	up.Body = &x.body
	if concerned {
		if rule := route.MatchError(status, up.Body); rule != nil {
			p.rewriteMatched(res, ex, x, rule)
			return nil
		}
	}
	return p.answerUnmatched(res, ex, name, x, policy, raw, "no rule matched")
}

// rewriteMatched answers the upstream response under examination x, which
// rule matched, with the rule's body and status, and books the rejection.
func (p *Proxy) rewriteMatched(res *http.Response, ex *exchange, x *examination, rule *rules.ErrorRule) {
	up := &x.upstream
	if s := rule.AnswerStatus(up.Status); s != up.Status {
		up.Sent, up.Status = up.Status, s
		res.StatusCode, res.Status = s, strconv.Itoa(s)+" "+http.StatusText(s)
		ex.status = s
	}
	e := x.err.SetMatch(ex.route, rule, up, &ex.req, p.cfg.Limits)
	ex.outcome = metrics.OutcomeRewritten
	e = p.replace(res, ex, e, x, rule)
	p.rejected(ex, e, up, rule.Index)
}

// inspectSuccess reads a success on a route with a rule for its status,
// an error carried in a 2xx as RPC APIs answer, within the bounds an error
// body is read in, and answers it as that error when a rule matches. Any
// other passes on byte for byte, as does a stream, a body over the bounds,
// slower than the upstream timeout or over the buffer budget: a success
// signpost cannot read is never held back or cut.
func (p *Proxy) inspectSuccess(res *http.Response, ex *exchange) error {
	route, status := ex.route, res.StatusCode
	limit := p.cfg.Limits.ErrorBody
	if isEventStream(res.Header) || res.ContentLength > limit || res.ContentLength == 0 ||
		status == http.StatusNoContent || res.Request.Method == http.MethodHead {
		p.state.Succeeded(&ex.caller, route, &ex.req)
		return nil
	}
	decode, decodable := decoderFor(httpwire.FirstValue(res.Header["Content-Encoding"]))
	x := examine(status, res.Header)
	c := &x.charge
	defer c.End()
	raw, err := p.readError(res, ex, c, limit)
	switch {
	case errors.Is(err, errSlowBody):
		// res.Body passes on the whole body as it comes.
		p.state.Succeeded(&ex.caller, route, &ex.req)
		return nil
	case err != nil || int64(len(raw)) > limit:
		// What was read, then the rest as it comes, or the break; a body
		// the budget stopped reading goes on whole.
		if errors.Is(err, budget.ErrSpent) {
			err = nil
		}
		res.Body = c.KeepUntilClosed(putBack(raw, res.Body, err))
		p.state.Succeeded(&ex.caller, route, &ex.req)
		return nil
	}
	res.Body.Close()
	body := raw
	if !decodable {
		// An encoding signpost does not read: judged unread.
		res.Body = c.KeepUntilClosed(newBytesBody(raw))
		p.state.Succeeded(&ex.caller, route, &ex.req)
		return nil
	}
	if decode != nil {
		if body, err = decode(raw, limit, c); err != nil {
			body = nil // judged unread: the success passes on as it came
		}
	}
	if body != nil || len(raw) == 0 {
		x.body = rules.Body{Raw: body}
		if rule := route.MatchError(status, &x.body); rule != nil {
			x.upstream.Body = &x.body
			p.rewriteMatched(res, ex, x, rule)
			return nil
		}
	}
	res.Body = c.KeepUntilClosed(newBytesBody(raw))
	p.state.Succeeded(&ex.caller, route, &ex.req)
	return nil
}

// readError reads the error body of res, up to limit and one byte more,
// into buffers charged to the process-wide budget through c, within what
// is left of the upstream timeout (bodyWait). A body that has arrived is
// read at once. One still on its way is read on a goroutine of its own, so
// that the wait can end without cutting the body: past it, readError
// returns errSlowBody, and res.Body passes on the whole body, what was
// read first and the rest as it comes, holding c until it is closed.
func (p *Proxy) readError(res *http.Response, ex *exchange, c *budget.Charge, limit int64) ([]byte, error) {
	c.Budget = p.budget
	if arrived(res.Body) {
		return c.Read(res.Body, limit, res.ContentLength)
	}
	late := &lateBody{body: res.Body, read: make(chan struct{}), limit: limit}
	go func() {
		late.raw, late.err = c.Read(late.body, limit, res.ContentLength)
		close(late.read)
	}()
	wait := time.NewTimer(p.bodyWait(ex))
	select {
	case <-late.read:
		wait.Stop()
		return late.raw, late.err
	case <-wait.C:
		res.Body = c.KeepUntilClosed(late)
		return nil, errSlowBody
	}
}

// errSlowBody is an error body that did not arrive within the upstream
// timeout.
var errSlowBody = errors.New("the upstream's error body did not arrive within the upstream timeout")

// lateBody is an error body whose reading outlasted the wait for it: it
// yields what the reading goroutine read, once it is done, then the rest
// of the upstream's body. Closed, it closes the upstream's body and waits
// for the goroutine, whose buffers are then no longer written.
type lateBody struct {
	body  io.ReadCloser
	read  chan struct{} // closed once raw and err are set
	raw   []byte
	err   error
	limit int64
	off   int
	done  bool
}

func (b *lateBody) Read(p []byte) (int, error) {
	<-b.read
	if b.off < len(b.raw) {
		n := copy(p, b.raw[b.off:])
		b.off += n
		return n, nil
	}
	switch {
	case errors.Is(b.err, budget.ErrSpent) || b.err == nil && int64(len(b.raw)) > b.limit:
		return b.body.Read(p) // stopped short of the end: the rest follows
	case b.err != nil:
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *lateBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.body.Close()
	<-b.read
	return err
}

// minBodyWait is the least time an error body is given once its headers
// are in, however late they came: enough for a body already on its way.
const minBodyWait = 10 * time.Millisecond

// bodyWait is how long the error body of ex may take to arrive: what is
// left of the upstream timeout since the request arrived, so that the
// caller has an answer within it, headers and body together.
func (p *Proxy) bodyWait(ex *exchange) time.Duration {
	if ex.start.IsZero() {
		return p.bodyTimeout
	}
	return max(p.bodyTimeout-time.Since(ex.start), minBodyWait)
}

// answerUnmatched disposes of an error no rule matched once its body was
// read: the raw bytes pass on, holding x's charge until they are sent, or
// a wrapped body replaces them.
func (p *Proxy) answerUnmatched(res *http.Response, ex *exchange, name string, x *examination, policy rules.Policy, raw []byte, why string) error {
	up := &x.upstream
	if policy == rules.Passthrough {
		if up.Body == nil {
			up.Body = &rules.Body{Raw: raw}
		}
		if p.explained(res, ex, x) {
			return nil
		}
		res.Body = x.charge.KeepUntilClosed(newBytesBody(raw))
		p.unmatched(ex, name, up, why+", passed through")
		return nil
	}
	if up.Body == nil {
		up.Body = &rules.Body{Raw: raw}
	}
	if p.explained(res, ex, x) {
		return nil
	}
	e := p.replace(res, ex, rewrite.Wrap(up, ex.route, &ex.req), x, nil)
	p.unmatched(ex, name, up, why+", wrapped as "+e.Code)
	return nil
}

// unreadable disposes of an error whose body is not read: a stream, one
// over the bound or over the buffer budget. Under the wrap policy the
// upstream body is closed unread and wrapped, unjudged: it may say what a
// rule explains, so the declared checks do not speak for it, and an
// overloaded proxy does no more work than it must.
func (p *Proxy) unreadable(res *http.Response, ex *exchange, name string, x *examination, policy rules.Policy, why string) error {
	up := &x.upstream
	if policy == rules.Passthrough {
		p.unmatched(ex, name, up, why+", passed through")
		return nil
	}
	res.Body.Close()
	e := p.replace(res, ex, rewrite.Wrap(up, ex.route, &ex.req), x, nil)
	p.unmatched(ex, name, up, why+", wrapped as "+e.Code)
	return nil
}

// explained answers an error no rule matched with the faults of the
// route's declared fields, when one is at fault, and reports whether it
// did: counted and logged as a rejection, since the checks explain it.
func (p *Proxy) explained(res *http.Response, ex *exchange, x *examination) bool {
	up := &x.upstream
	e := rewrite.Unexplained(ex.route, up, &ex.req, p.cfg.Limits)
	if e == nil {
		return false
	}
	ex.outcome = metrics.OutcomeRewritten
	e = p.replace(res, ex, e, x, nil)
	p.rejected(ex, e, up, -1)
	return true
}

// replace swaps the upstream's body for e, or for the answer to a caller
// repeating the failure (see repeat), rendered in the route's format into
// x's buffer, and returns the answer sent. rule is the rule that matched,
// or nil. x is recycled once the body is sent.
func (p *Proxy) replace(res *http.Response, ex *exchange, e *rewrite.Error, x *examination, rule *rules.ErrorRule) *rewrite.Error {
	if ex.outcome != metrics.OutcomeRewritten {
		ex.outcome = metrics.OutcomeWrapped
	}
	// The Retry-After the caller gets says what the body says.
	switch e = p.repeat(ex, e, &x.upstream, rule); {
	case !e.Retryable:
		delete(res.Header, "Retry-After")
	case e.RetryAfter > 0:
		res.Header["Retry-After"] = []string{strconv.Itoa(e.RetryAfter)}
	}
	p.noRoute(ex, e, x.upstream.Header)
	ex.examined = x
	body, ctype := p.render(ex, e, x.out[:0])
	x.out = body
	x.reply.Reset(body)
	replaceBody(res, &x.reply, ctype)
	if s := p.statusOf(ex, e); s != res.StatusCode {
		res.StatusCode, res.Status = s, strconv.Itoa(s)+" "+http.StatusText(s)
		ex.status = s
	}
	return e
}

// repeat notes the failure e about to be answered to ex and returns the
// answer to send: e itself; or, once the caller had e the route's count of
// times in a row, the stop body, which says repeating the call will not
// succeed now; or, for a field fault sent again, e saying its values were
// already rejected. A fault a rule declares retryable is about the
// moment, not the value: it is stopped as other failures are. up is the upstream's error, nil when signpost answered
// without one; rule is the rule that matched, or nil.
func (p *Proxy) repeat(ex *exchange, e *rewrite.Error, up *rewrite.Upstream, rule *rules.ErrorRule) *rewrite.Error {
	route := ex.route
	if route == nil || route.RepeatsOff || p.cfg.Limits.Repeats.Off {
		return e
	}
	n := p.state.Repeated(&ex.caller, route, callOf(ex), e)
	if n < 2 {
		return e
	}
	if (e.Field != "" || len(e.Errors) > 0) && !e.Retryable {
		rewrite.AlreadyRejected(e, n, ex.caller.ByAddress())
		return e
	}
	if n < p.cfg.Limits.Repeats.Of(transient(e, up, rule)) {
		return e
	}
	futile := ""
	if rule != nil {
		futile = rule.Futile
	}
	p.state.Stopped(&ex.caller, route, e.Code)
	return rewrite.Stop(e, n, futile, ex.caller.ByAddress())
}

// callSeed keys callOf's hash, for the life of the process.
var callSeed = maphash.MakeSeed()

// callOf identifies the call of ex among the calls to its route, as the
// upstream saw it: its method, path, query, body, and every header but
// those that differ on every request (request ids, tracing, Date) and
// those a proxy sets (framing, forwarding). A body signpost did not read
// makes the call one of its own: it is never the same as another.
func callOf(ex *exchange) uint64 {
	if ex.unreadBody {
		return uniqueCalls.Add(1) | 1<<63
	}
	var h maphash.Hash
	h.SetSeed(callSeed)
	h.WriteString(ex.req.Method)
	h.WriteByte(0)
	h.WriteString(ex.req.Path)
	h.WriteByte(0)
	h.WriteString(ex.req.RawQuery)
	h.WriteByte(0)
	h.Write(ex.req.Body)
	// The header's fields come in no order: their hashes are summed.
	var fields uint64
	for k, vv := range ex.req.Header {
		if k == RequestIDHeader || httpwire.Framing(k, RequestIDHeader) || volatileField(k) {
			continue
		}
		var f maphash.Hash
		f.SetSeed(callSeed)
		f.WriteString(k)
		for _, v := range vv {
			f.WriteByte(0)
			f.WriteString(v)
		}
		fields += f.Sum64()
	}
	h.WriteByte(0)
	h.WriteString(strconv.FormatUint(fields, 16))
	return h.Sum64()
}

// uniqueCalls numbers the calls that are the same as no other.
var uniqueCalls atomic.Uint64

// volatileField reports whether a request header field is one that differs
// on every request by its nature: request ids, trace context, the date.
func volatileField(k string) bool {
	switch k {
	case "Date", "X-Correlation-Id", "Traceparent", "Tracestate", "Baggage", "B3",
		"Uber-Trace-Id", "X-Amzn-Trace-Id", "X-Cloud-Trace-Context", "Sentry-Trace":
		return true
	}
	return strings.HasPrefix(k, "X-B3-")
}

// transient reports whether the failure e is declared passing: a 429, a
// 503 with Retry-After, or a rule's retryable: true.
func transient(e *rewrite.Error, up *rewrite.Upstream, rule *rules.ErrorRule) bool {
	switch {
	case rule != nil && rule.Retryable != nil:
		return *rule.Retryable
	case e.Status == http.StatusTooManyRequests:
		return true
	case e.Status == http.StatusServiceUnavailable:
		return up != nil && httpwire.FirstValue(up.Header["Retry-After"]) != ""
	}
	return false
}

// rejected counts and logs a rejection: one count per field fault, one log
// line keyed by the same code, with what the operator needs and the agent
// must not see. up is the upstream's error, nil when signpost answered
// before calling the upstream; rule is the matching rule's index, or -1
// when the declared checks explained the error.
// The upstream's revealing headers go into the line and out of the answer.
func (p *Proxy) rejected(ex *exchange, e *rewrite.Error, up *rewrite.Upstream, rule int) {
	p.state.Rejected(&ex.caller, ex.route, &ex.req, e)
	if p.metrics != nil {
		// A batch counts its faults; a rule that names no field counts
		// its own code beside the faults listed with it.
		if e.Code != rewrite.CodeValidationFailed {
			p.metrics.Rejected(ex.route.Name, e.Code, e.Field)
		}
		for _, en := range e.Errors {
			p.metrics.Rejected(ex.route.Name, en.Code, en.Field)
		}
		for _, en := range e.Unlisted {
			p.metrics.Rejected(ex.route.Name, en.Code, en.Field)
		}
	}
	if !p.log.Enabled(context.Background(), slog.LevelInfo) {
		if up != nil {
			redact.Conceal(up.Header)
		}
		return
	}
	var headers map[string]string
	if up != nil {
		headers = redact.Revealed(up.Header)
		redact.Conceal(up.Header)
	}
	var room [10]slog.Attr
	attrs := append(room[:0], slog.String("request_id", ex.id), slog.String("route", ex.route.Name), slog.String("code", e.Code))
	if e.Field != "" {
		attrs = append(attrs, slog.String("field", e.Field))
	}
	if e.Received != nil {
		attrs = append(attrs, slog.Any("received", redact.JSON(e.Received)))
	}
	if len(e.Errors) > 0 {
		fields := make([]string, 0, len(e.Errors)+len(e.Unlisted))
		for _, en := range slices.Concat(e.Errors, e.Unlisted) {
			fields = append(fields, en.Field)
		}
		attrs = append(attrs, slog.Any("fields", fields))
	}
	if up == nil {
		p.info("rejected before the upstream", attrs)
		return
	}
	if up.Sent != 0 {
		attrs = append(attrs, slog.Int("status", up.Sent), slog.Int("answered", up.Status))
	} else {
		attrs = append(attrs, slog.Int("status", up.Status))
	}
	attrs = append(attrs, slog.Int("rule", rule))
	if up.Body != nil {
		attrs = append(attrs, slog.String("upstream_body", redact.Clip(up.Body.Raw)))
	}
	if headers != nil {
		attrs = append(attrs, slog.Any("upstream_headers", headers))
	}
	p.info("rewrote upstream error", attrs)
}

// info logs msg with attrs at level info. It skips what Logger.Info
// spends on every line and the log has no use for: finding the caller's
// source line, and boxing each value in an interface.
func (p *Proxy) info(msg string, attrs []slog.Attr) {
	h := p.log.Handler()
	if !h.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(context.Background(), r)
}

// unmatched counts and logs an upstream error no rule explained. When a
// wrapped body replaced it, the upstream's revealing headers go into the
// line and out of the answer.
func (p *Proxy) unmatched(ex *exchange, name string, up *rewrite.Upstream, what string) {
	p.state.Called(&ex.caller, ex.route)
	if p.metrics != nil {
		p.metrics.Unmatched(name, up.Status)
	}
	headers := redact.Revealed(up.Header)
	if ex.outcome == metrics.OutcomeWrapped {
		redact.Conceal(up.Header)
	}
	if !p.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	var room [6]slog.Attr
	attrs := append(room[:0], slog.String("request_id", ex.id), slog.String("route", name), slog.Int("status", up.Status), slog.String("action", what))
	if up.Body != nil {
		attrs = append(attrs, slog.String("upstream_body", redact.Clip(up.Body.Raw)))
	}
	if headers != nil {
		attrs = append(attrs, slog.Any("upstream_headers", headers))
	}
	p.info("upstream error unmatched", attrs)
}

// replaceBody swaps the response body for a rewritten one, which body
// reads, and fixes its framing: length, type, and no encoding or
// validators of the old body.
func replaceBody(res *http.Response, body *bytesBody, contentType string) {
	res.Body = body
	res.ContentLength = body.Size()
	res.TransferEncoding = nil
	res.Uncompressed = false
	res.Trailer = nil
	h := res.Header
	h["Content-Type"] = headerValue(contentType)
	h["Content-Length"] = []string{strconv.FormatInt(res.ContentLength, 10)}
	for k := range h {
		if stale(k) {
			delete(h, k)
		}
	}
}

// bytesBody is a body held in memory, in one allocation where
// io.NopCloser(bytes.NewReader(b)) takes two.
type bytesBody struct{ bytes.Reader }

func newBytesBody(b []byte) *bytesBody {
	r := new(bytesBody)
	r.Reset(b)
	return r
}

func (*bytesBody) Close() error { return nil }

// headerValue returns the header value v, shared for the media types of
// the bodies signpost writes: header values are never changed in place.
func headerValue(v string) []string {
	switch v {
	case rewrite.ContentType:
		return jsonType
	case rewrite.ProblemContentType:
		return problemType
	}
	return []string{v}
}

var (
	jsonType    = []string{rewrite.ContentType}
	problemType = []string{rewrite.ProblemContentType}
)

// stale reports whether header k describes the body a rewrite replaces,
// and so goes with it. An answer has a few headers: walking them costs
// less than deleting each of these by name.
func stale(k string) bool {
	switch k {
	case "Content-Encoding", "Content-Md5", "Content-Range", "Content-Digest",
		"Repr-Digest", "Digest", "Etag", "Last-Modified", "Trailer":
		return true
	}
	return false
}

func (p *Proxy) oversized(route string) {
	if p.metrics != nil {
		p.metrics.Oversized(route)
	}
}

// isEventStream reports whether a response is server-sent events. Only the
// media type is compared, without parsing parameters: this runs on every
// response.
func isEventStream(h http.Header) bool {
	mt, _, _ := strings.Cut(httpwire.FirstValue(h["Content-Type"]), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

var errTooLarge = errors.New("body larger than the buffering bound")

// decoderFor returns how to decode a body with this Content-Encoding: nil
// for an identity body, and false for an encoding signpost does not read.
func decoderFor(encoding string) (func(raw []byte, limit int64, c *budget.Charge) ([]byte, error), bool) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return nil, true
	case "gzip", "x-gzip":
		return gunzip, true
	}
	return nil, false
}

// inflateState is what a gzip reader allocates for itself, charged while
// it inflates: its window and tables.
const inflateState = 48 << 10

// gunzip inflates raw, stopping once the output passes limit so that a
// small compressed body cannot expand without bound; the output and the
// reader's state are charged to c.
func gunzip(raw []byte, limit int64, c *budget.Charge) ([]byte, error) {
	if !c.Grow(inflateState) {
		return nil, budget.ErrSpent
	}
	defer c.Shrink(inflateState)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out, err := c.Read(zr, limit, -1)
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, errTooLarge
	}
	return out, nil
}

// putBack returns a body that yields head and then the rest of body, or
// head and then err when reading body already failed.
func putBack(head []byte, body io.ReadCloser, err error) io.ReadCloser {
	rest := io.Reader(body)
	if err != nil {
		rest = errReader{err}
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), body}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// upstreamFailed answers for an upstream that could not be reached or did
// not answer in time, with a body as actionable as a rewritten error.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		ex = &exchange{id: r.Header.Get(RequestIDHeader)}
	}
	p.failed(w, r, ex, err)
}

// failed is upstreamFailed for the exchange ex. Its answer says whether
// the call may have taken effect: not when nothing of it reached the
// upstream; perhaps when the upstream may have read it and then closed,
// failed to answer in time, or answered with a status HTTP has no meaning
// for.
func (p *Proxy) failed(w http.ResponseWriter, r *http.Request, ex *exchange, err error) {
	if r.Context().Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		p.cancelled(w, r, ex)
		return
	}
	routeName := metrics.Unrouted
	if ex.route != nil {
		routeName = ex.route.Name
	}
	e := failure(err, idempotent(r))
	if p.metrics != nil {
		p.metrics.UpstreamFailed(routeName, e.Code)
	}
	p.state.Called(&ex.caller, ex.route)
	ex.outcome = metrics.OutcomeFailed
	p.log.Warn("upstream failed", "request_id", ex.id, "route", routeName, "code", e.Code, "error", redact.String(err.Error()))
	p.answer(w, ex, p.repeat(ex, e, nil, nil))
}

// failure is the answer to an exchange that failed with err, for a request
// that may be repeated, or not, with the same effect.
func failure(err error, repeatable bool) *rewrite.Error {
	e := failureOf(err, repeatable)
	e.Uncertain = !repeatable && !upstream.NothingSent(err)
	return e
}

// failureOf is failure but for Uncertain.
func failureOf(err error, repeatable bool) *rewrite.Error {
	var ne net.Error
	var status upstream.InvalidStatus
	switch {
	case (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) && repeatable:
		return rewrite.Failure(http.StatusGatewayTimeout, rewrite.CodeTimeout,
			"the upstream service did not answer in time; the call may be repeated with the same effect, retry it shortly", true)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return rewrite.Failure(http.StatusGatewayTimeout, rewrite.CodeTimeout,
			"the upstream service did not answer in time; the call may or may not have taken effect, check before retrying", true)
	case errors.As(err, &status) && repeatable:
		return rewrite.Failure(http.StatusBadGateway, rewrite.CodeInvalidResponse,
			fmt.Sprintf("the upstream service answered with status %03d, which HTTP does not define; the call may be repeated with the same effect", int(status)), true)
	case errors.As(err, &status):
		return rewrite.Failure(http.StatusBadGateway, rewrite.CodeInvalidResponse,
			fmt.Sprintf("the upstream service answered with status %03d, which HTTP does not define; the call may or may not have taken effect, so check before repeating it", int(status)), false)
	case upstream.NothingSent(err):
		return rewrite.Failure(http.StatusBadGateway, rewrite.CodeUnavailable,
			"the upstream service could not be reached; the call did not take effect, retry it shortly", true)
	case repeatable:
		return rewrite.Failure(http.StatusBadGateway, rewrite.CodeUnavailable,
			"the upstream service closed the connection without answering; the call may be repeated with the same effect, retry it shortly", true)
	}
	return rewrite.Failure(http.StatusBadGateway, rewrite.CodeUnavailable,
		"the upstream service closed the connection without answering; the call may or may not have taken effect, so check before repeating it", false)
}

// cancelled answers a request whose caller closed its connection, or its
// sending side, before the answer: signpost cut the call to the upstream
// short. A caller that only half-closed still reads this answer; one that
// left makes its write fail, which is as well. Either way no answer is
// made up.
func (p *Proxy) cancelled(w http.ResponseWriter, r *http.Request, ex *exchange) {
	ex.outcome = metrics.OutcomeCancelled
	p.state.Called(&ex.caller, ex.route)
	p.log.Info("caller closed before the answer", "request_id", ex.id)
	if idempotent(r) {
		p.answer(w, ex, callerClosedRepeatable)
		return
	}
	p.answer(w, ex, callerClosed)
}

// callerClosed and callerClosedRepeatable are the answers to a caller that
// closed first, for a call that may have taken effect and for one that may
// be repeated. 499 is the status proxies log for it; there is no standard
// one.
var (
	callerClosed = &rewrite.Error{Status: statusCallerClosed, Code: rewrite.CodeCancelled, Uncertain: true,
		Message: "the connection closed its sending side before the answer came, so signpost cancelled the call; it may or may not have taken effect: keep the connection open until the answer arrives, and check before repeating the call"}
	callerClosedRepeatable = rewrite.Failure(statusCallerClosed, rewrite.CodeCancelled,
		"the connection closed its sending side before the answer came, so signpost cancelled the call; it may be repeated with the same effect: keep the connection open until the answer arrives", true)
)

const statusCallerClosed = 499

func itoa(n int) string { return strconv.Itoa(n) }

func errNoUpstream(file string) error {
	return fmt.Errorf("no upstream: set upstream: in %s or pass --upstream, e.g. --upstream http://127.0.0.1:8081", file)
}
