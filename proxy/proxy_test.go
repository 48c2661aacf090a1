package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/internal/upstream"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// roundTrip is a fake upstream: it answers in process and records what it
// was sent.
type roundTrip struct {
	status int
	header http.Header
	body   []byte
	err    error
	got    []byte // the request body the upstream received
}

func (rt *roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		rt.got, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	if rt.err != nil {
		return nil, rt.err
	}
	h := rt.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: rt.status, Header: h, Body: io.NopCloser(bytes.NewReader(rt.body)),
		ContentLength: int64(len(rt.body)), Request: r}, nil
}

type fixture struct {
	p   *Proxy
	reg *prometheus.Registry
	m   *metrics.Metrics
}

func newProxy(t testing.TB, rt http.RoundTripper) *fixture {
	return newProxyWith(t, rt, rules.Wrap)
}

// newProxyWith serves testdata/rules.yaml with the given policy for
// unmatched errors on every route.
func newProxyWith(t testing.TB, rt http.RoundTripper, policy rules.Policy) *fixture {
	t.Helper()
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Unmatched = policy
	for _, r := range cfg.Routes {
		r.Unmatched = policy
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	p, err := New(cfg, Options{Transport: rt, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &fixture{p, reg, m}
}

func (f *fixture) do(method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	w := httptest.NewRecorder()
	f.p.ServeHTTP(w, req)
	return w
}

func (f *fixture) counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	return metricstest.Counter(t, f.reg, name, labels...)
}

// histogram returns the sample count and sum of a histogram series.
func (f *fixture) histogram(t *testing.T, name string, labels ...string) (uint64, float64) {
	t.Helper()
	return metricstest.Histogram(t, f.reg, name, labels...)
}

// rewritten is the answer to a status outside the test rules' set.
const rewritten = `{"error":"invalid_status","field":"status","message":"` + statusRule + `","received":"OPEN","retryable":false}`

// statusRule is what the test rules' status field says of a value outside
// its set.
const statusRule = "allowed values: " + "open, pending, closed"

func TestRewriteFixesFraming(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"error":"Invalid status"}`))
	zw.Close()
	for _, tc := range []struct {
		name string
		hdr  http.Header
		body []byte
	}{
		{"plain", http.Header{"Content-Type": {"text/plain"}, "Etag": {`"v1"`}}, []byte(`{"error":"Invalid status"}`)},
		{"gzip", http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"application/json"}}, gz.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.hdr.Set("Content-Length", itoa(len(tc.body)))
			tc.hdr.Set("X-Upstream", "kept")
			f := newProxy(t, &roundTrip{status: 400, header: tc.hdr, body: tc.body})
			w := f.do("PATCH", "/tickets/T-1", `{"status":"OPEN"}`)
			if w.Code != 400 || w.Body.String() != rewritten {
				t.Fatalf("got %d %s; want 400 %s", w.Code, w.Body, rewritten)
			}
			h := w.Result().Header
			if got := h.Get("Content-Length"); got != itoa(len(rewritten)) {
				t.Errorf("Content-Length %q; want %d", got, len(rewritten))
			}
			for k, want := range map[string]string{"Content-Type": "application/json", "Content-Encoding": "", "Etag": "", "X-Upstream": "kept"} {
				if got := h.Get(k); got != want {
					t.Errorf("%s = %q; want %q", k, got, want)
				}
			}
			if c := f.counter(t, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status"); c != 1 {
				t.Errorf("rejections counter = %v; want 1", c)
			}
			f.p.Close() // counts what is queued
			if n, sum := f.histogram(t, "signpost_error_body_tokens", "route", "update_ticket"); n != 1 || sum != float64(rules.Tokens(rewritten)) {
				t.Errorf("body tokens histogram: %d samples summing %v; want 1 of %d", n, sum, rules.Tokens(rewritten))
			}
		})
	}
}

// unmatchedCases are upstream errors signpost cannot rewrite: their fate
// depends on the policy.
func unmatchedCases() []unmatchedCase {
	big := bytes.Repeat([]byte("x"), 4096)
	bomb := func() []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(`{"error":"Invalid status","pad":"`))
		zw.Write(bytes.Repeat([]byte("0"), 1<<20))
		zw.Write([]byte(`"}`))
		zw.Close()
		return b.Bytes()
	}()
	return []unmatchedCase{
		{name: "success", method: "PATCH", target: "/tickets/T-1", status: 200, body: []byte(`{"status":"open"}`)},
		{name: "unmatched message", wrapped: rejectedBody(400, "Other"), method: "PATCH", target: "/tickets/T-1", status: 400, body: []byte(`{"error":"Other"}`),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "update_ticket", "status", "400"}},
		{name: "status no rule concerns", wrapped: rejectedBody(418, ""), method: "PATCH", target: "/tickets/T-1", status: 418, body: []byte(`teapot`),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "update_ticket", "status", "418"}},
		{name: "route without rules", wrapped: rejectedBody(404, "No such ticket"), method: "GET", target: "/tickets/T-1", status: 404, body: []byte(`{"error":"No such ticket"}`),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "get_ticket", "status", "404"}},
		{name: "unrouted", wrapped: rejectedBody(400, "Invalid status"), method: "DELETE", target: "/tickets/T-1", status: 400, body: []byte(`{"error":"Invalid status"}`),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "(unrouted)", "status", "400"}},
		{name: "oversized", wrapped: rejectedBody(400, ""), method: "PATCH", target: "/tickets/T-1", status: 400,
			body:    append(append([]byte(`{"error":"Invalid status","pad":"`), big...), `"}`...),
			counter: "signpost_upstream_error_bodies_oversized_total", labels: []string{"route", "update_ticket"}},
		{name: "gzip bomb", wrapped: rejectedBody(400, ""), method: "PATCH", target: "/tickets/T-1", status: 400, hdr: http.Header{"Content-Encoding": {"gzip"}}, body: bomb,
			counter: "signpost_upstream_error_bodies_oversized_total", labels: []string{"route", "update_ticket"}},
		{name: "corrupt gzip", wrapped: rejectedBody(400, ""), method: "PATCH", target: "/tickets/T-1", status: 400, hdr: http.Header{"Content-Encoding": {"gzip"}}, body: []byte("\x1f\x8bnot gzip at all"),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "update_ticket", "status", "400"}},
		{name: "unknown encoding", wrapped: rejectedBody(400, ""), method: "PATCH", target: "/tickets/T-1", status: 400, hdr: http.Header{"Content-Encoding": {"br"}}, body: []byte("\x0b\x02\x80"),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "update_ticket", "status", "400"}},
		{name: "event stream error", wrapped: rejectedBody(400, ""), method: "PATCH", target: "/tickets/T-1", status: 400, hdr: http.Header{"Content-Type": {"text/event-stream"}}, body: []byte(`{"error":"Invalid status"}`),
			counter: "signpost_upstream_errors_unmatched_total", labels: []string{"route", "update_ticket", "status", "400"}},
	}
}

