package rewrite

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Codes of wrapped upstream errors, which no rule explains.
const (
	CodeRejected    = "upstream_rejected" // a 4xx
	CodeRateLimited = "rate_limited"      // a 429
	CodeFailed      = "upstream_failed"   // a 5xx
)

// MaxUpstreamMessage is the longest upstream message a wrapped body quotes.
const MaxUpstreamMessage = 200

// Wrap describes an upstream error that no rule matched, or whose body was
// too large to read: a generic code, the status kept, retryable derived
// from it. The upstream's own words are quoted only when they are one short
// line from a 4xx; HTML, stack traces, multi-line text and 5xx bodies stay
// in the logs.
func Wrap(up *Upstream) *Error {
	status := up.Status
	phrase := strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		phrase += " " + t
	}
	e := &Error{Status: status, Retryable: rules.TransientStatus(status)}
	switch {
	case status == http.StatusTooManyRequests:
		e.Code, e.Message = CodeRateLimited, "the upstream is limiting the rate of calls ("+phrase+"); wait, then repeat the call"
	case status >= 500 && e.Retryable:
		e.Code, e.Message = CodeFailed, "the upstream is unavailable for now ("+phrase+"); repeat the call shortly"
	case status >= 500:
		e.Code, e.Message = CodeFailed, "the upstream failed ("+phrase+"); the call may or may not have taken effect, so check before repeating it"
	default:
		e.Code, e.Message = CodeRejected, "the upstream rejected the call ("+phrase+") for a reason signpost has no rule for"
	}
	if e.Retryable {
		e.RetryAfter = retryAfter(up.Header, 0, timeNow())
	}
	if status < 500 {
		e.UpstreamMessage = shortMessage(up)
	}
	return e
}

// shortMessage returns the upstream's own message when it is safe and
// useful to quote: one line of at most MaxUpstreamMessage characters from a
// JSON "error" or "message" string, or from a plain-text body.
func shortMessage(up *Upstream) string {
	if up.Body == nil || len(up.Body.Raw) == 0 {
		return ""
	}
	raw := up.Body.Raw
	var msg string
	if rules.IsJSON(raw) {
		for _, key := range []string{"error", "message"} {
			if v := gjson.GetBytes(raw, key); v.Type == gjson.String {
				msg = v.Str
				break
			}
		}
	} else {
		mt, _, _ := mime.ParseMediaType(up.Header.Get("Content-Type"))
		if mt != "text/plain" {
			return ""
		}
		msg = string(raw)
	}
	msg = strings.TrimSpace(msg)
	if msg == "" || !utf8.ValidString(msg) || utf8.RuneCountInString(msg) > MaxUpstreamMessage || looksInternal(msg) {
		return ""
	}
	for _, r := range msg {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "" // more than one line, or not text
		}
	}
	return msg
}

// looksInternal spots what belongs to the operator, not the caller: markup,
// stack frames and exception names.
func looksInternal(s string) bool {
	lower := strings.ToLower(s)
	for _, tell := range []string{"<", "exception", "traceback", "goroutine ", "panic:", ".java:", ".go:", ".py\""} {
		if strings.Contains(lower, tell) {
			return true
		}
	}
	return false
}
