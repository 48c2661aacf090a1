package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
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
		msg, flat := fault(f, req, v)
		e := Entry{Field: f.Name, Code: FieldCode(route, f), Message: msg}
		if !v.Exists() {
			v = flat
		}
		if v.Exists() {
			e.Received, e.Sent = echo(f, v, maxReceived), fingerprint(v)
			e.DidYouMean = suggestions(f, v)
		}
		out = append(out, e)
	}
	return out
}

// fault states what is wrong with v, field f's value in req (see
// rules.Field.Fault). A body value missing at its nested key but sent at
// the top level of the body is said to belong at its key, and returned as
// flat, to echo.
func fault(f *rules.Field, req *Request, v gjson.Result) (msg string, flat gjson.Result) {
	if !v.Exists() && req != nil {
		if flat = req.flat(f); flat.Exists() {
			msg = "belongs at " + f.Key + ", not at the top level"
			if f.Rule != "is required" {
				msg += "; " + f.Rule
			}
			return msg, flat
		}
		if flat = req.inBody(f); flat.Exists() {
			msg = "belongs in " + place(f) + ", not in the body"
			if f.Rule != "is required" {
				msg += "; " + f.Rule
			}
			return msg, flat
		}
	}
	msg = f.Fault(v)
	if v.Type == gjson.String {
		if note := lookalikeNote(v.Str); note != "" {
			msg += "; " + note
		}
	}
	return msg, flat
}

// place names where a field outside the body is sent.
func place(f *rules.Field) string {
	switch f.In {
	case rules.InHeader:
		return "the " + f.Key + " header"
	case rules.InQuery:
		return "the query parameter " + f.Key
	case rules.InForm:
		return "the form member " + f.Key
	case rules.InXML:
		return "the XML element " + f.Key
	}
	return "the path"
}

// FieldCode is the code a fault of field f carries: that of the route's
// first error rule that names f and states f's rule, so that a fault reads
// the same whether the upstream or signpost found it, else InvalidCode's.
// A rule with a message of its own (no such ticket) speaks of existence or
// business, not of the value's form, and lends no code.
func FieldCode(route *rules.Route, f *rules.Field) string {
	for _, e := range route.Errors {
		if e.Field == f && e.StatesRule {
			return e.Code
		}
	}
	return InvalidCode(f.Name)
}

// InvalidCode is the code of a fault of the field or argument named name
// that no rule gives one: invalid_ and the name's words in snake_case, as
// every code is (photoUrls: invalid_photo_urls, X-Api-Key:
// invalid_x_api_key, filter[status]: invalid_filter_status).
func InvalidCode(name string) string {
	b := make([]byte, 0, len("invalid_")+len(name)+4)
	b = append(b, "invalid_"...)
	start := len(b)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			// A capital opens a word after a small letter or a digit, and
			// ends a run of capitals before a small letter (HTTPServer).
			prevLower := i > 0 && (name[i-1] >= 'a' && name[i-1] <= 'z' || name[i-1] >= '0' && name[i-1] <= '9')
			endsRun := i > 0 && name[i-1] >= 'A' && name[i-1] <= 'Z' && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
			if (prevLower || endsRun) && len(b) > start && b[len(b)-1] != '_' {
				b = append(b, '_')
			}
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b = append(b, c)
		default:
			if len(b) > start && b[len(b)-1] != '_' {
				b = append(b, '_')
			}
		}
	}
	for len(b) > start && b[len(b)-1] == '_' {
		b = b[:len(b)-1]
	}
	if len(b) == start {
		return "invalid_value"
	}
	return string(b)
}

// Batch folds field faults into one body sent with status: the flat
// single-error shape for one fault, validation_failed for more, and nil for
// none. Every faulty field is named and each message stated once: a fault
// whose message an earlier entry states refers to it (same_as); at most max
// entries (zero means DefaultMaxErrors) are listed, and the faults past
// them are named in unlisted, so that a body stays small however many
// fields are at fault.
func Batch(status int, faults []Entry, max int) *Error {
	switch len(faults) {
	case 0:
		return nil
	case 1:
		f := faults[0]
		return &Error{Status: status, Code: f.Code, Field: f.Field, Message: f.Message, Received: f.Received, Sent: f.Sent, DidYouMean: f.DidYouMean}
	}
	if max <= 0 {
		max = DefaultMaxErrors
	}
	n := len(faults)
	msg := strconv.Itoa(n) + " fields are invalid; fix each one listed, then repeat the call."
	listed, unlisted := faults, []Entry(nil)
	if n > max || repeats(faults) {
		listed, unlisted = stateOnce(faults, max)
	}
	if len(unlisted) > 0 {
		msg = strconv.Itoa(n) + " fields are invalid, " + strconv.Itoa(len(listed)) + " listed here with their rules and " +
			strconv.Itoa(len(unlisted)) + " more named in unlisted; fix them all, then repeat the call."
	}
	return &Error{Status: status, Code: CodeValidationFailed, Message: msg, Errors: listed, Unlisted: unlisted}
}

// repeats reports whether two faults share a message.
func repeats(faults []Entry) bool {
	for i := range faults {
		for j := range i {
			if faults[j].Message == faults[i].Message {
				return true
			}
		}
	}
	return false
}