type unmatchedCase struct {
	name    string
	method  string
	target  string
	status  int
	hdr     http.Header
	body    []byte
	counter string
	labels  []string
	wrapped string // the body under the wrap policy
}

// TestPassThrough: under unmatched: passthrough, an error no rule matches
// and no declared field explains (the request's fields conform) reaches
// the caller as the upstream sent it.
func TestPassThrough(t *testing.T) {
	for _, tc := range unmatchedCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newProxyWith(t, &roundTrip{status: tc.status, header: tc.hdr, body: tc.body}, rules.Passthrough)
			w := f.do(tc.method, tc.target, `{"status":"open"}`)
			if w.Code != tc.status || !bytes.Equal(w.Body.Bytes(), tc.body) {
				t.Fatalf("got %d with %d bytes; want %d with the upstream's %d bytes unchanged", w.Code, w.Body.Len(), tc.status, len(tc.body))
			}
			if tc.hdr.Get("Content-Encoding") != "" && w.Result().Header.Get("Content-Encoding") != tc.hdr.Get("Content-Encoding") {
				t.Errorf("Content-Encoding dropped from a body passed through")
			}
			if tc.counter != "" {
				if c := f.counter(t, tc.counter, tc.labels...); c != 1 {
					t.Errorf("%s%v = %v; want 1", tc.counter, tc.labels, c)
				}
			}
			if c := f.counter(t, "signpost_rejections_total"); c != 0 {
				t.Errorf("rejections = %v; want 0", c)
			}
		})
	}
}

// rejectedBody is the wrapped body of a 4xx no rule explains.
func rejectedBody(status int, upstreamMessage string) string {
	b := `{"error":"upstream_rejected","message":"the upstream rejected the call (` + itoa(status) + " " + http.StatusText(status) + `) for a reason signpost has no rule for",`
	if upstreamMessage != "" {
		b += `"upstream_message":"` + upstreamMessage + `",`
	}
	return b + `"retryable":false}`
}

