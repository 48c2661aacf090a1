package rewrite

import "github.com/signpost-proxy/signpost/rules"

// Unexplained answers an upstream 4xx that no rule matched with the faults
// of route's declared fields, batched and sent with the upstream's status,
// since a field plainly at fault explains the refusal better than a
// generic body. It returns nil when every declared field conforms, for a
// 5xx, for a status about credentials (401, 403, 407) or time (408, 429),
// which a field fault would hide: those are wrapped. A body that is not
// one JSON object is answered as Before answers it, with the upstream's
// status: its fields cannot be judged, and it is what to fix.
func Unexplained(route *rules.Route, up *Upstream, req *Request, lim rules.Limits) *Error {
	if route == nil || req == nil || len(route.Fields) == 0 || up.Status < 400 || up.Status >= 500 {
		return nil
	}
	switch up.Status {
	case 401, 403, 407, 408, 429:
		return nil
	}
	if e := BodyFault(route, req); e != nil {
		e.Status = up.Status
		return e
	}
	e := faultsOf(route, req, up.Status, lim)
	if e != nil {
		e.keepSaid(up, route, req)
	}
	return e
}
