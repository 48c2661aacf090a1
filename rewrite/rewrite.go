// Package rewrite turns a matched upstream error and the request that
// caused it into an actionable body: a stable code, the field at fault, the
// value the request carried, the rule it broke, and whether to retry.
//
// Bodies are written in a fixed key order, appended member by member to one
// buffer. Every echoed value is a JSON value in its own member, never
// spliced into prose.
package rewrite

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Media types of the bodies signpost writes.
const (
	ContentType        = "application/json"
	ProblemContentType = "application/problem+json"
)

// Error is the content of one actionable error body.
type Error struct {
	// Status is the HTTP status the body is sent with.
	Status  int
	Code    string
	Field   string // empty when no single field is at fault
	Message string
	// UpstreamCode, UpstreamMessage and UpstreamDetail quote what the
	// upstream's own body said (see Said), or are empty.
	UpstreamCode    string
	UpstreamMessage string
	UpstreamDetail  []string
	// Received is the offending value as JSON, or nil when there is none.
	Received []byte
	// Sent fingerprints the value sent, raw, before any mask or cut: what
	// tells two values apart when their echoes are alike. Zero when none
	// was sent; it is not rendered.
	Sent uint64
	// DidYouMean holds up to three permitted values close to the one sent.
	DidYouMean []string
	// Errors lists every field fault of a batched body, in declared order.
	Errors []Entry
	// Unlisted holds the faults past the cap: counted and logged, sent
	// by field name only.
	Unlisted []Entry
	// NextCall is the call to make before this one can succeed, or nil.
	NextCall *Call
	// Repeated is how many times in a row the caller has had this same
	// failure on the route, when it is more than once; zero omits it.
	Repeated int
	// Retryable says whether the same call may succeed later.
	Retryable bool
	// RetryAfter is the wait before a retry, in whole seconds; zero omits it.
	RetryAfter int
	// Uncertain says the call may have taken effect (a 5xx, a timeout or
	// a cut to a call that is not idempotent), so that an answer to its
	// repeat still says so. It is not rendered.
	Uncertain bool
}

// Entry is one field fault in a batched body.
type Entry struct {
	Field, Code, Message string
	Received             []byte // JSON, or nil
	Sent                 uint64 // as Error's
	DidYouMean           []string
	// SameAs names the earlier entry whose message this one shares: the
	// body says same_as in its place, so that each rule is stated once.
	SameAs string
}

// Call names a route and the arguments to call it with.
type Call struct {
	Name      string
	Arguments []Argument // in declared order
}

// Argument is one argument of a Call; Value is JSON.
type Argument struct {
	Name  string
	Value []byte
}

// JSON renders e as signpost's own format, members in the order error,
// field, message, upstream_code, upstream_message, upstream_detail,
// received, did_you_mean, errors, unlisted, next_call, repeated,
// retryable, retry_after_seconds.
func (e *Error) JSON() []byte {
	return e.AppendJSON(make([]byte, 0, 160+len(e.Message)+len(e.Received)))
}

// AppendJSON appends JSON's rendering of e to b, so that a caller can
// write every body into one buffer it keeps.
func (e *Error) AppendJSON(b []byte) []byte {
	o := openObject(b)
	o.str("error", e.Code)
	e.members(&o, "message")
	return o.bytes()
}

// ProblemJSON renders e as RFC 9457 Problem Details: type, title, status
// and detail, with signpost's members as extensions.
func (e *Error) ProblemJSON() []byte {
	return e.AppendProblemJSON(make([]byte, 0, 200+len(e.Message)+len(e.Received)))
}

// statusTitle is the reason phrase of status, or, for a status with none,
// the phrase of its class: RFC 9457 asks for a summary in title.
func statusTitle(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	switch {
	case status >= 500:
		return "Server Error"
	case status >= 400:
		return "Client Error"
	}
	return "Error"
}

