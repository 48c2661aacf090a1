package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/internal/observe"
	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/metrics"
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

// observeRequest reads the body of r, when it is JSON and within
// observeBodyLimit, into ex for the record, and notes what enforce mode
// would have answered before calling the upstream. r goes on unchanged:
// a body over the bound is put back whole.
func (p *Proxy) observeRequest(r *http.Request, ex *exchange) {
	ex.requestType = httpwire.FirstValue(r.Header["Content-Type"])
	if r.Body != nil && r.Body != http.NoBody && namesJSON(ex.requestType) && r.ContentLength <= observeBodyLimit {
		var head []byte
		var err error
		if r.ContentLength >= 0 {
			// One read of the declared length, into a buffer of its size.
			head = make([]byte, r.ContentLength)
			var n int
			n, err = io.ReadFull(r.Body, head)
			head = head[:n]
		} else {
			head, err = readHead(r.Body, observeBodyLimit)
		}
		switch {
		case err == nil && len(head) <= observeBodyLimit:
			r.Body.Close()
			ex.callerBody.Reset(head)
			r.Body = &ex.callerBody
			ex.req.Body = head
		default:
			// Over the bound, or broken off: the upstream gets what the
			// caller sent, the break included.
			r.Body = putBack(head, r.Body, err)
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
// stays as the upstream sent it, headers and body; an error's body is
// read, within the bounds enforce mode reads it in, to judge it, and put
// back.
func (p *Proxy) observeResponse(res *http.Response, ex *exchange) error {
	status := res.StatusCode
	ex.status = status
	if status < 400 {
		if status < 300 {
			p.record(ex, res, nil, false)
		}
		return nil
	}
	ex.outcome = metrics.OutcomePassthrough
	route, name, policy := ex.route, metrics.Unrouted, p.cfg.Unmatched
	if route != nil {
		name, policy = route.Name, route.Unmatched
	}
	x := examine(status, res.Header)
	up := &x.upstream
	limit := p.cfg.Limits.ErrorBody
	if isEventStream(res.Header) || res.ContentLength > limit {
		p.observeUnread(ex, res, name, policy, up)
		return nil
	}
	c := &x.charge
	defer c.End()
	raw, err := p.readError(res, ex, c, limit)
	if err != nil || int64(len(raw)) > limit {
		// Over the budget or the bound, broken off or stalled: the caller
		// gets what arrived and the rest, or the break, as without
		// signpost.
		res.Body = c.KeepUntilClosed(putBack(raw, res.Body, err))
		p.observeUnread(ex, res, name, policy, up)
		return nil
	}
	res.Body.Close()
	res.Body = c.KeepUntilClosed(newBytesBody(raw))
	body := raw
	if decode, ok := decoderFor(httpwire.FirstValue(res.Header["Content-Encoding"])); !ok {
		body = nil
	} else if decode != nil {
		if body, err = decode(raw, limit, c); err != nil {
			body = nil
		}
	}
	if body == nil {
		p.observeUnread(ex, res, name, policy, up)
		return nil
	}
	x.body = rules.Body{Raw: body}
	up.Body = &x.body
	// What enforce mode would answer, as modify and answerUnmatched
	// decide it.
	var e *rewrite.Error
	explained := false
	if route != nil && route.Concerns(status) {
		if rule := route.MatchError(status, up.Body); rule != nil {
			e, explained = x.err.SetMatch(route, rule, up, &ex.req, p.cfg.Limits), true
		}
	}
	if e == nil && policy == rules.Wrap {
		if e = rewrite.Unexplained(route, up, &ex.req, p.cfg.Limits); e != nil {
			explained = true
		} else {
			e = rewrite.Wrap(up, route, &ex.req)
		}
	}
	p.record(ex, res, body, explained)
	if !explained {
		p.unmatched(ex, name, up, "observed, passed through")
	}
	if e != nil {
		p.would(ex, e, up)
	}
	return nil
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
