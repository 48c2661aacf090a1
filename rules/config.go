// Package rules is signpost's rule-file format: the YAML model, its loading
// with positioned problems, and the compiled form the proxy serves from.
//
// A rule file declares, per route, the fields a caller sends and what each
// may hold, and which bare upstream errors mean what. Load reports every
// mistake in one pass; a Config it returns is compiled and ready to use.
package rules

import (
	"cmp"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/suggest"
)

// Defaults for the limits a rule file may leave out.
const (
	DefaultListen      = "127.0.0.1:8080"
	DefaultAdmin       = "127.0.0.1:9090"
	DefaultErrorBody   = 64 << 10
	DefaultRequestBody = 1 << 20
	DefaultReceived    = 64
	DefaultErrors      = 10
)

// BodyFormat is how signpost renders the bodies it writes.
type BodyFormat string

// The body formats.
const (
	FormatJSON    BodyFormat = "json"         // signpost's own members: error, field, message, ...
	FormatProblem BodyFormat = "problem+json" // RFC 9457 Problem Details
	// FormatJSONRPC answers in JSON-RPC 2.0's envelope: jsonrpc, the
	// request's id, and an error object with signpost's members in data.
	FormatJSONRPC BodyFormat = "jsonrpc"
	// FormatXMLRPC answers as an XML-RPC fault, always with status 200.
	FormatXMLRPC BodyFormat = "xmlrpc"
)

// Envelope reports whether the format is a protocol's own, whose errors
// travel in a success: an RPC client reads an error from a 200.
func (f BodyFormat) Envelope() bool { return f == FormatJSONRPC || f == FormatXMLRPC }

// Policy says what becomes of an upstream error no rule matches, or one too
// large to read.
type Policy string

// The policies for unmatched errors.
const (
	Wrap        Policy = "wrap"        // a generic actionable body; upstream internals never pass
	Passthrough Policy = "passthrough" // the upstream's response, untouched
)

// Enforcement says whether signpost answers for a route or only watches it.
type Enforcement string

// The enforcement modes.
const (
	// Enforce rewrites the upstream's errors and validates as the rules say.
	Enforce Enforcement = "enforce"
	// Observe passes every response through byte for byte and records what
	// enforce would have answered, and the errors no rule explains, for
	// signpost draft.
	Observe Enforcement = "observe"
)

// Mode says when a route's declared fields are validated.
type Mode string

// The validation modes.
const (
	// ValidateAfter lets the upstream judge first; when it rejects a field
	// whose value breaks its declared constraint, the answer lists every
	// other declared field at fault too.
	ValidateAfter Mode = "after"
	// ValidateBefore rejects a request with any declared field at fault
	// without calling the upstream.
	ValidateBefore Mode = "before"
)

// Config is one loaded, validated and compiled rule file.
type Config struct {
	// File is the name the rule file was loaded under, for messages.
	File string
	// Upstream is the base URL requests are forwarded to. Nil when the file
	// leaves it to the command line.
	Upstream *url.URL
	// Listen is the agent-facing address; Admin serves metrics, never agents.
	Listen, Admin string
	Limits        Limits
	// Format and Unmatched are the file's defaults; each route has the
	// value in force for it.
	Format    BodyFormat
	Unmatched Policy
	// UnmatchedPos is where the file sets unmatched:, zero when it does not.
	UnmatchedPos Pos
	// Mode is the file's enforcement, each route's default: Enforce unless
	// the file sets mode: observe.
	Mode  Enforcement
	Learn Learn
	// Routes are in file order.
	Routes []*Route
}

// ObserveAll puts the file and every route in observe mode, whatever they
// say: serve --observe.
func (c *Config) ObserveAll() {
	c.Mode = Observe
	for _, r := range c.Routes {
		r.Mode = Observe
	}
}

// Defaults for learning aliases from traffic.
const (
	DefaultCallerHeader = "X-Session-Id"
	DefaultCallers      = 10000
	DefaultMinCount     = 3
	// DefaultRecoveryWindow is how long after a rejection a success still
	// counts as a recovery.
	DefaultRecoveryWindow = 10 * time.Minute
)

// Learn configures how signpost learns aliases from traffic: a value a
// caller sent and had rejected, followed by a success on the same route
// with another value for the field, is one observation of an alias.
type Learn struct {
	// CallerHeader names the request header that identifies a caller,
	// e.g. an agent's session. Without it, the client address does.
	CallerHeader string
	// Callers bounds how many callers are remembered (least recently seen
	// are forgotten first); zero turns learning off.
	Callers int
	// MinCount is how often a pair must be seen before it is proposed.
	MinCount int
	// RecoveryWindow is how long after a rejection a success on the same
	// route still counts as the caller's recovery. Zero means 10 minutes.
	RecoveryWindow time.Duration
}