// AppendProblemJSON appends ProblemJSON's rendering of e to b.
func (e *Error) AppendProblemJSON(b []byte) []byte {
	o := openObject(b)
	o.str("type", "about:blank")
	o.str("title", statusTitle(e.Status))
	o.member("status")
	o.b = strconv.AppendInt(o.b, int64(e.Status), 10)
	o.str("code", e.Code)
	e.members(&o, "detail")
	return o.bytes()
}

// members writes what the formats share, the message under messageKey,
// or, when messageKey is empty, no message: the envelope holds it.
func (e *Error) members(o *object, messageKey string) {
	if e.Field != "" {
		o.str("field", e.Field)
	}
	if messageKey != "" {
		o.str(messageKey, e.Message)
	}
	if e.UpstreamCode != "" {
		o.echo("upstream_code", e.UpstreamCode, MaxUpstreamMessage)
	}
	if e.UpstreamMessage != "" {
		o.echo("upstream_message", e.UpstreamMessage, MaxUpstreamMessage)
	}
	if len(e.UpstreamDetail) > 0 {
		o.member("upstream_detail")
		o.b = appendList(o.b, e.UpstreamDetail, func(b []byte, d string) []byte { return appendEcho(b, d, MaxUpstreamMessage) })
	}
	if e.Received != nil {
		o.raw("received", e.Received)
	}
	if len(e.DidYouMean) > 0 {
		o.member("did_you_mean")
		o.b = appendStringList(o.b, e.DidYouMean)
	}
	if len(e.Errors) > 0 {
		// Nested objects are written in place, in the one buffer.
		o.member("errors")
		o.b = append(o.b, '[')
		for i, en := range e.Errors {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			item := openObject(o.b)
			item.str("field", en.Field)
			item.str("code", en.Code)
			if en.SameAs != "" {
				item.str("same_as", en.SameAs)
			} else {
				item.str("message", en.Message)
			}
			if en.Received != nil {
				item.raw("received", en.Received)
			}
			if len(en.DidYouMean) > 0 {
				item.member("did_you_mean")
				item.b = appendStringList(item.b, en.DidYouMean)
			}
			o.b = item.bytes()
		}
		o.b = append(o.b, ']')
	}
	if len(e.Unlisted) > 0 {
		o.member("unlisted")
		o.b = append(o.b, '[')
		for i, en := range e.Unlisted {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendQuoted(o.b, en.Field, -1)
		}
		o.b = append(o.b, ']')
	}
	if c := e.NextCall; c != nil {
		o.member("next_call")
		call := openObject(o.b)
		call.str("call", c.Name)
		call.member("arguments")
		args := openObject(call.b)
		for _, a := range c.Arguments {
			args.raw(a.Name, a.Value)
		}
		call.b = args.bytes()
		o.b = call.bytes()
	}
	if e.Repeated > 0 {
		o.member("repeated")
		o.b = strconv.AppendInt(o.b, int64(e.Repeated), 10)
	}
	o.member("retryable")
	o.b = strconv.AppendBool(o.b, e.Retryable)
	if e.RetryAfter > 0 {
		o.member("retry_after_seconds")
		o.b = strconv.AppendInt(o.b, int64(e.RetryAfter), 10)
	}
}

// appendStringList appends ss to b as a JSON array of strings.
func appendStringList(b []byte, ss []string) []byte {
	return appendList(b, ss, func(b []byte, s string) []byte { return appendQuoted(b, s, -1) })
}

// appendList appends ss as a JSON array, each string written by each.
func appendList(b []byte, ss []string, each func([]byte, string) []byte) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, s)
	}
	return append(b, ']')
}

// suggestions proposes permitted values of f for a value sent as a string.
// Where the message lists the permitted set already, only an alias adds
// what the list cannot say (that "high" means p1), so only an alias is
// proposed.
func suggestions(f *rules.Field, v gjson.Result) []string {
	if f == nil || f.Suggest == nil || v.Type != gjson.String {
		return nil
	}
	if f.Listed {
		if alias, ok := f.AliasFor(v.Str); ok {
			return []string{alias}
		}
		return nil
	}
	return f.Suggest.Suggest(v.Str)
}

