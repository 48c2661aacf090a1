package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// observeRules serve a ticket API in observe mode: every answer must reach
// the caller as the upstream sent it.
const observeRules = `
mode: observe
limits: {error_body: 1KiB, request_body: 1KiB}
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    fields:
      status: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
  create_ticket:
    method: POST
    path: /tickets
    validate: before
    fields:
      priority: {enum: [p1, p2, p3]}
  replace_ticket:
    method: PUT
    path: /tickets/{ticket_id}
    validate: before
    fields:
      status: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
  get_ticket:
    method: GET
    path: /tickets/{ticket_id}
    mode: enforce
`

// observedUpstream answers by path, with the headers a proxy could be
// tempted to touch: a request id of its own, revealing server headers,
// Retry-After, an encoding.
func observedUpstream(hits *atomic.Int64) http.Handler {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		if id := r.Header.Get("X-Request-Id"); id != "" {
			h.Set("X-Echoed-Id", id) // as upstreams that trace requests do
		}
		h.Set("Server", "legacy/1.2 (internal-host-7)")
		h.Set("X-Powered-By", "PHP/5.6")
		switch r.URL.Path {
		case "/tickets/T-1":
			h.Set("Content-Type", "application/json")
			h.Set("Retry-After", "5")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"Invalid status"}`))
		case "/tickets/T-2":
			h.Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("<html><title>Internal Server Error</title><body>Traceback at db.py:12</body></html>"))
		case "/tickets/T-3":
			h.Set("Content-Type", "application/json")
			h.Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(gz(`{"error":"Invalid status"}`))
		case "/tickets/T-4":
			h.Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusConflict)
			w.Write(bytes.Repeat([]byte("too long to read. "), 200)) // over error_body
		case "/tickets":
			h.Set("Content-Type", "application/json")
			h.Set("X-Request-Id", "upstream-own-id")
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"ticket_id":"T-9"}`))
		default:
			h.Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":true}`))
		}
	})
}

