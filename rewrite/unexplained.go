package rewrite

import (
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Unexplained answers an upstream 4xx that no rule matched with the faults
// of route's declared fields, batched and sent with the upstream's status,
// since a field plainly at fault explains the refusal better than a
// generic body. It returns nil when every declared field conforms, for a
// 5xx, for a status about credentials (401, 403, 407) or time (408, 429),
// which a field fault would hide, and for a body that is not one JSON
// object, whose fields cannot be judged: those are wrapped.
func Unexplained(route *rules.Route, up *Upstream, req *Request, lim rules.Limits) *Error {
	if route == nil || req == nil || len(route.Fields) == 0 || up.Status < 400 || up.Status >= 500 {
		return nil
	}
	switch up.Status {
	case 401, 403, 407, 408, 429:
		return nil
	}
	if len(req.Body) > 0 && route.HasBodyFields() && !gjson.ParseBytes(req.Body).IsObject() {
		return nil
	}
	e := Batch(up.Status, Validate(route, req, lim.Received), lim.Errors)
	if e != nil && len(e.Errors) == 0 {
		// One fault: a field that names the call producing its values
		// names it in next_call, as a matched rule would.
		if f := route.Field(e.Field); f != nil && f.Lookup != nil {
			if sent := req.Value(f); carried(sent) {
				e.NextCall = &Call{Name: f.Lookup.Route.Name, Arguments: []Argument{{f.Lookup.Args[0].Name, appendValue(nil, sent, lim.Received)}}}
			}
		}
	}
	return e
}
