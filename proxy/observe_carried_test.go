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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if gjson.GetBytes(body, "method").Str == "torrent-get" {
			io.WriteString(w, `{"arguments":{"torrents":[]},"result":"success"}`)
			return
		}
		io.WriteString(w, `{"arguments":{},"result":"method name not recognized"}`)
	}))
	defer srv.Close()
	p := proxyTo(t, "mode: observe\n", srv.URL)
	for _, method := range []string{"torrents-get", "torrents-get", "torrent-get"} {
		body := `{"method":"` + method + `","arguments":{"fields":["id"]}}`
		r := httptest.NewRequest("POST", "/transmission/rpc", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = "192.0.2.9:4000"
		w := serveOn(p, r)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"result"`) {
			t.Fatalf("%s: %d %s; observe mode passes every answer as it came", method, w.Code, w.Body)
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
	if e := op.Errors[0]; e.Status != 200 || e.JSON != "result" || e.Text != "method name not recognized" || e.Count != 2 || e.Recovered != 1 {
		t.Errorf("error %+v", e)
	}
	d, err := draft.Write(&doc, "rules.yaml", draft.Options{Upstream: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	text := string(d.Rules)
	for _, want := range []string{
		"# commented out: an error carried in a 200; confirm that no success reads the same",
		"# - match: {status: 200, json: result, equals: method name not recognized}",
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