func TestWrap(t *testing.T) {
	for _, tc := range unmatchedCases() {
		if tc.wrapped == "" {
			continue // a success
		}
		t.Run(tc.name, func(t *testing.T) {
			f := newProxy(t, &roundTrip{status: tc.status, header: tc.hdr, body: tc.body})
			w := f.do(tc.method, tc.target, `{"status":"open"}`) // well formed: the upstream's error stands unexplained
			if w.Code != tc.status || w.Body.String() != tc.wrapped {
				t.Fatalf("got %d %s\nwant %d %s", w.Code, w.Body, tc.status, tc.wrapped)
			}
			h := w.Result().Header
			if h.Get("Content-Type") != "application/json" || h.Get("Content-Encoding") != "" || h.Get("Content-Length") != itoa(len(tc.wrapped)) {
				t.Errorf("framing: %v", h)
			}
			if h.Get(RequestIDHeader) == "" {
				t.Errorf("no %s returned", RequestIDHeader)
			}
			if c := f.counter(t, tc.counter, tc.labels...); c != 1 {
				t.Errorf("%s%v = %v; want 1", tc.counter, tc.labels, c)
			}
		})
	}
}

func TestRequestBodyForwardedIntact(t *testing.T) {
	body := `{"status":"OPEN","pad":"` + strings.Repeat("y", 900) + `"}`
	rt := &roundTrip{status: 400, body: []byte(`{"error":"Invalid status"}`)}
	f := newProxy(t, rt)
	w := f.do("PATCH", "/tickets/T-1", body)
	if string(rt.got) != body {
		t.Errorf("upstream got %d bytes; want the %d sent", len(rt.got), len(body))
	}
	if !strings.Contains(w.Body.String(), `"received":"OPEN"`) {
		t.Errorf("received not echoed: %s", w.Body)
	}
}

// TestRequestBodyOverTheBound checks the 413 for a body past the bound
// signpost reads to check fields (1 KiB in testdata), whether its length
// is declared or found by reading, and that the upstream never sees it.
func TestRequestBodyOverTheBound(t *testing.T) {
	const want = `{"error":"request_body_too_large","message":"the request body is over 1 KiB, the most signpost reads to check its fields; send a smaller body","retryable":false}`
	body := `{"status":"OPEN","pad":"` + strings.Repeat("y", 2048) + `"}`
	for _, chunked := range []bool{false, true} {
		rt := &roundTrip{status: 200, body: []byte(`{}`)}
		f := newProxy(t, rt)
		req := httptest.NewRequest("PATCH", "/tickets/T-1", strings.NewReader(body))
		if chunked {
			req.ContentLength = -1
		}
		w := httptest.NewRecorder()
		f.p.ServeHTTP(w, req)
		if w.Code != 413 || w.Body.String() != want {
			t.Errorf("chunked=%v: got %d %s; want 413 %s", chunked, w.Code, w.Body, want)
		}
		if rt.got != nil {
			t.Errorf("chunked=%v: the upstream got %d bytes", chunked, len(rt.got))
		}
		if c := f.counter(t, "signpost_requests_limited_total", "limit", "request_body"); c != 1 {
			t.Errorf("limited counter = %v; want 1", c)
		}
	}
}

// held answers only once released, to keep requests in flight.
type held struct {
	arrived chan struct{}
	release chan struct{}
}

func (h *held) RoundTrip(r *http.Request) (*http.Response, error) {
	h.arrived <- struct{}{}
	<-h.release
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), ContentLength: 2, Request: r}, nil
}

func TestConcurrencyBound(t *testing.T) {
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	h := &held{arrived: make(chan struct{}, 2), release: make(chan struct{})}
	p, err := New(cfg, Options{Transport: h, Metrics: metrics.New(reg), MaxConcurrent: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f := &fixture{p: p, reg: reg}
	done := make(chan int, 2)
	for range 2 {
		go func() {
			w := httptest.NewRecorder()
			p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil))
			done <- w.Code
		}()
	}
	<-h.arrived
	<-h.arrived
	w := f.do("GET", "/tickets/T-2", "")
	want := `{"error":"overloaded","message":"signpost is serving its limit of 2 requests at once; repeat the call in a second","retryable":true,"retry_after_seconds":1}`
	if w.Code != 503 || w.Body.String() != want || w.Result().Header.Get("Retry-After") != "1" {
		t.Errorf("third request: %d %s (Retry-After %q); want 503 %s", w.Code, w.Body, w.Result().Header.Get("Retry-After"), want)
	}
	close(h.release)
	for range 2 {
		if code := <-done; code != 200 {
			t.Errorf("a request within the bound got %d", code)
		}
	}
	if c := f.counter(t, "signpost_requests_limited_total", "limit", "concurrency"); c != 1 {
		t.Errorf("limited counter = %v; want 1", c)
	}
	// Tokens are returned: the next request is served.
	h.release = make(chan struct{})
	close(h.release)
	go func() { <-h.arrived }()
	if w := f.do("GET", "/tickets/T-3", ""); w.Code != 200 {
		t.Errorf("after the burst: %d", w.Code)
	}
}

