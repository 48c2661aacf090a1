package proxy

import (
	"errors"
	"net/http"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// inspectBatch reads the upstream's answer to a JSON-RPC batch, within the
// bounds of an error body, and rewrites each error in it as the answer to
// its own call would be: the call (found by its id in the request) chooses
// its route among ex.batch, whose rules are tried with the status the
// batch was answered with, then, as a lone call's error is usually sent,
// with 400. Every other element, and an answer signpost cannot read whole,
// pass on byte for byte.
func (p *Proxy) inspectBatch(res *http.Response, ex *exchange) error {
	limit := p.cfg.Limits.ErrorBody
	if isEventStream(res.Header) || res.ContentLength > limit || res.ContentLength == 0 {
		return nil
	}
	if _, ok := decoderFor(httpwire.FirstValue(res.Header["Content-Encoding"])); !ok || httpwire.FirstValue(res.Header["Content-Encoding"]) != "" {
		return nil // an encoded batch passes as it came
	}
	x := examine(res.StatusCode, res.Header)
	c := &x.charge
	defer c.End()
	raw, err := p.readError(res, ex, c, limit)
	switch {
	case errors.Is(err, errSlowBody):
		return nil
	case err != nil || int64(len(raw)) > limit:
		// What was read, then the rest as it comes, or the break; a body
		// the budget stopped reading goes on whole.
		if errors.Is(err, budget.ErrSpent) {
			err = nil
		}
		res.Body = c.KeepUntilClosed(putBack(raw, res.Body, err))
		return nil
	}
	res.Body.Close()
	out, rewritten := p.rewriteBatch(ex, res.StatusCode, raw)
	if !rewritten {
		res.Body = c.KeepUntilClosed(newBytesBody(raw))
		return nil
	}
	ex.outcome = metrics.OutcomeRewritten
	x.out = out
	x.reply.Reset(out)
	replaceBody(res, &x.reply, rewrite.ContentType)
	ex.examined = x
	return nil
}

// rewriteBatch returns the batch answer raw with each error it can
// explain rewritten, and whether any was.
func (p *Proxy) rewriteBatch(ex *exchange, status int, raw []byte) ([]byte, bool) {
	answers := gjson.ParseBytes(raw)
	calls := gjson.ParseBytes(ex.req.Body)
	if !rules.IsJSON(raw) || !answers.IsArray() || !calls.IsArray() {
		return nil, false
	}
	byID := map[string]gjson.Result{}
	calls.ForEach(func(_, c gjson.Result) bool {
		if id := c.Get("id"); id.Exists() {
			byID[id.Raw] = c
		}
		return true
	})
	out := make([]byte, 0, len(raw)+256)
	out = append(out, '[')
	rewritten := false
	first := true
	answers.ForEach(func(_, a gjson.Result) bool {
		if !first {
			out = append(out, ',')
		}
		first = false
		if body, ok := p.rewriteCall(ex, status, a, byID); ok {
			out = append(out, body...)
			rewritten = true
		} else {
			out = append(out, a.Raw...)
		}
		return true
	})
	return append(out, ']'), rewritten
}

// rewriteCall rewrites one answer of a batch, a JSON-RPC error, as its
// call's route would rewrite it answered alone; ok is false when none of
// its rules explains it.
func (p *Proxy) rewriteCall(ex *exchange, status int, a gjson.Result, byID map[string]gjson.Result) ([]byte, bool) {
	id := a.Get("id")
	call, known := byID[id.Raw]
	if !a.Get("error").IsObject() || !known {
		return nil, false
	}
	req := rewrite.Request{Method: ex.req.Method, Path: ex.req.Path, RawQuery: ex.req.RawQuery, Header: ex.req.Header, Body: []byte(call.Raw)}
	route := ex.batch[0]
	if len(ex.batch) > 1 {
		route = chooseInGroup(ex.batch, &req)
	}
	if route == nil || route.Format != rules.FormatJSONRPC {
		return nil, false
	}
	body := &rules.Body{Raw: []byte(a.Raw)}
	for _, st := range []int{status, http.StatusBadRequest} {
		rule := route.MatchError(st, body)
		if rule == nil {
			continue
		}
		up := &rewrite.Upstream{Status: rule.AnswerStatus(st), Header: http.Header{}, Body: body}
		var e rewrite.Error
		e.SetMatch(route, rule, up, &req, p.cfg.Limits)
		if p.metrics != nil {
			p.metrics.Rejected(route.Name, e.Code, e.Field)
		}
		return e.AppendJSONRPC(nil, []byte(id.Raw), rewrite.RPCCode(up)), true
	}
	return nil, false
}
