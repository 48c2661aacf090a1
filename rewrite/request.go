package rewrite

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Request is what a rewrite reads of the caller's request: the values its
// declared fields had, exactly as the proxy parsed them.
type Request struct {
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
	// text is Body as a string, made once for every field read from it.
	text string
	// read keeps the body values found, for the fields a rewrite reads
	// more than once (matching, batching, learning).
	read  [2]bodyValue
	nRead int
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
		if !r.bodyChecked {
			r.bodyJSON, r.bodyChecked = r.Body != nil && rules.IsJSON(r.Body), true
			if r.bodyJSON {
				r.text = string(r.Body)
			}
		}
		if !r.bodyJSON {
			break
		}
		for _, b := range r.read[:r.nRead] {
			if b.f == f {
				return b.v
			}
		}
		v := lastValue(r.text, f.Key)
		if r.nRead < len(r.read) {
			r.read[r.nRead] = bodyValue{f, v}
			r.nRead++
		}
		return v
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

// lastValue returns the value at a gjson path as the upstream most likely
// read it: where an object repeats a key, parsers keep the last one, while
// gjson finds the first. Plain dotted paths are walked member by member;
// paths with gjson's query syntax fall back to gjson's own lookup.
func lastValue(body string, path string) gjson.Result {
	if strings.ContainsAny(path, `*?#|@!\`+"`") {
		return gjson.Get(body, path)
	}
	cur := gjson.Parse(body)
	for key := range strings.SplitSeq(path, ".") {
		var found gjson.Result
		switch {
		case cur.IsObject():
			cur.ForEach(func(k, v gjson.Result) bool {
				if k.Str == key {
					found = v
				}
				return true
			})
		case cur.IsArray():
			found = cur.Get(key)
		}
		if !found.Exists() {
			return gjson.Result{}
		}
		cur = found
	}
	return cur
}
