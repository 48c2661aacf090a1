package rules_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestFormBodies: a route's body is a form when body: says so, or when a
// field is in: form, whose body fields then all live in the form; form
// values are text, checked as query values are.
func TestFormBodies(t *testing.T) {
	cfg := mustLoad(t, "testdata/forms.good.yaml")
	tests := []struct {
		route string
		body  rules.Encoding
		in    map[string]rules.Location
	}{
		{"set_download_limit", rules.EncodingForm, map[string]rules.Location{"limit": rules.InForm}},
		{"add_torrent", rules.EncodingMultipart, map[string]rules.Location{"urls": rules.InForm, "category": rules.InQuery}},
		{"create_price", rules.EncodingForm, map[string]rules.Location{"currency": rules.InForm, "unit_amount": rules.InForm, "line_price": rules.InForm}},
		{"create_ticket", rules.EncodingJSON, map[string]rules.Location{"title": rules.InBody}},
	}
	for _, tt := range tests {
		r := cfg.Route(tt.route)
		if r.Body != tt.body {
			t.Errorf("%s: body %q, want %q", tt.route, r.Body, tt.body)
		}
		for name, in := range tt.in {
			if got := r.Field(name).In; got != in {
				t.Errorf("%s.%s: in %q, want %q", tt.route, name, got, in)
			}
		}
		if !r.HasBodyFields() {
			t.Errorf("%s: HasBodyFields false; its body must be read", tt.route)
		}
	}
	limit := cfg.Route("set_download_limit").Field("limit")
	for v, want := range map[string]bool{"5": true, "0": true, "fast": false, "-5": false, "1.5": false} {
		if got := limit.Check(rules.Text(v)); got != want {
			t.Errorf("limit.Check(%q) = %t, want %t", v, got, want)
		}
	}
	if got := cfg.Route("create_price").Field("line_price").Key; got != "items[0][price]" {
		t.Errorf("a bracketed key is the form's key as written: got %q", got)
	}
}

// TestXMLRouteSchemaClosed: an XML route's tool takes no argument but its
// declared fields, which are all its body can hold; other routes take
// more, since the upstream may.
func TestXMLRouteSchemaClosed(t *testing.T) {
	cfg := mustParse(t, `
routes:
  process_info:
    method: POST
    path: /RPC2
    body: xml
    fields:
      name: {key: 'methodCall/params/param[1]/value'}
  add:
    method: POST
    path: /add
    body: form
`)
	for name, want := range map[string]string{"process_info": `"additionalProperties":false`, "add": `"additionalProperties":true`} {
		b, err := json.Marshal(cfg.Route(name).InputSchema())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: %s, want %s", name, b, want)
		}
	}
}
