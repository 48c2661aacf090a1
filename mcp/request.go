package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// newRequest turns a tool call's arguments into the HTTP request its route
// describes: path variables fill the template, and each other argument
// goes where its field lives (query, header, or a member of the JSON
// body). An argument no field declares goes in the body for POST, PUT and
// PATCH, else in the query. The URL is relative to the pipeline: its host
// is set when the request is sent.
//
// A call whose arguments cannot make the request (a path variable missing
// or not matching the template, an object where text must go) gets
// instead the body signpost answers with: those faults, and every other
// declared field at fault, batched.
func newRequest(ctx context.Context, route *rules.Route, raw json.RawMessage, lim rules.Limits) (*http.Request, *rewrite.Error) {
	args := gjson.ParseBytes(raw)
	if len(bytes.TrimSpace(raw)) == 0 {
		args = gjson.Parse("{}") // no arguments at all
	}
	if !args.IsObject() {
		return nil, notAnObject(route, args, lim)
	}
	b := &builder{route: route, lim: lim, vars: map[string]string{}, query: url.Values{}, header: http.Header{},
		form: url.Values{}, faults: map[string]rewrite.Entry{}, shape: map[string]rewrite.Entry{}}
	switch route.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		b.takesBody = true
		if route.Body == rules.EncodingJSON {
			b.body = []byte("{}")
		}
	}
	vars := route.PathVariables()
	for _, f := range route.Fields {
		// A fixed argument (an RPC method's name) need not be given; it
		// comes first, where a document names its method.
		if f.Const != "" {
			b.place(f.Name, rules.Text(f.Const), vars)
		}
	}
	args.ForEach(func(k, v gjson.Result) bool {
		b.place(k.Str, v, vars)
		return true
	})
	b.checkPath(vars)
	if len(b.faults) > 0 || len(b.shape) > 0 {
		return nil, b.rejection()
	}
	escaped := make(map[string]string, len(b.vars))
	for k, v := range b.vars {
		escaped[k] = url.PathEscape(v)
	}
	target := "http://signpost" + route.ExpandPath(escaped)
	if len(b.query) > 0 {
		target += "?" + b.query.Encode()
	}
	if route.Format == rules.FormatJSONRPC && b.body != nil {
		b.body = rpcCall(b.body)
	}
	if route.Body == rules.EncodingXML {
		if doc := buildXML(b.xmlPaths, b.xmlTexts); doc != nil {
			b.body, b.header["Content-Type"] = doc, []string{rules.EncodingXML.ContentType()}
		}
	} else if route.Body != rules.EncodingJSON && (b.takesBody || len(b.form) > 0) {
		b.body, b.header["Content-Type"] = encodeForm(route.Body, b.form)
	}
	var body io.Reader
	if b.body != nil {
		body = bytes.NewReader(b.body)
		if b.header.Get("Content-Type") == "" {
			b.header.Set("Content-Type", "application/json")
		}
	}
	req, err := http.NewRequestWithContext(ctx, route.Method, target, body)
	if err != nil {
		return nil, rewrite.Failure(http.StatusInternalServerError, "invalid_route",
			"signpost cannot make a request URL from the path template of "+route.Name+"; the call did not take effect", false)
	}
	maps.Copy(req.Header, b.header)
	return req, nil
}

// builder collects the parts of a request from the arguments, one at a
// time, and the faults that stop it being made.
type builder struct {
	route  *rules.Route
	lim    rules.Limits
	vars   map[string]string // path variables, unescaped
	query  url.Values
	header http.Header
	form   url.Values // the members of a form body
	// xmlPaths and xmlTexts are the elements of an XML body, in order.
	xmlPaths, xmlTexts []string
	body               []byte // nil for a method without a body, unless a body field is given
	// takesBody says the method carries a body: POST, PUT or PATCH.
	takesBody bool
	// faults are arguments that cannot be put where they belong; shape
	// are path variables the router would not match.
	faults, shape map[string]rewrite.Entry
}