// Limits bound what signpost buffers and echoes.
type Limits struct {
	// ErrorBody caps how much of an upstream error body is buffered for
	// matching. Zero means 64 KiB; a larger body passes through unchanged.
	ErrorBody int64
	// RequestBody caps how much of a request body is buffered on routes that
	// declare body fields. Zero means 1 MiB; a larger body is forwarded
	// unread and its fields are not echoed.
	RequestBody int64
	// Received caps, in characters, a string echoed back as "received".
	// Zero means 64.
	Received int
	// Errors caps the entries of a batched body that state a rule; the
	// faults past them are named in "unlisted". Zero means 10.
	Errors int
	// ListTokens is the default budget, in tokens, for listing a field's
	// permitted values in a message. Zero means 60.
	ListTokens int
	// Repeats is when a caller repeating a failing call is told to stop.
	Repeats Repeats
}

// Repeats says after how many identical failures in a row, of one caller
// on one route within the recovery window, the answer tells the caller to
// stop repeating the call.
type Repeats struct {
	// Failures is the count for a failure nothing says is passing. Zero
	// means 2.
	Failures int
	// Transient is the count for a failure declared passing: a 429, a 503
	// with Retry-After, a rule's retryable: true. Zero means 3.
	Transient int
	// Off turns the stop off for every route.
	Off bool
}

// Default counts of Repeats.
const (
	DefaultRepeatFailures  = 2
	DefaultRepeatTransient = 3
)

// Of returns the count in force for a failure, transient or not.
func (r Repeats) Of(transient bool) int {
	if transient {
		return cmp.Or(r.Transient, DefaultRepeatTransient)
	}
	return cmp.Or(r.Failures, DefaultRepeatFailures)
}

// Route is one upstream operation, named as the agent's tool is named.
type Route struct {
	Name   string
	Method string // upper case, e.g. PATCH
	// RawPath is the route's gorilla/mux path template as the file writes
	// it, percent-encodings and all: what a request line carries once the
	// variables are filled, e.g. /label/foo%20bar/{id}.
	RawPath string
	// Path is RawPath with the percent-encodings outside its variables
	// decoded, as a request's URL.Path is: the template requests are
	// matched against, e.g. /label/foo bar/{id}.
	Path string
	// Description says what the operation does, for the tool's
	// description; empty when the file gives none.
	Description string
	// Fields are in declared order.
	Fields []*Field
	// Errors are tried in file order; the first that matches wins.
	Errors []*ErrorRule
	// Validate is when declared fields are checked; Format how bodies are
	// rendered; Unmatched what becomes of errors no rule matches.
	Validate  Mode
	Format    BodyFormat
	Unmatched Policy
	// UnmatchedPos is where the route sets unmatched:, zero when it
	// inherits the file's.
	UnmatchedPos Pos
	// RepeatsOff is set by repeats: off: a caller repeating a failing call
	// on the route is never told to stop.
	RepeatsOff bool
	// Mode is the route's enforcement: its own mode:, else the file's.
	Mode Enforcement
	// Body is how the route's request body is written: its own body:,
	// else form when a field is in: form, else JSON.
	Body Encoding
	// Handshake, when set, is how the upstream hands out a token it wants
	// on every call; signpost fetches and keeps it.
	Handshake *Handshake
	// When, when set, is the request member by which the route takes its
	// requests from the other routes of its method and path (one RPC
	// endpoint, many methods).
	When *When
	// Group is every route of the route's method and path, when there are
	// several: those with When in file order, then the one without, which
	// takes the rest. Nil for a route alone on its method and path.
	Group []*Route
	// whenGiven says the file wrote a when:, even one with problems.
	whenGiven bool
	Pos       Pos

	concerns statusSet // every status some error rule could match
}

// written is the route's template as the file writes it: RawPath, or Path
// for a route built without one.
func (r *Route) written() string {
	if r.RawPath != "" {
		return r.RawPath
	}
	return r.Path
}

// Pos is a position in a rule file.
type Pos struct{ Line, Column int }

