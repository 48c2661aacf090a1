package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// carriedRules are an RPC API's: one endpoint answering 200 to every call,
// with "result" saying whether it worked, as Transmission's does.
const carriedRules = `
routes:
  rpc:
    method: POST
    path: /rpc
    fields:
      method: {enum: [torrent-get, torrent-set]}
    errors:
      - match: {status: 200, json: result, equals: method name not recognized}
        code: unknown_method
        field: method
      - match: {status: 200, json: result, equals: no such torrent}
        code: unknown_torrent
        message: no torrent has this id
        status: 404
      - match: {status: 200, json: result, not_equals: success}
        code: rpc_failed
        message: 'the call failed: {upstream}'
  ping:
    method: GET
    path: /ping
`

// carriedUpstream answers like an RPC server: each body below by the
// request's "method".
func carriedUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	big := `{"result":"success","arguments":{"torrents":"` + strings.Repeat("x", 70<<10) + `"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "kept")
		switch {
		case r.URL.Path == "/ping":
			io.WriteString(w, `{"result":"bad"}`)
		case bytes.Contains(body, []byte(`"torrent-get"`)):
			io.WriteString(w, `{"result":"success","arguments":{"torrents":[]}}`)
		case bytes.Contains(body, []byte(`"huge"`)):
			io.WriteString(w, big)
		case bytes.Contains(body, []byte(`"zipped"`)):
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, `{"result":"no such torrent"}`)
			zw.Close()
		case bytes.Contains(body, []byte(`"torrent-set"`)):
			io.WriteString(w, `{"result":"torrent 7 is locked"}`)
		case bytes.Contains(body, []byte(`"head"`)):
			w.WriteHeader(http.StatusNoContent)
		default:
			io.WriteString(w, `{"result":"method name not recognized"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestErrorsCarriedInASuccess: a 200 whose body a rule matches is answered
// as the error it carries, with an error status, and counted as a
// rejection; every other 200 of the route, and every 200 of a route with
// no rule for it, passes on byte for byte, on both upstream paths.
func TestErrorsCarriedInASuccess(t *testing.T) {
	srv := carriedUpstream(t)
	cfg, err := rules.Parse("carried.yaml", []byte(carriedRules))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	transport := NewTransport(0)
	t.Cleanup(transport.CloseIdleConnections)
	for _, path := range []struct {
		name string
		opts Options
	}{
		{"direct", Options{Upstream: u}},
		{"general", Options{Upstream: u, Transport: transport}},
	} {
		t.Run(path.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			opts := path.opts
			opts.Metrics = metrics.New(reg)
			p, err := New(cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			tests := []struct {
				name, method, target, body string
				status                     int
				want                       string // the body, whole
			}{
				{"success word", "POST", "/rpc", `{"method":"torrent-get"}`, 200,
					`{"result":"success","arguments":{"torrents":[]}}`},
				{"wrong method", "POST", "/rpc", `{"method":"torrents-get"}`, 400,
					`{"error":"unknown_method","field":"method","message":"allowed values: torrent-get, torrent-set","received":"torrents-get","retryable":false}`},
				{"another word", "POST", "/rpc", `{"method":"torrent-set"}`, 400,
					`{"error":"rpc_failed","message":"the call failed: \"torrent 7 is locked\"","retryable":false}`},
				{"encoded, the rule's status", "POST", "/rpc", `{"method":"zipped"}`, 404,
					`{"error":"unknown_torrent","message":"no torrent has this id","errors":[{"field":"method","code":"unknown_method","message":"allowed values: torrent-get, torrent-set","received":"zipped"}],"retryable":false}`},
				{"no body", "POST", "/rpc", `{"method":"head"}`, 204, ``},
				{"route without a rule for it", "GET", "/ping", ``, 200, `{"result":"bad"}`},
			}
			for _, tt := range tests {
				w := serveOn(p, httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body)))
				if w.Code != tt.status || w.Body.String() != tt.want {
					t.Errorf("%s: %d %s\nwant %d %s", tt.name, w.Code, w.Body, tt.status, tt.want)
				}
				if got := w.Header().Get("X-Upstream"); got != "kept" {
					t.Errorf("%s: X-Upstream %q: the upstream's fields must pass", tt.name, got)
				}
				if tt.status >= 400 && w.Header().Get("Content-Encoding") != "" {
					t.Errorf("%s: Content-Encoding %q on a rewritten body", tt.name, w.Header().Get("Content-Encoding"))
				}
			}
			// A JSON array is no batch outside JSON-RPC: the route's rules
			// for its successes apply.
			if w := serveOn(p, httptest.NewRequest("POST", "/rpc", strings.NewReader(`[{"method":"torrent-set"}]`))); w.Code != 400 {
				t.Errorf("an array body: %d %s; want the error its 200 carries", w.Code, w.Body)
			}
			// A success over the bound passes on whole, unread.
			w := serveOn(p, httptest.NewRequest("POST", "/rpc", strings.NewReader(`{"method":"huge"}`)))
			if w.Code != 200 || w.Body.Len() != 70<<10+48 || !strings.HasSuffix(w.Body.String(), `"}}`) {
				t.Errorf("huge success: %d, %d bytes", w.Code, w.Body.Len())
			}
			if n := metricstest.Counter(t, reg, "signpost_rejections_total", "route", "rpc", "code", "unknown_method", "field", "method"); n != 2 {
				t.Errorf("unknown_method rejections = %v, want 2", n)
			}
			if n, _ := metricstest.Histogram(t, reg, "signpost_request_duration_seconds", "route", "rpc", "outcome", metrics.OutcomeRewritten); n != 4 {
				t.Errorf("rewritten outcomes = %d, want 4", n)
			}
			if n, _ := metricstest.Histogram(t, reg, "signpost_request_duration_seconds", "route", "rpc", "outcome", metrics.OutcomeSuccess); n != 3 {
				t.Errorf("success outcomes = %d, want 3 (the success word, no body, the huge one)", n)
			}
		})
	}
}

