package rewrite

import (
	"net/http"
	"net/url"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Request is what a rewrite reads of the caller's request: the values its
// declared fields had, exactly as the proxy parsed them.
type Request struct {
	Vars   map[string]string // path variables of the matched route
	Query  url.Values
	Header http.Header
	// Body is the buffered request body, or nil when the route declares no
	// body fields or the body was over the buffering bound.
	Body []byte

	bodyChecked, bodyJSON bool
}

// Value returns field f's value in the request: the JSON value as sent for
// body fields, text for the others, and a zero Result when absent.
func (r *Request) Value(f *rules.Field) gjson.Result {
	switch f.In {
	case rules.InBody:
		if !r.bodyChecked {
			r.bodyJSON, r.bodyChecked = r.Body != nil && gjson.ValidBytes(r.Body), true
		}
		if r.bodyJSON {
			return gjson.GetBytes(r.Body, f.Key)
		}
	case rules.InQuery:
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