// place puts one argument where its field lives. A null goes in a JSON
// body as a null, as an HTTP caller would send it; a path, query or header
// cannot carry one, and leaves it out.
func (b *builder) place(name string, v gjson.Result, vars []rules.PathVariable) {
	in, key := rules.InQuery, name
	if f := b.route.Field(name); f != nil && f.Const != "" && (v.Type != gjson.String || v.Str != f.Const) {
		// The tool is the route its fixed argument chooses: another value
		// would be another route's call.
		b.fault(name, v, f.Rule)
		return
	}
	switch f := b.route.Field(name); {
	case f != nil:
		in, key = f.In, f.Key
	case isVariable(vars, name):
		in = rules.InPath
	case b.takesBody && b.route.Body == rules.EncodingXML:
		b.fault(name, v, "is not an argument of this tool: its XML body holds only the declared ones")
		return
	case b.takesBody && b.route.Body != rules.EncodingJSON:
		in = rules.InForm
	case b.takesBody:
		in, key = rules.InBody, escapeMember(name)
	}
	if v.Type == gjson.Null && in != rules.InBody {
		return
	}
	if in == rules.InBody {
		if b.body == nil {
			b.body = []byte("{}")
		}
		out, err := sjson.SetRawBytes(b.body, key, []byte(v.Raw))
		if err != nil {
			b.fault(name, v, "cannot be placed in the JSON body at "+key)
			return
		}
		b.body = out
		return
	}
	s, ok := text(v)
	if !ok {
		b.fault(name, v, "must be one value (a string, number or boolean), not "+kind(v)+", since it is sent "+where(in, key))
		return
	}
	switch in {
	case rules.InPath:
		b.vars[key] = s
	case rules.InHeader:
		if !oneLine(s) {
			b.fault(name, v, "must be one line of text, since it is sent "+where(in, key))
			return
		}
		b.header.Set(key, s)
	case rules.InForm:
		b.form.Set(key, s)
	case rules.InXML:
		b.xmlPaths, b.xmlTexts = append(b.xmlPaths, key), append(b.xmlTexts, s)
	default:
		b.query.Set(key, s)
	}
}

// checkPath finds the path variables the call cannot be routed without:
// missing, or not matching the template, which the router would not
// match.
func (b *builder) checkPath(vars []rules.PathVariable) {
	for _, v := range vars {
		if _, done := b.faults[v.Name]; done {
			continue
		}
		value, given := b.vars[v.Name]
		pattern, rule := segment, "must be one path segment: text without a slash"
		if v.Pattern != "" {
			pattern, rule = compiled(v.Pattern), "must match the pattern "+v.Pattern
		}
		switch {
		case !given:
			b.shape[v.Name] = rewrite.Entry{Field: v.Name, Code: rewrite.InvalidCode(v.Name), Message: "is required; " + rule}
		case !pattern.MatchString(value):
			// A declared field's own rule, when it breaks that too, says more.
			b.shape[v.Name] = b.entry(v.Name, rules.Text(value), rule)
		}
	}
}

// segment is what a path variable without a regex matches.
var segment = regexp.MustCompile(`^[^/]+$`)

// patterns holds the compiled regexes of path variables, by source.
var patterns sync.Map

// compiled returns a path variable's regex, compiled once. The router
// compiled the same source when the rules were loaded; one that does not
// compile here matches nothing.
func compiled(source string) *regexp.Regexp {
	if re, ok := patterns.Load(source); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(source)
	if err != nil {
		re = regexp.MustCompile(`[^\x00-\x{10FFFF}]`)
	}
	patterns.Store(source, re)
	return re
}

// fault records an argument that cannot be put where it belongs.
func (b *builder) fault(name string, v gjson.Result, message string) {
	b.faults[name] = b.entry(name, v, message)
}

func (b *builder) entry(name string, v gjson.Result, message string) rewrite.Entry {
	code := rewrite.InvalidCode(name)
	if f := b.route.Field(name); f != nil {
		code = rewrite.FieldCode(b.route, f)
	}
	return rewrite.Entry{Field: name, Code: code, Message: message, Received: rewrite.Received(v, b.lim.Received)}
}

