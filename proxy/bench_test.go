package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// fixedUpstream answers every request in process with the same response,
// so that a benchmark measures the proxy, not a network.
type fixedUpstream struct {
	status int
	body   []byte
}

func (u fixedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: u.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}, "Content-Length": {itoa(len(u.body))}},
		Body:          io.NopCloser(bytes.NewReader(u.body)),
		ContentLength: int64(len(u.body)), Request: r}, nil
}

var okBody = []byte(`{"ticket_id":"T-1200","state":"pending","changed":"2026-04-02T10:00:00Z"}`)

func serveLoop(b *testing.B, h http.Handler, method, target, body string, want int) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("status %d; want %d", w.Code, want)
		}
	}
}

// BenchmarkSuccessPath puts a plain httputil.ReverseProxy and signpost side
// by side on a 200 that streams through untouched.
func BenchmarkSuccessPath(b *testing.B) {
	up := fixedUpstream{200, okBody}
	target, _ := url.Parse("http://upstream.test")
	b.Run("httputil", func(b *testing.B) {
		rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.SetXForwarded() }, Transport: up}
		serveLoop(b, rp, "PATCH", "/tickets/T-8841", `{"status":"open"}`, 200)
	})
	b.Run("signpost", func(b *testing.B) {
		serveLoop(b, newProxy(b, up).p, "PATCH", "/tickets/T-8841", `{"status":"open"}`, 200)
	})
	b.Run("signpost-unrouted", func(b *testing.B) {
		serveLoop(b, newProxy(b, up).p, "PUT", "/elsewhere", `{"status":"open"}`, 200)
	})
}

// BenchmarkRewritePath measures a 400 that signpost rewrites, end to end
// through the handler: without metrics, and with them, where a background
// worker also tokenizes each body (its allocations count here too).
func BenchmarkRewritePath(b *testing.B) {
	up := fixedUpstream{400, []byte(`{"error":"Invalid status"}`)}
	b.Run("bare", func(b *testing.B) {
		cfg, err := rules.Load("testdata/rules.yaml")
		if err != nil {
			b.Fatal(err)
		}
		p, err := New(cfg, Options{Transport: up})
		if err != nil {
			b.Fatal(err)
		}
		serveLoop(b, p, "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400)
	})
	b.Run("metrics", func(b *testing.B) {
		serveLoop(b, newProxy(b, up).p, "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400)
	})
}