// stateOnce lists at most max faults, in order, each message stated by the
// first entry that has it and referred to by the later ones (same_as): the
// entries that state a message first, up to max, then those that refer to
// a listed one while room is left. The other faults are left unlisted.
func stateOnce(faults []Entry, max int) (listed, unlisted []Entry) {
	stater := make([]int, len(faults)) // the index of the fault stating each one's message
	states := 0
	for i, f := range faults {
		stater[i] = i
		for j := range i {
			if stater[j] == j && faults[j].Message == f.Message {
				stater[i] = j
				break
			}
		}
		if stater[i] == i && states < max {
			states++
		}
	}
	keep := make([]bool, len(faults))
	room, stated := max, 0
	for i := range faults {
		if stater[i] == i && stated < states {
			keep[i], stated, room = true, stated+1, room-1
		}
	}
	for i := range faults {
		if stater[i] != i && keep[stater[i]] && room > 0 {
			keep[i], room = true, room-1
		}
	}
	listed = make([]Entry, 0, min(len(faults), max))
	for i, f := range faults {
		if !keep[i] {
			unlisted = append(unlisted, f)
			continue
		}
		f.SameAs = ""
		if stater[i] != i {
			f.SameAs = faults[stater[i]].Field
		}
		listed = append(listed, f)
	}
	return listed, unlisted
}

// Before validates a request in a route's "before" mode: nil when every
// declared field conforms, else the body to answer with, status 400,
// without calling the upstream.
func Before(route *rules.Route, req *Request, lim rules.Limits) *Error {
	if route.Format == rules.FormatJSONRPC && req.batch() {
		return nil // calls of their own, each answered by the upstream
	}
	if e := BodyFault(route, req); e != nil {
		return e
	}
	return faultsOf(route, req, 400, lim)
}

// faultsOf is the body for route's declared fields at fault in req, sent
// with status, or nil when none is. One fault of a field that names the
// call producing its values names that call in next_call, as a matched
// rule would.
func faultsOf(route *rules.Route, req *Request, status int, lim rules.Limits) *Error {
	e := Batch(status, Validate(route, req, lim.Received), lim.Errors)
	if e != nil && len(e.Errors) == 0 {
		if f := route.Field(e.Field); f != nil && f.Lookup != nil {
			if sent := req.Value(f); carried(sent) {
				e.NextCall = &Call{Name: f.Lookup.Route.Name, Arguments: []Argument{{f.Lookup.Args[0].Name, echo(f, sent, lim.Received)}}}
			}
		}
	}
	return e
}

// BodyFault describes a request body that is not one JSON object, on a
// route with body fields, status 400: what is wrong with it, and the
// object expected. It is nil for a JSON object, an empty body, and a
// route without body fields, whose body signpost never reads.
func BodyFault(route *rules.Route, req *Request) *Error {
	if req == nil || len(req.Body) == 0 || !route.HasBodyFields() || route.Format == rules.FormatJSONRPC && req.batch() {
		return nil
	}
	var code, what, send string
	switch route.Body {
	case rules.EncodingXML:
		code, what, send = CodeInvalidXMLBody, xmlProblem(req.Body), "one XML document"
	case rules.EncodingForm, rules.EncodingMultipart:
		if req.formValues() == nil {
			code, what = CodeInvalidFormBody, req.formProblem
		}
		send = "a form-encoded body (Content-Type: application/x-www-form-urlencoded)"
		if route.Body == rules.EncodingMultipart {
			send = "a multipart/form-data body"
		}
	default:
		if !req.bodyObject() {
			code, what, send = CodeInvalidJSON, bodyProblem(req.Body), "one JSON object"
		}
	}
	if what == "" {
		return nil
	}
	var names []string
	for _, f := range route.Fields {
		if f.In == rules.InBody || f.In == rules.InForm || f.In == rules.InXML {
			names = append(names, f.Name)
		}
	}
	return &Error{Status: 400, Code: code,
		Message: "the request body " + what + "; send " + send + " with the fields " + strings.Join(names, ", ")}
}

// bodyProblem says what keeps b from being one JSON object, in words of
// signpost's own (never the body's text, which is the caller's), or ""
// when it is one.
func bodyProblem(b []byte) string {
	if rules.IsJSON(b) {
		switch v := gjson.ParseBytes(b); {
		case v.IsObject():
			return ""
		case v.IsArray():
			return "is a JSON array"
		case v.Type == gjson.Null:
			return "is JSON null"
		case v.Type == gjson.String:
			return "is a JSON string"
		case v.Type == gjson.Number:
			return "is a JSON number"
		default:
			return "is a JSON boolean"
		}
	}
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return "starts with a byte order mark"
	}
	if gjson.ValidBytes(b) {
		return "nests deeper than " + strconv.Itoa(rules.MaxJSONDepth) + " levels"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var first json.RawMessage
	err := dec.Decode(&first)
	if err == nil {
		if len(bytes.TrimSpace(first)) > 0 && first[0] == '{' {
			return "has text after the JSON object"
		}
		return "has text after the first JSON value"
	}
	if formEncoded(b) {
		return "is form-encoded, not JSON"
	}
	if !utf8.Valid(b) {
		return "is not JSON: it is not UTF-8 text"
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		at := " at byte " + strconv.FormatInt(syn.Offset, 10)
		var c byte
		if syn.Offset > 0 && int(syn.Offset) <= len(b) {
			c = b[syn.Offset-1]
		}
		switch {
		case c == '\'':
			return "is not JSON: a string" + at + " is in single quotes, where JSON takes double quotes"
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			return "is not JSON: text" + at + " is not in double quotes"
		}
		return "is not JSON: an unexpected character" + at
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "is blank"
	}
	return "is not JSON: it ends before the JSON value does"
}

// formEncoded reports whether b reads as an HTML form's fields,
// name=value pairs joined by &.
func formEncoded(b []byte) bool {
	for pair := range strings.SplitSeq(string(b), "&") {
		name, _, ok := strings.Cut(pair, "=")
		if !ok || name == "" || strings.ContainsAny(name, "{}\" \t\r\n:") {
			return false
		}
	}
	return true
}
