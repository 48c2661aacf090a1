package rewrite

import (
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
)

// DefaultMaxErrors caps the entries of a batched body.
const DefaultMaxErrors = 10

// Validate checks every declared field of route in req independently and
// returns one entry per field whose value breaks its constraint, in declared
// order. It judges only the arguments' shape, never whether a record exists.
func Validate(route *rules.Route, req *Request, maxReceived int) []Entry {
	return validate(route, req, maxReceived, nil)
}

// validate is Validate, with known standing for the fault of the field it
// names, found already.
func validate(route *rules.Route, req *Request, maxReceived int, known *Entry) []Entry {
	var out []Entry
	for _, f := range route.Fields {
		if known != nil && f.Name == known.Field {
			out = append(out, *known)
			continue
		}
		v := req.Value(f)
		if f.Check(v) {
			continue
		}
		e := Entry{Field: f.Name, Code: FieldCode(route, f), Message: f.Rule}
		if v.Exists() {
			e.Received = appendValue(nil, v, maxReceived)
			e.DidYouMean = suggestions(f, v)
		} else if f.Rule != "is required" {
			e.Message = "is required; " + f.Rule
		}
		out = append(out, e)
	}
	return out
}

// FieldCode is the code a fault of field f carries: that of the route's
// first error rule that names f and states f's rule, so that a fault reads
// the same whether the upstream or signpost found it, else invalid_<field>.
// A rule with a message of its own (no such ticket) speaks of existence or
// business, not of the value's form, and lends no code.
func FieldCode(route *rules.Route, f *rules.Field) string {
	for _, e := range route.Errors {
		if e.Field == f && e.StatesRule {
			return e.Code
		}
	}
	return "invalid_" + f.Name
}

// Batch folds field faults into one body sent with status: the flat
// single-error shape for one fault, validation_failed listing at most max
// (zero means DefaultMaxErrors) for more, and nil for none.
func Batch(status int, faults []Entry, max int) *Error {
	switch len(faults) {
	case 0:
		return nil
	case 1:
		f := faults[0]
		return &Error{Status: status, Code: f.Code, Field: f.Field, Message: f.Message, Received: f.Received, DidYouMean: f.DidYouMean}
	}
	if max <= 0 {
		max = DefaultMaxErrors
	}
	n := len(faults)
	msg := strconv.Itoa(n) + " fields are invalid; fix each one listed, then repeat the call."
	if n > max {
		msg = strconv.Itoa(n) + " fields are invalid, the first " + strconv.Itoa(max) +
			" listed here; fix them, then repeat the call."
		return &Error{Status: status, Code: "validation_failed", Message: msg, Errors: faults[:max:max], Unlisted: faults[max:]}
	}
	return &Error{Status: status, Code: "validation_failed", Message: msg, Errors: faults}
}

// CodeInvalidJSON is the code of a request body that is not JSON on a route
// that declares body fields.
const CodeInvalidJSON = "invalid_json_body"

// Before validates a request in a route's "before" mode: nil when every
// declared field conforms, else the body to answer with, status 400,
// without calling the upstream.
func Before(route *rules.Route, req *Request, lim rules.Limits) *Error {
	if len(req.Body) > 0 && route.HasBodyFields() && !rules.IsJSON(req.Body) {
		var names []string
		for _, f := range route.Fields {
			if f.In == rules.InBody {
				names = append(names, f.Name)
			}
		}
		return &Error{Status: 400, Code: CodeInvalidJSON,
			Message: "the request body is not valid JSON; send one JSON object with the fields " + strings.Join(names, ", ")}
	}
	e := Batch(400, Validate(route, req, lim.Received), lim.Errors)
	if e != nil && len(e.Errors) == 0 {
		// One fault: a field that names the call producing its values
		// names it in next_call too, as after the upstream.
		if f := route.Field(e.Field); f != nil && f.Lookup != nil {
			if sent := req.Value(f); carried(sent) {
				e.NextCall = &Call{Name: f.Lookup.Route.Name, Arguments: []Argument{{f.Lookup.Args[0].Name, appendValue(nil, sent, lim.Received)}}}
			}
		}
	}
	return e
}