// TestCarriedErrorIsNoRecovery: after a rejection, an error carried in a
// 200 is another rejection, not the caller's recovery; the success that
// follows it ends the recovery, counting both calls after the first.
func TestCarriedErrorIsNoRecovery(t *testing.T) {
	srv := carriedUpstream(t)
	cfg, err := rules.Parse("carried.yaml", []byte(carriedRules))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	reg := prometheus.NewRegistry()
	p, err := New(cfg, Options{Upstream: u, Metrics: metrics.New(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	call := func(method string) int {
		r := httptest.NewRequest("POST", "/rpc", strings.NewReader(`{"method":"`+method+`"}`))
		r.RemoteAddr = "192.0.2.7:5000"
		return serveOn(p, r).Code
	}
	if got := call("torrents-get"); got != 400 {
		t.Fatalf("wrong method: %d", got)
	}
	if got := call("torrent-set"); got != 400 {
		t.Fatalf("carried error: %d", got)
	}
	if n, _ := metricstest.Histogram(t, reg, "signpost_recovery_attempts", "route", "rpc", "code", "unknown_method"); n != 0 {
		t.Fatalf("%d recoveries after an error carried in a 200", n)
	}
	if got := call("torrent-get"); got != 200 {
		t.Fatalf("corrected call: %d", got)
	}
	if n, sum := metricstest.Histogram(t, reg, "signpost_recovery_attempts", "route", "rpc", "code", "unknown_method"); n != 1 || sum != 2 {
		t.Errorf("recoveries: %d taking %v calls, want 1 taking 2", n, sum)
	}
}

// TestCarriedOverTheBudget: a success the buffer budget leaves no room to
// read passes on whole, as it came, on both upstream paths; so does one
// in an encoding signpost does not read.
func TestCarriedOverTheBudget(t *testing.T) {
	big := `{"result":"success","pad":"` + strings.Repeat("x", 6000) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("enc") != "" {
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, `{"result":"no such torrent"}`) // as if compressed
			return
		}
		io.WriteString(w, big)
	}))
	defer srv.Close()
	cfg, err := rules.Parse("carried.yaml", []byte(carriedRules))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	transport := NewTransport(0)
	t.Cleanup(transport.CloseIdleConnections)
	for _, path := range []string{"direct", "general"} {
		shared := NewShared(cfg, SharedOptions{BufferBudget: 1 << 10})
		opts := Options{Upstream: u, Shared: shared}
		if path == "general" {
			opts.Transport = transport
		}
		p, err := New(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		w := serveOn(p, httptest.NewRequest("POST", "/rpc", strings.NewReader(`{"method":"torrent-get"}`)))
		if w.Code != 200 || w.Body.String() != big {
			t.Errorf("%s: %d, %d bytes; want the success whole", path, w.Code, w.Body.Len())
		}
		w = serveOn(p, httptest.NewRequest("POST", "/rpc?enc=1", strings.NewReader(`{"method":"torrent-get"}`)))
		if w.Code != 200 || w.Body.String() != `{"result":"no such torrent"}` || w.Header().Get("Content-Encoding") != "br" {
			t.Errorf("%s, an encoding not read: %d %s", path, w.Code, w.Body)
		}
		p.Close()
		shared.Close()
	}
}
