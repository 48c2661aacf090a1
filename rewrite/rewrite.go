// Package rewrite turns a matched upstream error and the request that
// caused it into an actionable body: a stable code, the field at fault, the
// value the request carried, the rule it broke, and whether to retry.
//
// Bodies are built with sjson in a fixed key order. Every echoed value is a
// JSON value in its own member, never spliced into prose.
package rewrite

import (
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ContentType is the media type of every body signpost writes.
const ContentType = "application/json"

// Error is the content of one actionable error body.
type Error struct {
	Code    string
	Field   string // empty when no single field is at fault
	Message string
	// Received is the offending value as JSON, or nil when there is none.
	Received  []byte
	Retryable bool
}

// JSON renders e in the order error, field, message, received, retryable.
func (e *Error) JSON() []byte {
	b := make([]byte, 0, 128+len(e.Message)+len(e.Received))
	b = append(b, '{', '}')
	b = set(b, "error", appendQuoted(nil, e.Code, len(e.Code)))
	if e.Field != "" {
		b = set(b, "field", appendQuoted(nil, e.Field, len(e.Field)))
	}
	b = set(b, "message", appendQuoted(nil, e.Message, len(e.Message)))
	if e.Received != nil {
		b = set(b, "received", e.Received)
	}
	if e.Retryable {
		b = set(b, "retryable", []byte("true"))
	} else {
		b = set(b, "retryable", []byte("false"))
	}
	return b
}

// set adds a member holding raw JSON. The keys are literal and the values
// already valid JSON, so sjson cannot fail here.
func set(b []byte, key string, raw []byte) []byte {
	out, err := sjson.SetRawBytesOptions(b, key, raw, &sjson.Options{ReplaceInPlace: true})
	if err != nil {
		panic("rewrite: sjson rejected key " + key + ": " + err.Error())
	}
	return out
}

// Matched describes an upstream error that rule matched, for a request to
// route. maxReceived caps an echoed string, in characters.
func Matched(rule *rules.ErrorRule, status int, body *rules.Body, req *Request, maxReceived int) *Error {
	e := &Error{Code: rule.Code, Message: rule.Message, Retryable: rule.IsRetryable(status)}
	if f := rule.Field; f != nil {
		e.Field = f.Name
		if e.Message == "" {
			e.Message = f.Rule
		}
	}
	if s, ok := rule.Captured(body); ok {
		e.Received = appendQuoted(nil, s, maxReceived)
	} else if rule.Field != nil && req != nil {
		if v := req.Value(rule.Field); v.Exists() {
			e.Received = appendValue(nil, v, maxReceived)
		}
	}
	return e
}

// Failure describes signpost's own failure to get an answer from the
// upstream, such as a refused connection or a timeout.
func Failure(code, message string, retryable bool) *Error {
	return &Error{Code: code, Message: message, Retryable: retryable}
}

// Received renders a request value as it would be echoed, for callers that
// show it elsewhere (logs, tests).
func Received(v gjson.Result, max int) []byte { return appendValue(nil, v, max) }
