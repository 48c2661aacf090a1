package rewrite

import (
	"hash/maphash"
	"strconv"

	"github.com/tidwall/gjson"
)

// Stop is the answer to a caller that had the failure e n times in a row
// on the route, with no field at fault: the code kept, a message that says
// repeating the call will not succeed now and what to do instead (futile,
// a rule's own word; else the next call, when e names one; else to tell
// the user), the count in "repeated", and never retryable. Where the
// calls may have taken effect (e.Uncertain), it still says so, and to
// check first. fromAddress says the calls were counted over every caller
// at the client's address, for want of a session: the message says so,
// and claims nothing of the caller itself. Nothing of the upstream's own
// words is kept.
func Stop(e *Error, n int, futile string, fromAddress bool) *Error {
	msg := "this call failed the same way " + strconv.Itoa(n) + " times in a row" + seenFrom(fromAddress) + "; repeating it will not succeed now"
	instead := "stop, and tell the user"
	switch {
	case futile != "":
		instead = futile
	case e.NextCall != nil:
		instead = "make next_call first"
	}
	switch {
	case e.Uncertain:
		msg += "; each call may or may not have taken effect: check that first, then " + instead
	case futile != "" || e.NextCall != nil:
		msg += "; " + instead
	default:
		msg += ": " + instead
	}
	return &Error{Status: e.Status, Code: e.Code, Message: msg, NextCall: e.NextCall, Repeated: n, Uncertain: e.Uncertain}
}

// AlreadyRejected marks e, a field fault the caller had n times in a row
// on the route, as one whose values were rejected before: a fault is fixed
// by another value, so the message asks for one, and the rule, received
// value and did_you_mean stay as they were. A field that was not sent is
// missing, not rejected: a fault with one keeps its message. fromAddress
// is as Stop's.
func AlreadyRejected(e *Error, n int, fromAddress bool) {
	e.Repeated = n
	e.Retryable, e.RetryAfter = false, 0
	if !allSent(e) {
		return
	}
	what := "this value was already rejected" + seenFrom(fromAddress) + "; send another: "
	if len(e.Errors)+len(e.Unlisted) > 1 {
		what = "these values were already rejected" + seenFrom(fromAddress) + "; send others: "
	}
	e.Message = what + e.Message
}

// seenFrom says where the calls a repeat was counted over came from, when
// that was the client's address rather than the caller's session.
func seenFrom(fromAddress bool) string {
	if fromAddress {
		return " from this address"
	}
	return ""
}

// allSent reports whether every field fault of e is of a value sent.
func allSent(e *Error) bool {
	if len(e.Errors) == 0 {
		return e.Received != nil
	}
	for _, en := range e.Errors {
		if en.Received == nil {
			return false
		}
	}
	for _, en := range e.Unlisted {
		if en.Sent == 0 {
			return false
		}
	}
	return true
}

// sentSeed keys the fingerprints of values sent, for the life of the
// process.
var sentSeed = maphash.MakeSeed()

// fingerprint identifies the value v as sent, raw: never zero.
func fingerprint(v gjson.Result) uint64 {
	var h maphash.Hash
	h.SetSeed(sentSeed)
	h.WriteByte(byte(v.Type))
	if v.Raw != "" {
		h.WriteString(v.Raw)
	} else {
		h.WriteString(v.Str)
	}
	return h.Sum64() | 1
}
