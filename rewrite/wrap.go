package rewrite

import (
	"net/http"
	"strconv"

	"github.com/signpost-proxy/signpost/rules"
)

// Wrap describes an upstream error that no rule matched, or whose body was
// too large to read: a generic code, the status kept, retryable derived
// from it. A 5xx on a request that is not idempotent may have taken effect,
// so it is not retryable: the caller is told to check first; but where the
// upstream names a wait (Retry-After on a 502, 503 or 504), the call is
// retryable after it, once checked. Any other
// 5xx on a GET or HEAD is retryable, after a second when the upstream
// names no wait: its cause is unknown. The
// upstream's own words are quoted only when they are one short line from a
// 4xx; HTML, stack traces, multi-line text and 5xx bodies stay in the
// logs. route and req may be nil, when signpost knows neither.
func Wrap(up *Upstream, route *rules.Route, req *Request) *Error {
	status := up.Status
	phrase := strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		phrase += " " + t
	}
	e := &Error{Status: status, Retryable: rules.TransientStatus(status) && (status < 500 || req.idempotent()),
		Uncertain: status >= 500 && !req.idempotent()}
	// A safe call's 5xx of no known cause may pass: one retry after a
	// short wait is worth it, and a repeat of the same failure is told
	// to stop. 501 and 505 say what will not change.
	unknown := !e.Retryable && status >= 500 && status < 600 && req.safe() && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported
	fallback := 0
	switch {
	case status == http.StatusTooManyRequests:
		e.Code, e.Message = CodeRateLimited, "the upstream is limiting the rate of calls ("+phrase+"); wait, then repeat the call"
	case unknown:
		e.Code, e.Message, e.Retryable, fallback = CodeFailed, "the upstream failed ("+phrase+") for a reason not known; one retry after a short wait is reasonable", true, 1
	case status >= 500 && e.Retryable:
		e.Code, e.Message = CodeFailed, "the upstream is unavailable for now ("+phrase+"); repeat the call shortly"
	case status >= 500 && rules.TransientStatus(status) && retryAfter(up.Header, 0, timeNow()) > 0:
		// The upstream names a wait: the call may be repeated then, once
		// the caller has checked whether it took effect.
		e.Code, e.Message = CodeFailed, "the upstream is unavailable for now ("+phrase+")"
		e.waitNamed(up)
	case status >= 500:
		e.Code, e.Message = CodeFailed, "the upstream failed ("+phrase+"); the call may or may not have taken effect, so check before repeating it"
	default:
		e.Code, e.Message = CodeRejected, "the upstream rejected the call ("+phrase+") for a reason signpost has no rule for"
	}
	if e.Retryable {
		e.RetryAfter = retryAfter(up.Header, fallback, timeNow())
	}
	e.keepSaid(up, route, req)
	return e
}