// object builds a JSON object member by member, in the order the members
// are added, appending to one buffer: a body is written once, never
// reparsed, and nested objects are written in place.
type object struct {
	b     []byte
	empty bool // no member written yet
}

// openObject starts an object at the end of b.
func openObject(b []byte) object { return object{b: append(b, '{'), empty: true} }

func (o *object) str(key, s string) { o.member(key); o.b = appendQuoted(o.b, s, -1) }

// echo writes a member whose text signpost did not write, escaped and cut
// at max characters (see appendEcho).
func (o *object) echo(key, s string, max int) { o.member(key); o.b = appendEcho(o.b, s, max) }

// raw adds a member holding JSON. Keys are signpost's own or declared names
// and values are valid JSON already, so the object stays valid.
func (o *object) raw(key string, raw []byte) { o.member(key); o.b = append(o.b, raw...) }

func (o *object) member(key string) {
	if !o.empty {
		o.b = append(o.b, ',')
	}
	o.empty = false
	o.b = appendQuoted(o.b, key, -1)
	o.b = append(o.b, ':')
}

// bytes closes the object and returns it.
func (o *object) bytes() []byte { return append(o.b, '}') }

// setMatched sets e to the answer for an upstream error that rule
// matched. maxReceived caps an echoed string, in characters.
func (e *Error) setMatched(rule *rules.ErrorRule, up *Upstream, req *Request, maxReceived int) {
	*e = Error{Status: up.Status, Code: rule.Code, Message: rule.Message, Retryable: rule.IsRetryable(up.Status, req.idempotent()),
		Uncertain: up.Status >= 500 && !req.idempotent()}
	f := rule.Field
	if f != nil {
		e.Field = f.Name
	}
	var sent gjson.Result // the field's value, for a lookup's argument
	if f != nil && req != nil {
		sent = req.Value(f)
	}
	captured, isCaptured := rule.Captured(up.Body)
	if f != nil && rule.StatesRule && (sent.Exists() || !isCaptured) {
		// The field's rule may be one the value meets (an empty title, a
		// missing value): say what the upstream refused instead.
		if msg, flat := fault(f, req, sent); msg != f.Rule {
			e.Message = msg + strings.TrimPrefix(rule.Message, f.Rule)
			if !sent.Exists() {
				sent = flat
			}
		}
	}
	if isCaptured {
		sent = rules.CapturedValue(f, captured, sent)
	}
	if sent.Exists() {
		e.Received, e.Sent = echo(f, sent, maxReceived), fingerprint(sent)
	}
	e.Message = fill(rule, e.Message, e.Received, up, req, maxReceived)
	e.keepSaidBeyond(rule, up, req, sent)
	e.DidYouMean = suggestions(f, sent)
	switch {
	case rule.NextCall != nil:
		e.NextCall = callFrom(rule.NextCall, req, maxReceived)
	case f != nil && f.Lookup != nil && carried(sent):
		e.NextCall = &Call{Name: f.Lookup.Route.Name, Arguments: []Argument{{f.Lookup.Args[0].Name, echo(f, sent, maxReceived)}}}
	}
	if e.Retryable {
		e.RetryAfter = retryAfter(up.Header, rule.RetryAfter, timeNow())
	} else if rule.Retryable == nil {
		e.waitNamed(up)
	}
}

// waitNamed makes e, the answer to a call the upstream failed that may
// have taken effect, retryable after the wait the upstream names for a
// status that means "later" (502, 503, 504 with Retry-After): the
// upstream asks for the call again, and the caller must check first.
func (e *Error) waitNamed(up *Upstream) {
	if !rules.TransientStatus(up.Status) {
		return
	}
	if n := retryAfter(up.Header, 0, timeNow()); n > 0 {
		e.Retryable, e.RetryAfter = true, n
		e.Message += "; the call may or may not have taken effect: check first, then retry after " + seconds(n)
	}
}