// TestObserveChangesNoAnswer sends each request to the upstream directly
// and through signpost in observe mode: status, headers and body must be
// the same, whatever enforce mode would have done with them.
func TestObserveChangesNoAnswer(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(observedUpstream(&hits))
	defer up.Close()
	cfg, err := rules.Parse("observe.yaml", []byte(observeRules))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream, _ = url.Parse(up.URL)
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	shared := NewShared(cfg, SharedOptions{Metrics: m})
	defer shared.Close()
	answers := shared.Answers
	p, err := New(cfg, Options{Metrics: m, Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()

	tests := []struct {
		name, method, path, body string
		would                    string // the code enforce would have answered with, or ""
	}{
		{"a rule explains it", "PATCH", "/tickets/T-1", `{"status":"OPEN"}`, "invalid_status"},
		{"an HTML 500 no rule explains", "PATCH", "/tickets/T-2", `{"status":"open"}`, "upstream_failed"},
		{"gzip, explained once decoded", "PATCH", "/tickets/T-3", `{"status":"OPEN"}`, "invalid_status"},
		{"over error_body", "PATCH", "/tickets/T-4", `{"status":"open"}`, "upstream_rejected"},
		{"a success", "PATCH", "/tickets/T-5", `{"status":"open"}`, ""},
		{"validate before, still forwarded", "POST", "/tickets", `{"priority":"urgent"}`, "invalid_priority"},
		// Enforce would have answered before the upstream, once: the
		// upstream's error, which a rule explains too, is no second answer.
		{"validate before, and the upstream's error", "PUT", "/tickets/T-1", `{"status":"OPEN"}`, "invalid_status"},
		{"a body over request_body, forwarded", "POST", "/tickets", `{"title":"` + strings.Repeat("x", 2048) + `"}`, ""},
		{"unrouted", "DELETE", "/tickets/T-1", "", "upstream_rejected"},
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			send := func(base string) (*http.Response, []byte) {
				t.Helper()
				req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				body, err := io.ReadAll(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				return res, body
			}
			would := func() float64 {
				return metricstest.Counter(t, reg, "signpost_would_rewrite_total", "route", routeOf(p, tt.method, tt.path), "code", tt.would)
			}
			wouldBefore := would()
			before := hits.Load()
			want, wantBody := send(up.URL)
			got, gotBody := send(front.URL)
			if n := hits.Load() - before; n != 2 {
				t.Errorf("the upstream was called %d times for two requests", n)
			}
			if got.StatusCode != want.StatusCode || !bytes.Equal(gotBody, wantBody) {
				t.Errorf("through signpost: %d %q\nwant the upstream's %d %q", got.StatusCode, gotBody, want.StatusCode, wantBody)
			}
			for _, h := range []http.Header{got.Header, want.Header} {
				h.Del("Date")
			}
			if !sameHeader(got.Header, want.Header) {
				t.Errorf("headers through signpost:\n%v\nwant the upstream's:\n%v", got.Header, want.Header)
			}
			if n := would() - wouldBefore; tt.would != "" && n != 1 {
				t.Errorf("signpost_would_rewrite_total{code=%q} rose by %v, want 1: one answer enforce would have sent", tt.would, n)
			}
		})
	}
	var codes []string
	for _, a := range answers.List() {
		codes = append(codes, a.Code)
		if a.Route == "update_ticket" && a.Code == "invalid_status" && (!strings.Contains(a.Would, `"received":"OPEN"`) || a.Upstream != `{"error":"Invalid status"}` || a.Status != 400) {
			t.Errorf("answer %+v: want the rewritten body beside the upstream's", a)
		}
		if (a.Code == "invalid_priority" || a.Route == "replace_ticket") && a.Status != 0 {
			t.Errorf("answer %+v: enforce would have answered before the upstream, status 0", a)
		}
	}
	for _, want := range []string{"invalid_status", "upstream_failed", "upstream_rejected", "invalid_priority"} {
		if !slices.Contains(codes, want) {
			t.Errorf("answers kept %v, want one with code %s", codes, want)
		}
	}
}

// TestObserveLeavesEnforcedRoutes checks that a route in enforce mode
// under a file in observe mode still answers as enforce does.
func TestObserveLeavesEnforcedRoutes(t *testing.T) {
	cfg, err := rules.Parse("observe.yaml", []byte(observeRules+`
    errors:
      - match: {status: 404}
        code: unknown_ticket
        message: no ticket has this id
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream, _ = url.Parse("http://upstream.test")
	p, err := New(cfg, Options{Transport: &roundTrip{status: 404, body: []byte(`{"error":"nope"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil))
	if !strings.Contains(w.Body.String(), `"unknown_ticket"`) || w.Header().Get(RequestIDHeader) == "" {
		t.Errorf("enforced route answered %d %s (headers %v), want the rewrite with a request id", w.Code, w.Body, w.Header())
	}
}

// routeOf names the route of method and path, as the metrics label it.
func routeOf(p *Proxy, method, path string) string {
	r, _ := p.RouteFor(httptest.NewRequest(method, path, nil))
	if r == nil {
		return metrics.Unrouted
	}
	return r.Name
}

// sameHeader compares headers, ignoring the framing a hop may change.
func sameHeader(a, b http.Header) bool {
	strip := func(h http.Header) http.Header {
		h = h.Clone()
		for _, k := range []string{"Connection", "Keep-Alive", "Transfer-Encoding"} {
			h.Del(k)
		}
		return h
	}
	a, b = strip(a), strip(b)
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestLateErrorBodyPassesWhole has the upstream send an error's headers at
// once and its body after the upstream timeout, framed by length or
// chunked. Where signpost passes the error on (observe mode; enforce mode
// under unmatched: passthrough), the caller must get the whole body, as
// without signpost; under wrap, a whole answer of signpost's.
func TestLateErrorBodyPassesWhole(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const body = `{"error":"Something else went wrong"}`
	heads := map[string]string{
		"length":  fmt.Sprintf("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)),
		"chunked": "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
	}
	observed := func() (*rules.Config, error) { return rules.Parse("observe.yaml", []byte(observeRules)) }
	enforced := func() (*rules.Config, error) { return rules.Load("testdata/rules.yaml") }
	for _, tc := range []struct {
		name   string
		rules  func() (*rules.Config, error)
		policy rules.Policy
		want   string // the body the caller gets; "" for the upstream's
	}{
		{"observe", observed, rules.Wrap, ""},
		{"enforce, passthrough", enforced, rules.Passthrough, ""},
		{"enforce, wrap", enforced, rules.Wrap, `{"error":"upstream_rejected","message":"the upstream rejected the call (400 Bad Request) for a reason signpost has no rule for","retryable":false}`},
	} {
		for _, framing := range []string{"length", "chunked"} {
			t.Run(tc.name+", "+framing, func(t *testing.T) {
				addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, heads[framing])
					time.Sleep(2 * timeout)
					if framing == "chunked" {
						fmt.Fprintf(c, "%x\r\n%s\r\n0\r\n\r\n", len(body), body)
					} else {
						io.WriteString(c, body)
					}
				})
				cfg, err := tc.rules()
				if err != nil {
					t.Fatal(err)
				}
				cfg.Upstream = &url.URL{Scheme: "http", Host: addr}
				cfg.Unmatched = tc.policy
				for _, r := range cfg.Routes {
					r.Unmatched = tc.policy
				}
				p, err := New(cfg, Options{UpstreamTimeout: timeout})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				s := httptest.NewServer(p)
				defer s.Close()
				req, _ := http.NewRequest("PATCH", s.URL+"/tickets/T-1", strings.NewReader(`{"status":"open"}`))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(res.Body)
				res.Body.Close()
				want := tc.want
				if want == "" {
					want = body
				}
				if err != nil || res.StatusCode != 400 || string(got) != want {
					t.Errorf("got %d %q (read error %v); want 400 %q", res.StatusCode, got, err, want)
				}
			})
		}
	}
}
