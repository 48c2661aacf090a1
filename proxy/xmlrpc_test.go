package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// xmlrpcFault is a fault as supervisord writes one.
func xmlrpcFault(code, text string) string {
	return `<?xml version='1.0'?>
<methodResponse><fault><value><struct>
<member><name>faultCode</name><value><int>` + code + `</int></value></member>
<member><name>faultString</name><value><string>` + text + `</string></value></member>
</struct></value></fault></methodResponse>`
}

// TestXMLRPCStandIn: behind signpost, an XML-RPC server's fault about a
// wrong argument is a fault still, with status 200, the server's code,
// the actionable message and signpost's members in its struct; a success
// passes as it came.
func TestXMLRPCStandIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/xml")
		if strings.Contains(string(body), "<string>web</string>") {
			io.WriteString(w, `<?xml version='1.0'?><methodResponse><params><param><value><struct><member><name>name</name><value><string>web</string></value></member></struct></value></param></params></methodResponse>`)
			return
		}
		io.WriteString(w, xmlrpcFault("10", "BAD_NAME: nosuch"))
	}))
	defer srv.Close()
	p := proxyTo(t, `
format: xmlrpc
routes:
  process_info:
    method: POST
    path: /RPC2
    body: xml
    when: {xml: methodCall/methodName, equals: supervisor.getProcessInfo}
    fields:
      method: {key: methodCall/methodName, const: supervisor.getProcessInfo}
      name: {key: 'methodCall/params/param[1]/value', required: true, pattern: '^[a-z]+$', example: web}
    errors:
      - match: {status: 200, body: 'BAD_NAME: (?P<received>[^<]*)'}
        code: unknown_process
        field: name
        message: no process is named {received}
`, srv.URL)
	call := func(name string) *httptest.ResponseRecorder {
		body := `<?xml version="1.0"?><methodCall><methodName>supervisor.getProcessInfo</methodName><params><param><value><string>` + name + `</string></value></param></params></methodCall>`
		return serveOn(p, httptest.NewRequest("POST", "/RPC2", strings.NewReader(body)))
	}
	for _, tc := range []struct {
		name    string
		members []string
	}{
		{"nosuch", []string{
			`<member><name>faultCode</name><value><int>10</int></value></member>`,
			`<member><name>faultString</name><value><string>no process is named &#34;nosuch&#34;</string></value></member>`,
			`<member><name>error</name><value><string>unknown_process</string></value></member>`,
			`<member><name>received</name><value><string>nosuch</string></value></member>`,
		}},
		// A malformed name: the fault states the rule, with the server's code.
		{"Web 1", []string{
			`<member><name>faultCode</name><value><int>10</int></value></member>`,
			`<member><name>faultString</name><value><string>must match the pattern ^[a-z]+$, e.g. web</string></value></member>`,
		}},
	} {
		w := call(tc.name)
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/xml" {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Header().Get("Content-Type"))
		}
		for _, m := range tc.members {
			if !strings.Contains(w.Body.String(), m) {
				t.Errorf("%s: the fault lacks %s:\n%s", tc.name, m, w.Body)
			}
		}
	}
	if w := call("web"); w.Code != 200 || !strings.Contains(w.Body.String(), "<params>") {
		t.Errorf("the corrected call: %d %s", w.Code, w.Body)
	}
}