// seconds says n seconds in words.
func seconds(n int) string {
	if n == 1 {
		return "1 second"
	}
	return strconv.Itoa(n) + " seconds"
}

// SetMatch sets e to the answer for an upstream error that rule of route
// matched, and returns it, or returns a new Error when the answer is the
// declared checks': in the route's "after" mode, a rule's field whose value
// breaks its own declared constraint is answered with that constraint, as
// "before" mode would, and every other declared field at fault is listed
// too, the rule's own answer among them when its field is well formed, so
// that one corrected call can succeed. The status is the upstream's. A
// proxy that renders one error after another can so keep one Error for
// them.
func (e *Error) SetMatch(route *rules.Route, rule *rules.ErrorRule, up *Upstream, req *Request, lim rules.Limits) *Error {
	if b := matchedBodyFault(route, rule, up, req); b != nil {
		*e = *b
		return e
	}
	e.setMatched(rule, up, req, lim.Received)
	if route.Validate != rules.ValidateAfter || up.Status >= 500 || req == nil {
		return e
	}
	if rule.Field == nil {
		e.withFaults(route, req, lim)
		return e
	}
	f := rule.Field
	// The rule's answer stands for its field when the value is well formed
	// (no such ticket) or the rule states the field's rule; a message of
	// its own about a malformed value yields to the constraint, so that a
	// fault reads the same whichever side found it.
	var own *Entry
	if f.Check(req.Value(f)) || rule.StatesRule {
		if !anyOtherFault(route, req, f) {
			return e // alone at fault
		}
		own = &Entry{Field: e.Field, Code: e.Code, Message: e.Message, Received: e.Received, DidYouMean: e.DidYouMean}
	}
	b := Batch(up.Status, validate(route, req, lim.Received, own), lim.Errors)
	b.NextCall = e.NextCall
	return b
}

// withFaults lists with e, the answer of a rule that names no field (an
// unauthorized call, say), the faults of route's declared fields in req:
// the rule's answer alone would hide them, and the call corrected for it
// would fail again on them. Each message is stated once, as Batch states
// them.
func (e *Error) withFaults(route *rules.Route, req *Request, lim rules.Limits) {
	faults := Validate(route, req, lim.Received)
	if len(faults) == 0 {
		return
	}
	max := lim.Errors
	if max <= 0 {
		max = DefaultMaxErrors
	}
	e.Errors, e.Unlisted = faults, nil
	if len(faults) > max || repeats(faults) {
		e.Errors, e.Unlisted = stateOnce(faults, max)
	}
}

// matchedBodyFault is BodyFault for an upstream error that rule matched to
// a field, sent with the upstream's status: a body that is not one JSON
// object, not the fields it was read for, is what to fix. An error about a
// field outside the body that the field's value explains is left to it.
func matchedBodyFault(route *rules.Route, rule *rules.ErrorRule, up *Upstream, req *Request) *Error {
	f := rule.Field
	if f == nil || req == nil || up.Status >= 500 || f.In != rules.InBody && f.Check(req.Value(f)) {
		return nil
	}
	b := BodyFault(route, req)
	if b != nil {
		b.Status = up.Status
	}
	return b
}

// carried reports whether a request carried a value that can fill a call's
// argument: one that is there, and not null, which a call cannot search by.
func carried(v gjson.Result) bool { return v.Exists() && v.Type != gjson.Null }

// anyOtherFault reports whether a declared field other than f breaks its
// constraint, before any entry is built for the batch.
func anyOtherFault(route *rules.Route, req *Request, f *rules.Field) bool {
	for _, g := range route.Fields {
		if g.Name != f.Name && !g.Check(req.Value(g)) {
			return true
		}
	}
	return false
}

