package rewrite

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Request is what a rewrite reads of the caller's request: the values its
// declared fields had, exactly as the proxy parsed them.
type Request struct {
	// Method is the request's method; empty when unknown, which is taken
	// as a method that is not idempotent.
	Method string
	// Path is the request's path, for the values of a request no route
	// declares.
	Path string
	Vars map[string]string // path variables of the matched route
	// Query holds the query parameters; when nil, RawQuery is parsed into
	// it on first use, so that requests no error concerns never parse it.
	Query    url.Values
	RawQuery string
	Header   http.Header
	// Body is the buffered request body, or nil when the route declares no
	// body fields or the body was over the buffering bound.
	Body []byte

	bodyChecked, bodyJSON bool
	// form is Body's members, for a form route, parsed on first use;
	// formProblem says why Body is not a form, once formChecked.
	form        url.Values
	formChecked bool
	formProblem string
	// xml is Body's elements, for an XML route, read on first use.
	xml xmlIndex
	// text is Body as a string, made once for every field read from it.
	text string
	// read keeps the body values found, for the fields a rewrite reads
	// more than once (matching, batching, learning).
	read  [2]bodyValue
	nRead int
}

// idempotent reports whether r may be sent again with the effect of
// sending it once (see Idempotent); a nil r may not.
func (r *Request) idempotent() bool { return r != nil && Idempotent(r.Method, r.Header) }

// safe reports whether r's method only reads: GET or HEAD.
func (r *Request) safe() bool {
	return r != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// Idempotent reports whether a request with this method and header may be
// sent twice with the effect of sending it once: its method is idempotent
// (RFC 9110, section 9.2.2), or it carries a key by which the upstream
// tells a repeated request from a new one.
func Idempotent(method string, h http.Header) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, key := h["Idempotency-Key"]
	_, xkey := h["X-Idempotency-Key"]
	return key || xkey
}

type bodyValue struct {
	f *rules.Field
	v gjson.Result
}

// Value returns field f's value in the request: the JSON value as sent for
// body fields, text for the others, and a zero Result when absent.
func (r *Request) Value(f *rules.Field) gjson.Result {
	switch f.In {
	case rules.InBody:
		if r.bodyObject(); !r.bodyJSON {
			break
		}
		for _, b := range r.read[:r.nRead] {
			if b.f == f {
				return b.v
			}
		}
		v := rules.Lookup(r.text, f.Key, true) // as the upstream most likely read it
		if r.nRead < len(r.read) {
			r.read[r.nRead] = bodyValue{f, v}
			r.nRead++
		}
		return v
	case rules.InForm:
		if vs, ok := r.formValues()[f.Key]; ok && len(vs) > 0 {
			return rules.Text(vs[0])
		}
	case rules.InXML:
		if r.xml == nil {
			r.xml = indexXML(r.Body)
		}
		if s, ok := r.xml.value(f.Key); ok {
			return rules.Text(s)
		}
	case rules.InQuery:
		if r.Query == nil {
			r.Query, _ = url.ParseQuery(r.RawQuery)
		}
		if vs, ok := r.Query[f.Key]; ok && len(vs) > 0 {
			return rules.Text(vs[0])
		}
	case rules.InPath:
		if v, ok := r.Vars[f.Key]; ok {
			return rules.Text(v)
		}
	case rules.InHeader:
		if vs := r.Header.Values(f.Key); len(vs) > 0 {
			return rules.Text(vs[0])
		}
	}
	return gjson.Result{}
}

// bodyObject reports whether the body is one JSON object, parsing it at
// most once for this and for Value.
func (r *Request) bodyObject() bool {
	if !r.bodyChecked {
		r.bodyJSON, r.bodyChecked = r.Body != nil && rules.IsJSON(r.Body), true
		if r.bodyJSON {
			r.text = string(r.Body)
		}
	}
	return r.bodyJSON && gjson.Parse(r.text).IsObject()
}

// IsBatch reports whether the request's body is a JSON array, a JSON-RPC
// batch of calls.
func IsBatch(r *Request) bool { return r.batch() }