// TestConcurrencyBoundInTheRouteFormat: past the bound, a request to a
// route whose own format is JSON-RPC (the file's is JSON) is refused with
// a JSON-RPC error, 503, and one to an XML-RPC route with a fault, 200, as
// their clients read answers; both with Retry-After.
func TestConcurrencyBoundInTheRouteFormat(t *testing.T) {
	for _, tc := range []struct {
		name, rules, target, ctype string
		status                     int
		want                       []string
	}{
		{"jsonrpc", "upstream: http://127.0.0.1:9\nroutes:\n  rpc: {method: POST, path: /jsonrpc, format: jsonrpc}\n", "/jsonrpc", "application/json", 503,
			[]string{`"jsonrpc":"2.0"`, `"id":null`, `"code":-32000`, `signpost is serving its limit of 1 requests at once`, `"error":"overloaded"`}},
		{"xmlrpc", "upstream: http://127.0.0.1:9\nroutes:\n  rpc: {method: POST, path: /RPC2, format: xmlrpc}\n", "/RPC2", "text/xml", 200,
			[]string{"<fault>", "<name>faultString</name>", "signpost is serving its limit of 1 requests at once", "<name>error</name><value><string>overloaded</string>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := rules.Parse(tc.name+".yaml", []byte(tc.rules))
			if err != nil {
				t.Fatal(err)
			}
			h := &held{arrived: make(chan struct{}, 1), release: make(chan struct{})}
			p, err := New(cfg, Options{Transport: h, MaxConcurrent: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				serveOn(p, httptest.NewRequest("POST", tc.target, strings.NewReader("{}")))
			}()
			<-h.arrived
			w := serveOn(p, httptest.NewRequest("POST", tc.target, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"m"}`)))
			close(h.release)
			<-done
			body := w.Body.String()
			if w.Code != tc.status || !strings.HasPrefix(w.Header().Get("Content-Type"), tc.ctype) || w.Header().Get("Retry-After") != "1" {
				t.Errorf("refused: %d %q, Retry-After %q; want %d %s, Retry-After 1", w.Code, w.Header().Get("Content-Type"), w.Header().Get("Retry-After"), tc.status, tc.ctype)
			}
			for _, s := range tc.want {
				if !strings.Contains(body, s) {
					t.Errorf("refused with %s; want it to hold %s", body, s)
				}
			}
		})
	}
}

// TestDurationByOutcome checks the request-duration histogram's labels.
func TestDurationByOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rt      http.RoundTripper
		method  string
		target  string
		route   string
		outcome string
	}{
		{"success", &roundTrip{status: 200, body: []byte(`{}`)}, "PATCH", "/tickets/T-1", "update_ticket", metrics.OutcomeSuccess},
		{"rewritten", &roundTrip{status: 400, body: []byte(`{"error":"Invalid status"}`)}, "PATCH", "/tickets/T-1", "update_ticket", metrics.OutcomeRewritten},
		{"wrapped", &roundTrip{status: 400, body: []byte(`{"error":"Other"}`)}, "PATCH", "/tickets/T-1", "update_ticket", metrics.OutcomeWrapped},
		{"failed", &roundTrip{err: errors.New("connection refused")}, "GET", "/elsewhere", "(unrouted)", metrics.OutcomeFailed},
	} {
		f := newProxy(t, tc.rt)
		f.do(tc.method, tc.target, `{"status":"open"}`)
		if n, _ := f.histogram(t, "signpost_request_duration_seconds", "route", tc.route, "outcome", tc.outcome); n != 1 {
			t.Errorf("%s: %d observations for route=%s outcome=%s; want 1", tc.name, n, tc.route, tc.outcome)
		}
	}
	f := newProxyWith(t, &roundTrip{status: 404, body: []byte(`nope`)}, rules.Passthrough)
	f.do("GET", "/tickets/T-1", "")
	if n, _ := f.histogram(t, "signpost_request_duration_seconds", "route", "get_ticket", "outcome", metrics.OutcomePassthrough); n != 1 {
		t.Errorf("passthrough: %d observations; want 1", n)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "net/http: timeout awaiting response headers" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestUpstreamFailure: signpost's answer to an exchange that failed says
// whether the call may have taken effect. Only a request none of whose
// bytes left is said not to have; a lost answer to one that may be
// repeated (GET, PUT, or with an idempotency key) is retryable, and one
// to a PATCH is not: the agent must check first.
func TestUpstreamFailure(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, tc := range []struct {
		err       error
		method    string
		header    []string
		status    int
		code      string
		retryable bool
		says      string
	}{
		{refused, "PATCH", nil, 502, "upstream_unavailable", true, "did not take effect"},
		{reset, "PATCH", nil, 502, "upstream_unavailable", false, "may or may not have taken effect"},
		{io.EOF, "PATCH", nil, 502, "upstream_unavailable", false, "may or may not have taken effect"},
		{reset, "PATCH", []string{"Idempotency-Key", "k1"}, 502, "upstream_unavailable", true, "same effect"},
		{reset, "GET", nil, 502, "upstream_unavailable", true, "same effect"},
		{reset, "PUT", nil, 502, "upstream_unavailable", true, "same effect"},
		{upstream.InvalidStatus(99), "GET", nil, 502, "upstream_invalid_response", true, "status 099, which HTTP does not define; the call may be repeated with the same effect"},
		{upstream.InvalidStatus(99), "PATCH", nil, 502, "upstream_invalid_response", false, "status 099, which HTTP does not define; the call may or may not have taken effect"},
		{timeoutErr{}, "GET", nil, 504, "upstream_timeout", true, "did not answer in time; the call may be repeated with the same effect"},
		{timeoutErr{}, "PATCH", nil, 504, "upstream_timeout", true, "may or may not have taken effect"},
		{context.DeadlineExceeded, "PATCH", nil, 504, "upstream_timeout", true, "may or may not have taken effect"},
	} {
		name := fmt.Sprintf("%s %v %v", tc.method, tc.header, tc.err)
		f := newProxy(t, &roundTrip{err: tc.err})
		target, route := "/tickets/T-1", "update_ticket"
		if tc.method != "PATCH" {
			target, route = "/elsewhere", metrics.Unrouted
		}
		r := httptest.NewRequest(tc.method, target, strings.NewReader(`{"status":"open"}`))
		for i := 0; i+1 < len(tc.header); i += 2 {
			r.Header.Set(tc.header[i], tc.header[i+1])
		}
		w := httptest.NewRecorder()
		f.p.ServeHTTP(w, r)
		var got struct {
			Error     string `json:"error"`
			Message   string `json:"message"`
			Retryable bool   `json:"retryable"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != tc.status || got.Error != tc.code ||
			got.Retryable != tc.retryable || !strings.Contains(got.Message, tc.says) {
			t.Errorf("%s: got %d %s; want %d with code %s, retryable %v, saying %q", name, w.Code, w.Body, tc.status, tc.code, tc.retryable, tc.says)
		}
		if strings.Contains(w.Body.String(), "127.0.0.1") || strings.Contains(w.Body.String(), "net/http") {
			t.Errorf("body leaks the transport error: %s", w.Body)
		}
		if got := w.Result().Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type %q", got)
		}
		if c := f.counter(t, "signpost_upstream_failures_total", "route", route, "code", tc.code); c != 1 {
			t.Errorf("%s: failures counter = %v; want 1", name, c)
		}
	}
}

// stalledBody sends a little of an error body and then nothing, until it is
// closed.
type stalledBody struct{}

func (stalledBody) RoundTrip(r *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	go pw.Write([]byte(`{"error":"Invalid`))
	return &http.Response{StatusCode: 400, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
}

func TestStalledErrorBodyIsBounded(t *testing.T) {
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Transport: stalledBody{}, UpstreamTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { recover() }() // ReverseProxy aborts the broken copy with a panic
		p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PATCH", "/tickets/T-1", strings.NewReader(`{}`)))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a stalled error body held the request past the upstream timeout")
	}
}

func TestAccessLog(t *testing.T) {
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	p, err := New(cfg, Options{Transport: &roundTrip{status: 200, body: []byte(`{}`)}, AccessLog: true,
		Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req := httptest.NewRequest("GET", "/tickets/T-1?x=1", nil)
	req.Header.Set(RequestIDHeader, "trace-7")
	p.ServeHTTP(httptest.NewRecorder(), req)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("access log %q: %v", buf.String(), err)
	}
	for k, want := range map[string]any{"msg": "request", "request_id": "trace-7", "method": "GET", "path": "/tickets/T-1",
		"route": "get_ticket", "status": float64(200), "outcome": "success"} {
		if line[k] != want {
			t.Errorf("%s = %v; want %v", k, line[k], want)
		}
	}
	if _, ok := line["duration_ms"].(float64); !ok {
		t.Errorf("no duration_ms in %v", line)
	}
}
