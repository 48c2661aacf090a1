package observe

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAdd feeds arbitrary paths, queries and bodies: Add must not panic,
// and the document must stay valid JSON with values within their caps.
func FuzzAdd(f *testing.F) {
	f.Add("/tickets/T-1", "a=1&b=%zz", `{"s":"x","n":1.5e3,"o":{"k":[1]}}`, `{"error":{"message":"m"}}`, 422)
	f.Add("//a/1//", ";x=1", `{"\u00e9\\.":"\ud800"}`, "<title>x</titl", 500)
	f.Add("", "", "", "", 200)
	f.Fuzz(func(t *testing.T, path, query, body, resp string, status int) {
		r := New(Options{Values: 2, Errors: 2})
		for range 2 {
			r.Add(&Exchange{Caller: 1, Method: "post", Path: path, RawQuery: query, Body: []byte(body), Status: status, Response: []byte(resp)})
			r.Add(&Exchange{Caller: 1, Method: "post", Path: path, RawQuery: query, Body: []byte(body), Status: 200})
		}
		d := r.Document()
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
		for _, op := range d.Operations {
			for _, fl := range op.Fields {
				for _, v := range append(fl.Good, fl.Bad...) {
					if len(v.Value) > valueBytes || (utf8.ValidString(body+query+path) && !utf8.ValidString(v.Value)) {
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