// batch reports whether the body is a JSON array: a JSON-RPC batch.
func (r *Request) batch() bool {
	return r.Body != nil && rules.IsJSON(r.Body) && gjson.ParseBytes(r.Body).IsArray()
}

// flat returns the value of a body field with a nested key (event.when.date)
// that the request sent at the top level of its body instead, under the
// key's last part or the field's name, or a zero Result.
func (r *Request) flat(f *rules.Field) gjson.Result {
	if f.In != rules.InBody || !strings.Contains(f.Key, ".") || r.Value(f).Exists() || !r.bodyJSON {
		return gjson.Result{}
	}
	for _, name := range []string{f.Key[strings.LastIndexByte(f.Key, '.')+1:], f.Name} {
		if v := rules.Lookup(r.text, name, true); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// inBody returns the value of a header, query or path field f that the
// request sent in its JSON body instead, at the top level under the
// field's key or name, in any case: Authorization sent as a body member.
func (r *Request) inBody(f *rules.Field) gjson.Result {
	if f.In == rules.InBody || r.Value(f).Exists() || !r.bodyObject() {
		return gjson.Result{}
	}
	var found gjson.Result
	gjson.Parse(r.text).ForEach(func(k, v gjson.Result) bool {
		if strings.EqualFold(k.Str, f.Key) || strings.EqualFold(k.Str, f.Name) {
			found = v
			return false
		}
		return true
	})
	return found
}

// maxFormParts bounds the members a form body is read for.
const maxFormParts = 10000

// formValues returns the members of a form body, urlencoded or multipart
// as its Content-Type says, parsed once; nil when the body is not a form,
// formProblem then saying why, in signpost's words. A file's member holds
// its file name: the value is there, and its content is not text to check.
func (r *Request) formValues() url.Values {
	if r.formChecked {
		return r.form
	}
	r.formChecked = true
	if r.Body == nil {
		return nil
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded":
		if n := bytes.Count(r.Body, []byte("&")) + 1; n > maxFormParts {
			r.formProblem = "holds " + strconv.Itoa(n) + " members, more than the " + strconv.Itoa(maxFormParts) + " signpost reads"
			return nil
		}
		vs, err := url.ParseQuery(string(r.Body))
		if err != nil {
			r.formProblem = "is not form-encoded: it holds a malformed percent-encoding"
			return nil
		}
		r.form = vs
	case "multipart/form-data":
		if params["boundary"] == "" {
			r.formProblem = "is multipart/form-data with no boundary parameter in its Content-Type"
			return nil
		}
		vs, err := multipartValues(r.Body, params["boundary"])
		switch {
		case errors.Is(err, errTooManyParts):
			r.formProblem = "holds more than the " + strconv.Itoa(maxFormParts) + " parts signpost reads"
			return nil
		case err != nil:
			r.formProblem = "is not well-formed multipart/form-data under the boundary its Content-Type names"
			return nil
		}
		r.form = vs
	default:
		r.formProblem = notAForm(mt, r.Body)
	}
	return r.form
}

// errTooManyParts is a multipart body of more parts than are read.
var errTooManyParts = errors.New("more parts than are read")

// multipartValues reads the members of a multipart/form-data body, at
// most maxFormParts.
func multipartValues(body []byte, boundary string) (url.Values, error) {
	vs := url.Values{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for range maxFormParts {
		p, err := mr.NextPart()
		if err == io.EOF {
			return vs, nil
		}
		if err != nil {
			return nil, err
		}
		name := p.FormName()
		if name == "" {
			continue
		}
		if file := p.FileName(); file != "" {
			vs.Add(name, file)
			continue
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		vs.Add(name, string(b))
	}
	switch _, err := mr.NextPart(); {
	case err == nil:
		return nil, errTooManyParts
	case err != io.EOF:
		return nil, err
	}
	return vs, nil
}

// notAForm says what a body sent as mt is, when a form was due.
func notAForm(mt string, body []byte) string {
	switch {
	case rules.IsJSON(body):
		return "is JSON, not a form"
	case mt == "" && formEncoded(body):
		return "is form-encoded but has no Content-Type saying so"
	case mt == "":
		return "has no Content-Type and is not a form"
	}
	return "is " + mt + ", not a form"
}
