package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// whenRules split one RPC endpoint into a route per method, each with
// the arguments that method takes, and one route for the rest.
const whenRules = `
routes:
  torrent_get:
    method: POST
    path: /rpc
    when: {json: method, equals: torrent-get}
    validate: before
    fields:
      method: {const: torrent-get}
      fields: {key: arguments.fields, required: true, description: the fields to return}
  torrent_add:
    method: POST
    path: /rpc
    when: {json: method, equals: torrent-add}
    validate: before
    fields:
      method: {const: torrent-add}
      download_dir: {key: arguments.download-dir, pattern: '^/', rule: must be an absolute path, example: /srv/downloads}
  rpc:
    method: POST
    path: /rpc
    fields:
      method: {enum: [session-get, torrent-get, torrent-add]}
    errors:
      - match: {status: 200, json: result, equals: method name not recognized}
        code: unknown_method
        field: method
`

// TestRoutesChosenByABodyMember: on one method and path, the request's
// body member chooses the route, whose own fields and mode apply: a field
// one method requires is not asked of another, and a request no route
// claims goes to the one without when:.
func TestRoutesChosenByABodyMember(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		switch gjson.GetBytes(body, "method").Str {
		case "session-get", "torrent-get", "torrent-add":
			io.WriteString(w, `{"result":"success","arguments":{}}`)
		default:
			io.WriteString(w, `{"result":"method name not recognized"}`)
		}
	}))
	defer srv.Close()
	p := proxyTo(t, whenRules, srv.URL)
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
		calls      int // the upstream's calls so far
	}{
		{"torrent-get without its fields", `{"method":"torrent-get","arguments":{}}`, 400,
			`{"error":"invalid_fields","field":"fields","message":"is required at arguments.fields","retryable":false}`, 0},
		{"torrent-get whole", `{"method":"torrent-get","arguments":{"fields":["id"]}}`, 200, `{"result":"success","arguments":{}}`, 1},
		{"torrent-add, which needs no fields", `{"method":"torrent-add","arguments":{"filename":"magnet:?xt=urn:btih:ab"}}`, 200, `{"result":"success","arguments":{}}`, 2},
		{"torrent-add with a relative directory", `{"method":"torrent-add","arguments":{"download-dir":"dl"}}`, 400,
			`{"error":"invalid_download_dir","field":"download_dir","message":"must be an absolute path, e.g. /srv/downloads","received":"dl","retryable":false}`, 2},
		{"another method goes to the route for the rest", `{"method":"session-get"}`, 200, `{"result":"success","arguments":{}}`, 3},
		{"and its rules", `{"method":"torrents-get"}`, 400,
			`{"error":"unknown_method","field":"method","message":"allowed values: session-get, torrent-get, torrent-add","received":"torrents-get","retryable":false}`, 4},
	} {
		w := serveOn(p, httptest.NewRequest("POST", "/rpc", strings.NewReader(tc.body)))
		if w.Code != tc.status || w.Body.String() != tc.want {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, w.Code, w.Body, tc.status, tc.want)
		}
		if n := int(calls.Load()); n != tc.calls {
			t.Errorf("%s: the upstream had %d calls, want %d", tc.name, n, tc.calls)
		}
	}
}

// TestRouteGroupWithoutFallback: a request no route of its method and path
// claims is unrouted: forwarded, its answer passed under the file's policy.
func TestRouteGroupWithoutFallback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"result":"success"}`)
	}))
	defer srv.Close()
	p := proxyTo(t, `
routes:
  get:
    method: POST
    path: /rpc
    when: {json: method, equals: get}
    validate: before
    fields:
      id: {required: true}
  set:
    method: POST
    path: /rpc
    when: {query: op, equals: set}
    validate: before
    fields:
      value: {required: true}
`, srv.URL)
	for target, want := range map[string]int{"/rpc": 200, "/rpc?op=set": 400} {
		w := serveOn(p, httptest.NewRequest("POST", target, strings.NewReader(`{"method":"other"}`)))
		if w.Code != want {
			t.Errorf("%s: %d %s, want %d", target, w.Code, w.Body, want)
		}
	}
	w := serveOn(p, httptest.NewRequest("POST", "/rpc", strings.NewReader(`{"method":"get"}`)))
	if w.Code != 400 || !strings.Contains(w.Body.String(), `"field":"id"`) {
		t.Errorf("get without its id: %d %s", w.Code, w.Body)
	}
}

// TestRouteForPutsTheBodyBackWhole: choosing among a group's routes reads
// the body within the request bound, and the request keeps all of it, what
// lies past the bound included, for what reads it next (explain and test
// then send it through the proxy, which refuses it as too large).
func TestRouteForPutsTheBodyBackWhole(t *testing.T) {
	p := proxyTo(t, "limits: {request_body: 1KiB}\n"+whenRules, "http://127.0.0.1:9")
	for _, tc := range []struct {
		name, body string
		route      string
	}{
		{"within the bound", `{"method":"torrent-add","arguments":{"download-dir":"/srv"}}`, "torrent_add"},
		{"past the bound", `{"method":"torrent-add","arguments":{"download-dir":"` + strings.Repeat("d", 3000) + `"}}`, ""},
	} {
		r := httptest.NewRequest("POST", "/rpc", strings.NewReader(tc.body))
		route, _ := p.RouteFor(r)
		if route == nil || tc.route != "" && route.Name != tc.route {
			t.Errorf("%s: route %v, want %q", tc.name, route, tc.route)
		}
		if got, err := io.ReadAll(r.Body); err != nil || string(got) != tc.body {
			t.Errorf("%s: the body after RouteFor: %d bytes (%v), want the %d sent", tc.name, len(got), err, len(tc.body))
		}
	}
}

// proxyTo builds a proxy of the rules text in front of the upstream at
// base, closed at cleanup.
func proxyTo(t *testing.T, text, base string) *Proxy {
	t.Helper()
	cfg, err := rules.Parse("rules.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	p, err := New(cfg, Options{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
