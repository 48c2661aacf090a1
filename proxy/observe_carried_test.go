package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/draft"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// TestObserveCarriedErrors: in observe mode, a success whose body carries
// an error passes as it came and is recorded as the error it is, which
// the draft proposes, commented out, as a rule for its status; a success
// that carries none is a success, and a caller's next one its recovery.
func TestObserveCarriedErrors(t *testing.T) {
	// A Slack-like Web API: "ok" says whether the call worked.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if gjson.GetBytes(body, "channel").Str == "C024BE91L" {
			io.WriteString(w, `{"ok":true,"channel":{"id":"C024BE91L"}}`)
			return
		}
		io.WriteString(w, `{"ok":false,"error":"channel_not_found"}`)
	}))
	defer srv.Close()
	p := proxyTo(t, "mode: observe\n", srv.URL)
	for _, channel := range []string{"general", "#general", "C024BE91L"} {
		body := `{"channel":"` + channel + `"}`
		r := httptest.NewRequest("POST", "/api/conversations.info", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = "192.0.2.9:4000"
		w := serveOn(p, r)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"ok"`) {
			t.Fatalf("%s: %d %s; observe mode passes every answer as it came", channel, w.Code, w.Body)
		}
	}
	doc, _ := p.Observed()
	if len(doc.Operations) != 1 {
		t.Fatalf("%d operations", len(doc.Operations))
	}
	op := doc.Operations[0]
	if op.Requests != 3 || op.Successes != 1 || len(op.Errors) != 1 {
		t.Fatalf("requests %d, successes %d, errors %+v", op.Requests, op.Successes, op.Errors)
	}
	if e := op.Errors[0]; e.Status != 200 || e.JSON != "error" || e.Text != "channel_not_found" || e.Count != 2 || e.Recovered != 1 {
		t.Errorf("error %+v", e)
	}
	d, err := draft.Write(&doc, "rules.yaml", draft.Options{Upstream: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	text := string(d.Rules)
	for _, want := range []string{
		"# commented out: an error carried in a 200; confirm that no success reads the same",
		"# - match: {status: 200, json: error, equals: channel_not_found}",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the draft lacks %q:\n%s", want, text)
		}
	}
	if _, err := rules.Parse("draft.yaml", d.Rules); err != nil {
		t.Errorf("the draft does not load: %v", err)
	}
}

// TestObserveFormBodies: observe mode reads a form body's members as the
// request's fields, and the draft declares them in: form.
func TestObserveFormBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("limit") == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
	}))
	defer srv.Close()
	p := proxyTo(t, "mode: observe\n", srv.URL)
	for i, body := range []string{"limit=1024", "limit=2048", "limit=0", "limit=4096", "limit=512"} {
		r := httptest.NewRequest("POST", "/api/v2/transfer/setDownloadLimit", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = "192.0.2." + string(rune('1'+i)) + ":4000"
		if w := serveOn(p, r); w.Code != 200 {
			t.Fatalf("%s: %d", body, w.Code)
		}
	}
	doc, _ := p.Observed()
	d, err := draft.Write(&doc, "rules.yaml", draft.Options{Upstream: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse("draft.yaml", d.Rules)
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, d.Rules)
	}
	route := cfg.Routes[0]
	if f := route.Field("limit"); f == nil || f.In != rules.InForm || route.Body != rules.EncodingForm {
		t.Errorf("the drafted route's body %q, field %+v:\n%s", route.Body, f, d.Rules)
	}
}

// TestObserveRPCMethods: observe mode records an RPC endpoint's calls of
// each method as an operation of their own, and the draft makes each a
// route chosen by its method, named for it, which loads and routes.
func TestObserveRPCMethods(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch gjson.GetBytes(body, "method").Str {
		case "torrent-get":
			if !gjson.GetBytes(body, "arguments.fields").Exists() {
				io.WriteString(w, `{"arguments":{},"result":"no fields specified"}`)
				return
			}
			io.WriteString(w, `{"arguments":{"torrents":[]},"result":"success"}`)
		case "session-get":
			io.WriteString(w, `{"arguments":{"version":"3.00"},"result":"success"}`)
		default:
			io.WriteString(w, `{"arguments":{},"result":"method name not recognized"}`)
		}
	}))
	defer srv.Close()
	p := proxyTo(t, "mode: observe\n", srv.URL)
	calls := []string{
		`{"method":"torrent-get","arguments":{}}`, `{"method":"torrent-get","arguments":{"fields":["id"]}}`,
		`{"method":"torrent-get","arguments":{"fields":["name"]}}`, `{"method":"session-get"}`, `{"method":"session-get"}`,
		`{"method":"torrents-get"}`,
	}
	for i, body := range calls {
		r := httptest.NewRequest("POST", "/transmission/rpc", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = "192.0.2.1:" + string(rune('1'+i)) + "000"
		serveOn(p, r)
	}
	doc, _ := p.Observed()
	if len(doc.Operations) != 3 {
		t.Fatalf("%d operations, want one per RPC method: %+v", len(doc.Operations), doc.Operations)
	}
	d, err := draft.Write(&doc, "rules.yaml", draft.Options{Upstream: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse("draft.yaml", d.Rules)
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, d.Rules)
	}
	for _, name := range []string{"torrent_get", "session_get"} {
		r := cfg.Route(name)
		if r == nil || r.When == nil || r.When.Equals != strings.ReplaceAll(name, "_", "-") || len(r.Group) != 2 {
			t.Errorf("route %s: %+v\n%s", name, r, d.Rules)
			continue
		}
		if f := r.Field("method"); f == nil || f.Const != r.When.Equals {
			t.Errorf("route %s: its method field is %+v, want const", name, f)
		}
	}
	for _, want := range []string{
		"# - match: {status: 200, json: result, equals: no fields specified}",
		// A method no call of which succeeded is no route, only a note.
		"#   when: {json: method, equals: torrents-get}",
		"# met 200 result = method name not recognized: 1 time",
	} {
		if !strings.Contains(string(d.Rules), want) {
			t.Errorf("the draft lacks %q:\n%s", want, d.Rules)
		}
	}
}

// TestObserveXMLRPCMethods: XML-RPC calls, sent as text/xml, are recorded
// per method, as JSON ones are.
func TestObserveXMLRPCMethods(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, `<?xml version='1.0'?><methodResponse><params><param><value><string>ok</string></value></param></params></methodResponse>`)
	}))
	defer srv.Close()
	p := proxyTo(t, "mode: observe\n", srv.URL)
	for _, method := range []string{"supervisor.getState", "supervisor.getState", "supervisor.getProcessInfo"} {
		r := httptest.NewRequest("POST", "/RPC2", strings.NewReader(`<?xml version="1.0"?><methodCall><methodName>`+method+`</methodName><params/></methodCall>`))
		r.Header.Set("Content-Type", "text/xml")
		serveOn(p, r)
	}
	doc, _ := p.Observed()
	if len(doc.Operations) != 2 {
		t.Fatalf("%d operations, want one per XML-RPC method", len(doc.Operations))
	}
	for _, op := range doc.Operations {
		if op.When == nil || op.When.In != "xml" || op.When.Key != "methodCall/methodName" {
			t.Errorf("operation %+v", op)
		}
	}
}
