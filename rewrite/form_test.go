package rewrite_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// multipartBody writes fields, and a file under the member torrents, as
// multipart/form-data, returning the body and its Content-Type.
func multipartBody(t *testing.T, fields map[string]string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile("torrents", "a.torrent")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte("d8:announce0:e"))
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestFormBodyFields: fields live in form bodies, urlencoded or multipart
// as the request's Content-Type says, bracketed keys as written; a body
// that is not a form is named as such and the form asked for, never JSON.
func TestFormBodyFields(t *testing.T) {
	cfg, err := rules.Load("../rules/testdata/forms.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	multi, multiType := multipartBody(t, map[string]string{"limit": "fast"})
	const form = "application/x-www-form-urlencoded"
	tests := []struct {
		name, route, ctype, body string
		want                     string // Before's answer, or "" for none
	}{
		{"conforming", "set_download_limit", form, "limit=1024", ""},
		{"text that is no integer", "set_download_limit", form, "limit=fast",
			`{"error":"invalid_limit","field":"limit","message":"must be an integer of at least 0, e.g. 0","received":"fast","retryable":false}`},
		{"missing", "set_download_limit", form, "limits=5",
			`{"error":"invalid_limit","field":"limit","message":"is required; must be an integer of at least 0, e.g. 0","retryable":false}`},
		{"multipart to a form route", "set_download_limit", multiType, string(multi),
			`{"error":"invalid_limit","field":"limit","message":"must be an integer of at least 0, e.g. 0","received":"fast","retryable":false}`},
		{"json to a form route", "set_download_limit", "application/json", `{"limit":5}`,
			`{"error":"invalid_form_body","message":"the request body is JSON, not a form; send a form-encoded body (Content-Type: application/x-www-form-urlencoded) with the fields limit","retryable":false}`},
		{"a form with no Content-Type", "set_download_limit", "", "limit=5",
			`{"error":"invalid_form_body","message":"the request body is form-encoded but has no Content-Type saying so; send a form-encoded body (Content-Type: application/x-www-form-urlencoded) with the fields limit","retryable":false}`},
		{"malformed escape", "set_download_limit", form, "limit=5%zz",
			`{"error":"invalid_form_body","message":"the request body is not form-encoded: it holds a malformed percent-encoding; send a form-encoded body (Content-Type: application/x-www-form-urlencoded) with the fields limit","retryable":false}`},
		{"multipart without a boundary", "add_torrent", "multipart/form-data", "--x\r\n",
			`{"error":"invalid_form_body","message":"the request body is multipart/form-data with no boundary parameter in its Content-Type; send a multipart/form-data body with the fields urls","retryable":false}`},
		{"bracketed key", "create_price", form, "currency=usd&items%5B0%5D%5Bprice%5D=prc_1", `{"error":"invalid_line_price","field":"line_price","message":"must match the pattern ^price_[A-Za-z0-9]+$, e.g. price_1MoBy5","received":"prc_1","retryable":false}`},
		{"bracketed key conforming", "create_price", form, "currency=usd&items[0][price]=price_1MoBy5&unit_amount=100", ""},
		{"two at fault", "create_price", form, "currency=USD&unit_amount=1.5",
			`{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[{"field":"currency","code":"invalid_currency","message":"allowed values: usd, eur, gbp","received":"USD"},{"field":"unit_amount","code":"invalid_unit_amount","message":"must be an integer of at least 0, e.g. 0","received":"1.5"}],"retryable":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			route := cfg.Route(tt.route)
			req := &rewrite.Request{Method: "POST", Header: http.Header{}, Body: []byte(tt.body)}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			got := ""
			if e := rewrite.Before(route, req, cfg.Limits); e != nil {
				got = string(e.JSON())
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestXMLBodyFields: fields live in XML bodies, by element path; a body
// that is not XML is named as such, and an XML document asked for.
func TestXMLBodyFields(t *testing.T) {
	cfg, err := rules.Parse("xml.yaml", []byte(`
routes:
  process_info:
    method: POST
    path: /RPC2
    body: xml
    validate: before
    fields:
      name: {key: 'methodCall/params/param[1]/value', required: true, pattern: '^[a-z:]+$', example: 'web:x'}
`))
	if err != nil {
		t.Fatal(err)
	}
	route := cfg.Routes[0]
	call := func(param string) string {
		return `<?xml version="1.0"?><methodCall><methodName>supervisor.getProcessInfo</methodName><params>` + param + `</params></methodCall>`
	}
	for _, tt := range []struct{ name, body, want string }{
		{"conforming", call(`<param><value><string>web:x</string></value></param>`), ""},
		{"off its pattern", call(`<param><value><string>Web 1</string></value></param>`),
			`{"error":"invalid_name","field":"name","message":"must match the pattern ^[a-z:]+$, e.g. web:x","received":"Web 1","retryable":false}`},
		{"missing", call(``),
			`{"error":"invalid_name","field":"name","message":"is required; must match the pattern ^[a-z:]+$, e.g. web:x","retryable":false}`},
		{"JSON", `{"method":"supervisor.getProcessInfo","params":["x"]}`,
			`{"error":"invalid_xml_body","message":"the request body is JSON, not XML; send one XML document with the fields name","retryable":false}`},
		{"cut short", `<methodCall><params>`,
			`{"error":"invalid_xml_body","message":"the request body is not well-formed XML (line 1); send one XML document with the fields name","retryable":false}`},
	} {
		req := &rewrite.Request{Method: "POST", Header: http.Header{"Content-Type": {"text/xml"}}, Body: []byte(tt.body)}
		got := ""
		if e := rewrite.Before(route, req, cfg.Limits); e != nil {
			got = string(e.JSON())
		}
		if got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// TestFormTooManyMembers: a form of more members than signpost reads is
// named as such, not as malformed.
func TestFormTooManyMembers(t *testing.T) {
	cfg, err := rules.Load("../rules/testdata/forms.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a=1&", 10000) + "limit=5"
	req := &rewrite.Request{Method: "POST", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte(body)}
	e := rewrite.Before(cfg.Route("set_download_limit"), req, cfg.Limits)
	if e == nil || e.Code != "invalid_form_body" || !strings.Contains(e.Message, "holds 10001 members, more than the 10000 signpost reads") {
		t.Errorf("got %+v", e)
	}
}
