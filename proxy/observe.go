package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// Observe mode: a request on a route in observe mode (or, unrouted, under
// a file in observe mode) is forwarded as it came and its answer passes
// through byte for byte, as if signpost were not there. What enforce mode
// would have answered is counted, logged and kept for the admin page, and
// every exchange goes into the record signpost draft learns from.

// observeBodyLimit bounds the request body read to learn its fields: a
// larger body is forwarded unread.
const observeBodyLimit = 64 << 10

// observes reports whether requests on route, nil when undeclared, are
// only watched.
func (p *Proxy) observes(route *rules.Route) bool {
	if route != nil {
		return route.Mode == rules.Observe
	}
	return p.cfg.Mode == rules.Observe
}

// observeRequest keeps the body of r, when it is JSON and within
// observeBodyLimit, in ex for the record. A body already read whole from
// the connection is copied at once; one still on its way is copied as it
// passes to the upstream, so that the caller waits for nothing signpost
// does. What enforce mode would have answered before calling the upstream
// is judged once the body is known (judgeBefore). r goes on unchanged.
func (p *Proxy) observeRequest(r *http.Request, ex *exchange) {
	ex.requestType = httpwire.FirstValue(r.Header["Content-Type"])
	if r.Body != nil && r.Body != http.NoBody && (namesJSON(ex.requestType) || namesForm(ex.requestType) || namesXML(ex.requestType)) && r.ContentLength <= observeBodyLimit {
		if r.ContentLength < 0 || !arrived(r.Body) {
			ex.held.Budget = p.budget
			ex.tee = &teeBody{body: r.Body, size: r.ContentLength, limit: observeBodyLimit, c: &ex.held}
			r.Body = ex.tee
			return
		}
		head := make([]byte, r.ContentLength)
		n, err := io.ReadFull(r.Body, head)
		if err != nil {
			// Broken off: the upstream gets what the caller sent, the
			// break included.
			r.Body = putBack(head[:n], r.Body, err)
		} else {
			r.Body.Close()
			ex.callerBody.Reset(head)
			r.Body = &ex.callerBody
			ex.req.Body = head
		}
	}
	p.judgeBefore(ex)
}

// judgeBefore notes, once, what enforce mode would have answered before
// calling the upstream, once the request's body is known: at once when it
// was read before the upstream was called, else when the upstream answers
// or the exchange ends. A body copied in passing that did not pass whole
// is not known, and not judged.
func (p *Proxy) judgeBefore(ex *exchange) {
	if ex.judged {
		return
	}
	ex.judged = true
	if ex.tee != nil {
		if ex.req.Body = ex.tee.whole(); ex.req.Body == nil {
			return
		}
	}
	route := ex.route
	if route == nil || route.Validate != rules.ValidateBefore {
		return
	}
	if e := rewrite.Before(route, &ex.req, p.cfg.Limits); e != nil {
		p.would(ex, e, nil)
	}
}

