package observe

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAdd feeds arbitrary paths, queries and bodies: Add must not panic,
// and the document must stay valid JSON with values within their caps.
func FuzzAdd(f *testing.F) {
	f.Add("/tickets/T-1", "a=1&b=%zz", `{"s":"x","n":1.5e3,"o":{"k":[1]}}`, `{"error":{"message":"m"}}`, 422)
	f.Add("//a/1//", ";x=1", `{"\u00e9\\.":"\ud800"}`, "<title>x</titl", 500)
	f.Add("", "", "", "", 200)
	f.Add("/t/12"+strings.Repeat("東", 30), "r=x"+strings.Repeat("é", 40), `{"s":"ab`+strings.Repeat("😀", 20)+`"}`, "", 400)
	f.Add("/t/1", "q=%C2", "", "", 400)
	f.Fuzz(func(t *testing.T, path, query, body, resp string, status int) {
		r := New(Options{Values: 2, Errors: 2})
		for range 2 {
			r.Add(&Exchange{Caller: 1, Method: "post", Path: path, RawQuery: query, Body: []byte(body), Status: status, Response: []byte(resp)})
			r.Add(&Exchange{Caller: 1, Method: "post", Path: path, RawQuery: query, Body: []byte(body), Status: 200})
		}
		// A value cut inside a character is invalid UTF-8, but so is one
		// read from invalid input, kept as it came: the check holds when
		// the path, the query (its parameters percent-decoded) and the
		// body are each valid. "\xa4" in the path and "\xc2" in the query
		// make no character together.
		valid := utf8.ValidString(path) && utf8.ValidString(body) && decodesValid(query)
		d := r.Document()
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
		for _, op := range d.Operations {
			for _, fl := range op.Fields {
				for _, v := range append(fl.Good, fl.Bad...) {
					if len(v.Value) > valueBytes || (valid && !utf8.ValidString(v.Value)) {
						t.Errorf("value %q: longer than %d bytes or cut inside a character", v.Value, valueBytes)
					}
				}
			}
			for _, e := range op.Errors {
				if len(e.Text) > textBytes {
					t.Errorf("error text %q longer than %d bytes", e.Text, textBytes)
				}
			}
		}
	})
}

// decodesValid reports whether every name and value of query decodes to
// valid UTF-8, as url.ParseQuery decodes them; one that does not decode at
// all is left out, as the record leaves it out.
func decodesValid(query string) bool {
	for kv := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		for _, s := range [...]string{k, v} {
			if d, err := url.QueryUnescape(s); err == nil && !utf8.ValidString(d) {
				return false
			}
		}
	}
	return true
}