// rejection batches the faults found in building with those the declared
// fields' own checks find in what could be built, one per argument, in
// the order the tool's input schema lists them. For an argument at fault
// both ways, a value that could not be placed is the fault to report; a
// path variable's shape yields to the field's own rule.
func (b *builder) rejection() *rewrite.Error {
	req := &rewrite.Request{Vars: b.vars, Query: b.query, Header: b.header, Body: b.body}
	checked := map[string]rewrite.Entry{}
	for _, e := range rewrite.Validate(b.route, req, b.lim.Received) {
		checked[e.Field] = e
	}
	var entries []rewrite.Entry
	declared := map[string]bool{}
	for _, p := range b.route.InputSchema().Properties {
		declared[p.Name] = true
		for _, m := range []map[string]rewrite.Entry{b.faults, checked, b.shape} {
			if e, ok := m[p.Name]; ok {
				entries = append(entries, e)
				break
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.faults)) {
		if !declared[name] {
			entries = append(entries, b.faults[name])
		}
	}
	return rewrite.Batch(http.StatusBadRequest, entries, b.lim.Errors)
}

// notAnObject answers arguments that are not one JSON object.
func notAnObject(route *rules.Route, args gjson.Result, lim rules.Limits) *rewrite.Error {
	var names []string
	for _, p := range route.InputSchema().Properties {
		names = append(names, p.Name)
	}
	msg := "the arguments must be one JSON object"
	if len(names) > 0 {
		msg += " of named arguments: " + strings.Join(names, ", ")
	}
	e := rewrite.Failure(http.StatusBadRequest, rewrite.CodeInvalidArguments, msg, false)
	if args.Exists() {
		e.Received = rewrite.Received(args, lim.Received)
	}
	return e
}

// text is an argument as a path, query or header carries it: a string as
// it is, a number or boolean as written; ok is false for an object or an
// array.
func text(v gjson.Result) (s string, ok bool) {
	switch v.Type {
	case gjson.String:
		return v.Str, true
	case gjson.Number, gjson.True, gjson.False:
		return v.Raw, true
	}
	return "", false
}

// kind names the JSON type of an object or array for a message.
func kind(v gjson.Result) string {
	if v.IsArray() {
		return "an array"
	}
	return "an object"
}

// where says where in the request a value is sent.
func where(in rules.Location, key string) string {
	switch in {
	case rules.InPath:
		return "in the path"
	case rules.InHeader:
		return "as the header " + key
	case rules.InForm:
		return "as the form member " + key
	case rules.InXML:
		return "as the XML element " + key
	}
	return "as the query parameter " + key
}

// oneLine reports whether s can be a header value: no control characters
// but tab.
func oneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func isVariable(vars []rules.PathVariable, name string) bool {
	for _, v := range vars {
		if v.Name == name {
			return true
		}
	}
	return false
}

// escapeMember makes an argument's name a sjson path to one top-level
// member, whatever characters it holds.
func escapeMember(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`.*?|#@!:\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// encodeForm writes a form body in the route's encoding, with its
// Content-Type: urlencoded, or multipart/form-data with a boundary of its
// own, members in key order either way.
func encodeForm(enc rules.Encoding, form url.Values) ([]byte, []string) {
	if enc != rules.EncodingMultipart {
		return []byte(form.Encode()), []string{enc.ContentType()}
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, k := range slices.Sorted(maps.Keys(form)) {
		for _, v := range form[k] {
			_ = w.WriteField(k, v) // into memory: cannot fail
		}
	}
	_ = w.Close()
	return b.Bytes(), []string{w.FormDataContentType()}
}

// rpcIDs numbers the JSON-RPC calls MCP makes, for their ids.
var rpcIDs atomic.Int64

// rpcCall makes a JSON body a JSON-RPC 2.0 call: jsonrpc "2.0" and an id
// of its own, unless the arguments gave them. A call without an id is a
// notification, which a server does not answer.
func rpcCall(body []byte) []byte {
	doc := gjson.ParseBytes(body)
	if !doc.Get("jsonrpc").Exists() {
		body, _ = sjson.SetBytes(body, "jsonrpc", "2.0")
	}
	if !doc.Get("id").Exists() {
		body, _ = sjson.SetBytes(body, "id", rpcIDs.Add(1))
	}
	return body
}