// namesXML reports whether a Content-Type names XML, as XML-RPC calls and
// WebDAV bodies are sent.
func namesXML(ctype string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "text/xml" || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

// namesForm reports whether a Content-Type names a urlencoded form.
func namesForm(ctype string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/x-www-form-urlencoded")
}

// namesJSON reports whether a Content-Type names JSON: application/json,
// or any +json type; no type at all is taken for JSON, as agents often
// send none.
func namesJSON(ctype string) bool {
	if ctype == "" {
		return true
	}
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// observeResponse is modify for an exchange in observe mode: the response
// stays as the upstream sent it, headers and body, and passes to the
// caller as it comes. An error's body is copied as it passes, within the
// bounds enforce mode reads it in, and judged once it has passed whole
// (observedError).
func (p *Proxy) observeResponse(res *http.Response, ex *exchange) error {
	p.judgeBefore(ex)
	status := res.StatusCode
	ex.status = status
	if status < 400 {
		if status < 300 && !p.mayCarry(ex, res) {
			p.record(ex, res, nil, false)
		} else if status < 300 {
			// Copied as it passes, to tell a success from an error it
			// carries (judge).
			x := examine(status, res.Header)
			x.charge.Budget = p.budget
			res.Body = &observedError{body: res.Body, p: p, ex: ex, x: x, res: res, limit: p.cfg.Limits.ErrorBody}
		}
		return nil
	}
	ex.outcome = metrics.OutcomePassthrough
	route, name, policy := ex.route, metrics.Unrouted, p.cfg.Unmatched
	if route != nil {
		name, policy = route.Name, route.Unmatched
	}
	x := examine(status, res.Header)
	limit := p.cfg.Limits.ErrorBody
	if isEventStream(res.Header) || res.ContentLength > limit {
		p.observeUnread(ex, res, name, policy, &x.upstream)
		return nil
	}
	x.charge.Budget = p.budget
	res.Body = &observedError{body: res.Body, p: p, ex: ex, x: x, res: res, name: name, policy: policy, limit: limit}
	return nil
}

// mayCarry reports whether a success may carry an error that observe mode
// should see: its route has a rule for its status, or its body is JSON or
// XML within the bound an error body is read in.
func (p *Proxy) mayCarry(ex *exchange, res *http.Response) bool {
	if isEventStream(res.Header) || res.ContentLength > p.cfg.Limits.ErrorBody || res.ContentLength == 0 || ex.req.Method == http.MethodHead {
		return false
	}
	if ex.route != nil && ex.route.Concerns(res.StatusCode) {
		return true
	}
	mt, _, _ := strings.Cut(httpwire.FirstValue(res.Header["Content-Type"]), ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/xml" || mt == "application/xml"
}

// observedError is an upstream error body in observe mode: passed to the
// caller as it comes, a copy kept within limit and the budget, and judged
// as enforce mode would have once it is closed. The handler reads and
// closes it on its own goroutine.
type observedError struct {
	body   io.ReadCloser
	p      *Proxy
	ex     *exchange
	x      *examination
	res    *http.Response
	name   string
	policy rules.Policy
	limit  int64

	copied []byte
	eof    bool // read to its end
	off    bool // the copy is dropped: over the bound or the budget
	closed bool
}

func (o *observedError) Read(p []byte) (int, error) {
	n, err := o.body.Read(p)
	if n > 0 && !o.off {
		o.keep(p[:n])
	}
	if err == io.EOF {
		o.eof = true
	}
	return n, err
}

// keep appends p to the copy, within the bound and what the budget lends.
func (o *observedError) keep(p []byte) {
	need := int64(len(o.copied) + len(p))
	if need > o.limit {
		o.off = true
		return
	}
	if need > int64(cap(o.copied)) {
		grown := max(2*int64(cap(o.copied)), need, firstBodyBuffer)
		if o.res.ContentLength >= 0 {
			grown = min(grown, max(o.res.ContentLength, need))
		}
		grown = min(grown, o.limit)
		if !o.x.charge.Grow(grown) {
			o.off = true
			return
		}
		old := int64(cap(o.copied))
		o.copied = append(make([]byte, 0, grown), o.copied...)
		o.x.charge.Shrink(old)
	}
	o.copied = append(o.copied, p...)
}

// Close ends the body and judges it, once.
func (o *observedError) Close() error {
	err := o.body.Close()
	if !o.closed {
		o.closed = true
		o.judge()
		o.x.charge.End()
	}
	return err
}

// judge records the error and what enforce mode would have answered in
// its place: as modify and answerUnmatched decide it, from a body that
// passed whole; or, for one that did not (over the bound or the budget,
// broken off, or left by the caller), as enforce mode would have wrapped
// it unjudged.
func (o *observedError) judge() {
	p, ex, x, res := o.p, o.ex, o.x, o.res
	up := &x.upstream
	if res.StatusCode < 300 {
		o.judgeSuccess()
		return
	}
	if !o.eof || o.off {
		p.observeUnread(ex, res, o.name, o.policy, up)
		return
	}
	body := o.copied
	if body == nil {
		body = []byte{}
	}
	if decode, ok := decoderFor(httpwire.FirstValue(res.Header["Content-Encoding"])); !ok {
		body = nil
	} else if decode != nil {
		var err error
		if body, err = decode(body, o.limit, &x.charge); err != nil {
			body = nil
		}
	}
	if body == nil {
		p.observeUnread(ex, res, o.name, o.policy, up)
		return
	}
	x.body = rules.Body{Raw: body}
	up.Body = &x.body
	route := ex.route
	var e *rewrite.Error
	explained := false
	if route != nil && route.Concerns(up.Status) {
		if rule := route.MatchError(up.Status, up.Body); rule != nil {
			e, explained = x.err.SetMatch(route, rule, up, &ex.req, p.cfg.Limits), true
		}
	}
	if e == nil && o.policy == rules.Wrap {
		if e = rewrite.Unexplained(route, up, &ex.req, p.cfg.Limits); e != nil {
			explained = true
		} else {
			e = rewrite.Wrap(up, route, &ex.req)
		}
	}
	p.record(ex, res, body, explained)
	if !explained {
		p.unmatched(ex, o.name, up, "observed, passed through")
	}
	if e != nil {
		p.would(ex, e, up)
	}
}

// judgeSuccess records a success, with its body when a rule of its route
// matches it, as enforce mode would have rewritten it, or when it carries
// an error no rule explains (observe.Carries), for the draft.
func (o *observedError) judgeSuccess() {
	p, ex, x, res := o.p, o.ex, o.x, o.res
	body := o.copied
	if decode, ok := decoderFor(httpwire.FirstValue(res.Header["Content-Encoding"])); !o.eof || o.off || !ok {
		body = nil
	} else if decode != nil {
		var err error
		if body, err = decode(body, o.limit, &x.charge); err != nil {
			body = nil
		}
	}
	if body == nil {
		p.record(ex, res, nil, false)
		return
	}
	up := &x.upstream
	x.body = rules.Body{Raw: body}
	up.Body = &x.body
	if route := ex.route; route != nil && route.Concerns(up.Status) {
		if rule := route.MatchError(up.Status, up.Body); rule != nil {
			up.Sent, up.Status = up.Status, rule.AnswerStatus(up.Status)
			e := x.err.SetMatch(route, rule, up, &ex.req, p.cfg.Limits)
			p.record(ex, res, body, true)
			p.would(ex, e, up)
			return
		}
	}
	if observe.Carries(body) {
		p.record(ex, res, body, false)
		return
	}
	p.record(ex, res, nil, false)
}

// observeUnread records an error whose body was not read, or could not
// be decoded: enforce mode would have wrapped it unjudged, under the wrap
// policy.
func (p *Proxy) observeUnread(ex *exchange, res *http.Response, name string, policy rules.Policy, up *rewrite.Upstream) {
	p.record(ex, res, nil, false)
	p.unmatched(ex, name, up, "observed unread, passed through")
	if policy == rules.Wrap {
		p.would(ex, rewrite.Wrap(up, ex.route, &ex.req), up)
	}
}

// record adds the exchange to observe mode's record. body is the
// upstream's error body as read and decoded, nil for a success or a body
// not read; explained says a rule, or the declared checks, explain it.
func (p *Proxy) record(ex *exchange, res *http.Response, body []byte, explained bool) {
	x := observe.Exchange{
		Caller:       p.state.CallerOf(&ex.caller),
		Method:       ex.req.Method,
		Path:         ex.req.Path,
		RawQuery:     ex.req.RawQuery,
		RequestType:  ex.requestType,
		Body:         ex.req.Body,
		Status:       res.StatusCode,
		ResponseType: httpwire.FirstValue(res.Header["Content-Type"]),
		Response:     body,
		Explained:    explained,
	}
	if r := ex.route; r != nil {
		x.Route, x.Template, x.Vars = r.Name, r.Path, ex.req.Vars
	}
	p.observed.Add(&x)
}

// would counts and logs the answer e that enforce mode would have sent in
// place of the upstream's error up (nil when it would have answered before
// calling the upstream), and keeps it for the admin page when one is due.
// A request gets one would-be answer: once enforce would have answered
// before the upstream, the upstream's error is not a second one.
func (p *Proxy) would(ex *exchange, e *rewrite.Error, up *rewrite.Upstream) {
	if ex.answeredBefore {
		return
	}
	ex.answeredBefore = up == nil
	name := metrics.Unrouted
	if ex.route != nil {
		name = ex.route.Name
	}
	if p.metrics != nil {
		p.metrics.WouldRewrite(name, e.Code)
	}
	logged := p.log.Enabled(context.Background(), slog.LevelInfo)
	now := time.Now()
	due := p.answers.Due(name, e.Code, now)
	if !logged && !due {
		return
	}
	body, _ := p.encode(ex, e, nil)
	var upstreamBody string
	if up != nil && up.Body != nil {
		upstreamBody = redact.Clip(up.Body.Raw)
	}
	if due {
		a := observe.Answer{At: now, Route: name, RequestID: ex.id, Method: ex.req.Method, Path: ex.req.Path,
			Code: e.Code, Upstream: upstreamBody, Would: string(body)}
		if up != nil {
			a.Status = up.Status
			if up.Sent != 0 {
				a.Status = up.Sent // the upstream's, an error carried in a success
			}
		}
		p.answers.Add(a)
	}
	if !logged {
		return
	}
	var room [8]slog.Attr
	attrs := append(room[:0], slog.String("request_id", ex.id), slog.String("route", name), slog.String("code", e.Code))
	if e.Field != "" {
		attrs = append(attrs, slog.String("field", e.Field))
	}
	if e.Received != nil {
		attrs = append(attrs, slog.Any("received", redact.JSON(e.Received)))
	}
	if up != nil {
		attrs = append(attrs, slog.Int("status", up.Status), slog.String("upstream_body", upstreamBody))
	}
	attrs = append(attrs, slog.String("would_answer", redact.Clip(body)))
	p.info("observed: enforce would rewrite", attrs)
}