// callFrom fills a call's arguments from the failed request; an argument
// whose field the request did not carry, or carried as null, is left out.
func callFrom(c *rules.Call, req *Request, maxReceived int) *Call {
	out := &Call{Name: c.Route.Name, Arguments: make([]Argument, 0, len(c.Args))}
	for _, a := range c.Args {
		if req == nil {
			break
		}
		if v := req.Value(a.From); carried(v) {
			out.Arguments = append(out.Arguments, Argument{a.Name, echo(a.From, v, maxReceived)})
		}
	}
	// The called route's fixed arguments (an RPC method's name) are part
	// of the call an HTTP caller makes.
	for _, f := range c.Route.Fields {
		if f.Const != "" && !slices.ContainsFunc(out.Arguments, func(a Argument) bool { return a.Name == f.Name }) {
			out.Arguments = append(out.Arguments, Argument{f.Name, appendQuoted(nil, f.Const, -1)})
		}
	}
	return out
}

// fill replaces the placeholders of msg, rule's message: {received} with
// the received value, JSON-quoted (the value is never prose), or with "the
// value sent" when there is none; {upstream} with the upstream's own short
// message of a 4xx, quoted and escaped like a received value and cut as
// upstream_message is, at MaxUpstreamMessage characters, when it is safe to
// show (see upstreamDetail), else with "no detail given".
func fill(rule *rules.ErrorRule, msg string, received []byte, up *Upstream, req *Request, max int) string {
	return rule.Fill(msg, func(name string) string {
		if name == rules.PlaceholderReceived {
			if received == nil {
				return "the value sent"
			}
			return string(received)
		}
		if d := otherWord(rule, up, req); d != "" {
			return string(appendEcho(nil, d, MaxUpstreamMessage))
		}
		if d := upstreamDetail(up, rule.Route(), req); d != "" {
			return string(appendEcho(nil, d, MaxUpstreamMessage))
		}
		return "no detail given"
	})
}

// retryAfter is the wait to advise, in whole seconds: the upstream's
// Retry-After (delay-seconds or an HTTP date), else the rule's default.
func retryAfter(h http.Header, fallback int, now time.Time) int {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return fallback
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return min(n, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d <= 0 {
			return 0
		}
		return min(int((d+time.Second-1)/time.Second), maxRetryAfter)
	}
	return fallback
}

// timeNow is the clock Retry-After dates are read against.
var timeNow = time.Now

// maxRetryAfter caps an advised wait at a day: an upstream's larger figure
// is more likely a mistake than advice.
const maxRetryAfter = 86400

// TooLarge describes a request body over the bound signpost reads to
// check a route's fields.
func TooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
		Message: "the request body is over " + rules.SizeText(limit) + ", the most signpost reads to check its fields; send a smaller body"}
}

// SlowBody describes a request body that did not arrive within wait,
// which signpost gives a body it reads before calling the upstream.
func SlowBody(wait time.Duration) *Error {
	return &Error{Status: http.StatusRequestTimeout, Code: CodeBodyTimeout, Retryable: true,
		Message: "the request body did not arrive within " + wait.String() + " of its headers; send the call again with its whole body right after the headers"}
}

// Overloaded describes signpost at its bound of concurrent requests.
func Overloaded(limit int) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeOverloaded, Retryable: true, RetryAfter: 1,
		Message: "signpost is serving its limit of " + strconv.Itoa(limit) + " requests at once; repeat the call in a second"}
}

// Failure describes signpost's own failure to get an answer from the
// upstream, such as a refused connection or a timeout.
func Failure(status int, code, message string, retryable bool) *Error {
	return &Error{Status: status, Code: code, Message: message, Retryable: retryable}
}

// Received renders a request value as it would be echoed, for callers that
// show it elsewhere (logs, tests).
func Received(v gjson.Result, max int) []byte { return appendValue(nil, v, max) }