// Route returns the route called name, or nil: what a tool call, an
// explain or a learned alias names a route by.
func (c *Config) Route(name string) *Route {
	for _, r := range c.Routes {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Field returns the declared field called name, or nil.
func (r *Route) Field(name string) *Field {
	for _, f := range r.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// HasBodyFields reports whether any declared field lives in the request
// body, JSON or form, which is when the proxy must buffer it.
func (r *Route) HasBodyFields() bool {
	for _, f := range r.Fields {
		if f.In == InBody || f.In == InForm || f.In == InXML {
			return true
		}
	}
	return false
}

// ReadsBody reports whether the proxy reads the route's request body before
// forwarding it: for its body fields, for the id a JSON-RPC answer must
// name, to send it again after a handshake, or to tell which route of its
// method and path the request is for.
func (r *Route) ReadsBody() bool {
	return r.HasBodyFields() || r.Format == FormatJSONRPC || r.Handshake != nil || len(r.Group) > 1
}

// When says which requests of its method and path a route takes: those
// whose member Key, in the JSON body, the form or the query, holds Equals.
type When struct {
	In     Location // InBody (json:), InForm (form:), InXML (xml:) or InQuery (query:)
	Key    string
	Equals string

	field Field // the member, as a field, for reading a request's value
}

// NewWhen returns the condition that the member key, in place in, holds
// equals.
func NewWhen(in Location, key, equals string) *When {
	return &When{In: in, Key: key, Equals: equals, field: Field{Name: key, In: in, Key: key}}
}

// Field is the member When reads, as a field of its place and key.
func (w *When) Field() *Field { return &w.field }

// String writes w as the file does, {json: method, equals: torrent-get};
// "" for nil.
func (w *When) String() string {
	if w == nil {
		return ""
	}
	place := "json"
	switch w.In {
	case InForm:
		place = "form"
	case InXML:
		place = "xml"
	case InQuery:
		place = "query"
	}
	return "{" + place + ": " + w.Key + ", equals: " + w.Equals + "}"
}

// Handshake is an upstream's way of handing out a token (a session id, a
// CSRF token) it wants on every call: an answer of Status carrying the
// token in the response header Header, which the call is to be sent again
// with. Transmission's 409 with X-Transmission-Session-Id is one.
type Handshake struct {
	Status int
	Header string // canonical
	// Call, when set, is the call that hands the token out, made before
	// the first call that needs it and again after a refusal of Status;
	// Token is the gjson path of the token in its JSON answer, or "" for
	// its answer's header Header.
	Call  *HandshakeCall
	Token string
}

// HandshakeCall is the upstream call a handshake fetches its token with:
// a CSRF token's or crumb's issuer.
type HandshakeCall struct {
	Method, Path string
}

// Concerns reports whether some error rule of the route could match an
// upstream response with this status, which is when its body must be read.
func (r *Route) Concerns(status int) bool { return r.concerns.has(status) }

// Location says where in a request a field's value lives.
type Location string

// The places a field can live.
const (
	InBody   Location = "body"   // a gjson path into a JSON request body
	InQuery  Location = "query"  // a query parameter
	InPath   Location = "path"   // a variable of the route's path template
	InHeader Location = "header" // a request header
	// InForm is a member of a form body, application/x-www-form-urlencoded
	// or multipart/form-data, named by its key as written (items[0][price]).
	InForm Location = "form"
	// InXML is an element of an XML body, named by its path of local
	// names from the root, each with an optional 1-based index:
	// methodCall/params/param[2]/value. Its value is its text.
	InXML Location = "xml"
)

// Encoding is how a route's request body is written.
type Encoding string

// The request body encodings.
const (
	EncodingJSON      Encoding = "json"      // one JSON object
	EncodingForm      Encoding = "form"      // application/x-www-form-urlencoded
	EncodingMultipart Encoding = "multipart" // multipart/form-data
	EncodingXML       Encoding = "xml"       // an XML document
)

// ContentType is the media type of a body in the encoding.
func (e Encoding) ContentType() string {
	switch e {
	case EncodingForm:
		return "application/x-www-form-urlencoded"
	case EncodingMultipart:
		return "multipart/form-data"
	case EncodingXML:
		return "text/xml"
	}
	return "application/json"
}

// Field is a value the caller sends, and what it may hold.
type Field struct {
	Name string
	In   Location
	// Key names the value where it lives: a gjson path for body fields,
	// otherwise the parameter, variable or header name. Defaults to Name.
	Key      string
	Required bool
	// Description says what the argument means, for the tool's input
	// schema; empty when the file gives none. Error messages never use it.
	Description string

	Enum []string // permitted values to list and suggest, in declared order
	// Const is the one value of an argument that is fixed for the route
	// (an RPC method's name), which MCP and next_call fill; Enum holds it.
	Const     string
	Hidden    []string          // permitted values never listed or suggested
	Aliases   map[string]string // other names callers send -> permitted value
	Catalog   *Catalog          // where Enum, Hidden and Aliases came from, or nil
	Format    *Format           // a named format, or nil
	Pattern   *regexp.Regexp    // an RE2 pattern, or nil
	simple    *simplePattern    // Pattern, when a single pass can match it
	Example   string            // one value that satisfies the constraint
	Min, Max  *float64          // bounds for integer and number formats
	MaxLength int               // in characters; zero means no bound
	MinLength int               // in characters; zero means none
	// ListCost is what listing Enum in a message costs, in o200k_base
	// tokens; Listed says whether that fits the field's budget. When it
	// does not, messages state the rule and did_you_mean does the rest.
	ListCost   int
	ListBudget int
	Listed     bool
	// inGiven says the file wrote the field's in:, rather than leaving it
	// to the route's method and body.
	inGiven bool
	// Suggest proposes permitted values for a rejected one; nil for fields
	// without an enum.
	Suggest *suggest.Set
	// Lookup is the call that finds valid values for an open value space,
	// such as customer ids: its one argument takes the value sent.
	Lookup *Call

	// Rule states the constraint as the caller reads it, e.g.
	// "allowed values: open, pending, closed", and names Lookup if set.
	Rule string
	// RuleText is the author's wording of the constraint, for an enum too
	// costly to list.
	RuleText      string
	members       map[string]bool   // Enum and Hidden, for large sets
	aliasesFolded map[string]string // Aliases keyed by lower case
	Pos           Pos
}

// ErrorRule says what one bare upstream error means.
type ErrorRule struct {
	Match Match
	// Code is the stable snake_case code the caller and the logs see.
	Code string
	// Field names the declared field at fault, or is empty.
	Field *Field
	// Message is the body's message: the rule's own, else the field's
	// rule, followed by the next call or the futility the rule declares.
	// A {received} in it stands for the received value, and an {upstream}
	// for the upstream's own short message, JSON-quoted; its literal
	// braces, written {{ and }} in the file, are single here.
	Message string
	// StatesRule is set when the rule has no message of its own, so that
	// its message is the field's rule: the rule is about the field's
	// constraint, not about existence or business.
	StatesRule bool
	// Status is the status the caller gets, when the rule sets one: zero
	// keeps the upstream's, or answers 400 to an error carried in a 2xx.
	Status int
	// Retryable overrides the default derived from the upstream status.
	Retryable *bool
	// NextCall is the call to make before this one can succeed.
	NextCall *Call
	// Futile says what to do instead when repeating the call cannot
	// succeed; a futile rule is never retryable.
	Futile string
	// RetryAfter is the wait, in seconds, advised when the upstream sends
	// no Retry-After header; zero advises none.
	RetryAfter int
	Pos        Pos
	// Index is the rule's place in its route, from zero.
	Index int

	route *Route
	holes []hole // the placeholders of Message, in order
}

// Route returns the route the rule belongs to.
func (e *ErrorRule) Route() *Route { return e.route }

// AnswerStatus is the status the caller gets when the rule matches an
// upstream response of status upstream: the rule's, else the upstream's
// error, else, for an error carried in a success, 400, or the success
// itself where the route answers in a protocol's envelope.
func (e *ErrorRule) AnswerStatus(upstream int) int {
	switch {
	case e.Status != 0:
		return e.Status
	case upstream < 400 && e.route != nil && e.route.Format.Envelope():
		return upstream
	case upstream < 400:
		return http.StatusBadRequest
	}
	return upstream
}

// HasPlaceholders reports whether the rule's message quotes the failed
// call: {received} or {upstream}.
func (e *ErrorRule) HasPlaceholders() bool { return len(e.holes) > 0 }

// Fill returns msg, the rule's message as a body states it (perhaps after
// a prefix of the body's own), with each placeholder replaced by value's
// text for its name, in one pass: a value's own braces are never read as
// placeholders. The message's literal braces are already single.
func (e *ErrorRule) Fill(msg string, value func(name string) string) string {
	if len(e.holes) == 0 || !strings.HasSuffix(msg, e.Message) {
		return msg
	}
	off := len(msg) - len(e.Message)
	var b strings.Builder
	last := 0
	for _, h := range e.holes {
		b.WriteString(msg[last : off+h.at])
		b.WriteString(value(h.name))
		last = off + h.at + len(h.name) + 2
	}
	b.WriteString(msg[last:])
	return b.String()
}

// Call is a route to call, with arguments filled from the failed request.
type Call struct {
	Route *Route
	Args  []Arg
}

// Arg is one argument of a Call: the called route's field Name, filled
// with the value of field From of the failed request.
type Arg struct {
	Name string
	From *Field
}

// Signature renders the call as the agent's tool is called:
// "search_customers(query)".
func (c *Call) Signature() string {
	names := make([]string, len(c.Args))
	for i, a := range c.Args {
		names[i] = a.Name
	}
	return c.Route.Name + "(" + strings.Join(names, ", ") + ")"
}

// Match selects upstream error responses. Every condition set must hold.
type Match struct {
	Status statusSet
	// JSON is a gjson path into the upstream body. With no comparison it
	// requires the path to exist.
	JSON      string
	Equals    *string
	NotEquals *string // the value exists and is not this: a success word
	Contains  *string
	Regex     *regexp.Regexp // on the value at JSON
	Body      *regexp.Regexp // on the raw body, for text, HTML or XML
}
