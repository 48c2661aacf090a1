package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/rules"
)

// fixedUpstream answers every request in process with the same response,
// for benchmarks of the general path, which takes a RoundTripper.
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

// loopbackUpstream answers every request on a loopback connection with the
// same response, parsing no more of the request than its framing needs and
// allocating nothing per request, so that a benchmark's figures are the
// proxy's own and its network.
func loopbackUpstream(b *testing.B, status int, body []byte) *url.URL {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	res := []byte(fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), len(body), body))
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answerEach(c, res)
		}
	}()
	b.Cleanup(func() { ln.Close() })
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}

// answerEach writes res once for every request read from c.
func answerEach(c net.Conn, res []byte) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	n := 0
	for {
		end := bytes.Index(buf[:n], []byte("\r\n\r\n"))
		if end < 0 {
			m, err := c.Read(buf[n:])
			if err != nil {
				return
			}
			n += m
			continue
		}
		size := end + 4
		if i := bytes.Index(buf[:end], []byte("Content-Length: ")); i >= 0 {
			j := i + len("Content-Length: ")
			k := bytes.IndexByte(buf[j:end+2], '\r')
			length, _ := strconv.Atoi(string(buf[j : j+k]))
			size += length
		}
		for n < size {
			m, err := c.Read(buf[n:])
			if err != nil {
				return
			}
			n += m
		}
		if _, err := c.Write(res); err != nil {
			return
		}
		n = copy(buf, buf[size:n])
	}
}

func serveLoop(b *testing.B, h http.Handler, method, target, body string, want int) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("status %d; want %d: %s", w.Code, want, w.Body)
		}
	}
}

// benchProxy serves testdata/rules.yaml in front of upstream.
func benchProxy(b *testing.B, upstream *url.URL, opts Options) *Proxy {
	b.Helper()
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	opts.Upstream = upstream
	p, err := New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	return p
}

// BenchmarkSuccessPath puts a plain httputil.ReverseProxy with a tuned
// Transport and signpost side by side on a 200 from an upstream on
// loopback, streamed through untouched.
func BenchmarkSuccessPath(b *testing.B) {
	up := loopbackUpstream(b, 200, okBody)
	b.Run("httputil", func(b *testing.B) {
		t := NewTransport(5 * time.Second)
		defer t.CloseIdleConnections()
		rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(up); pr.SetXForwarded() }, Transport: t}
		serveLoop(b, rp, "PATCH", "/tickets/T-8841", `{"status":"open"}`, 200)
	})
	b.Run("signpost", func(b *testing.B) {
		serveLoop(b, benchProxy(b, up, Options{}), "PATCH", "/tickets/T-8841", `{"status":"open"}`, 200)
	})
	b.Run("signpost-unrouted", func(b *testing.B) {
		serveLoop(b, benchProxy(b, up, Options{}), "PUT", "/elsewhere", `{"status":"open"}`, 200)
	})
}

// BenchmarkRewritePath measures a 400 from an upstream on loopback that
// signpost matches, validates and rewrites, through the handler: without
// metrics, and with them, where a background worker also counts each
// body's tokens (remembered for a body seen before).
func BenchmarkRewritePath(b *testing.B) {
	up := loopbackUpstream(b, 400, []byte(`{"error":"Invalid status"}`))
	b.Run("bare", func(b *testing.B) {
		serveLoop(b, benchProxy(b, up, Options{}), "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400)
	})
	b.Run("metrics", func(b *testing.B) {
		f := newProxy(b, nil)
		p := benchProxy(b, up, Options{Metrics: f.m})
		serveLoop(b, p, "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400)
	})
	b.Run("logged", func(b *testing.B) {
		f := newProxy(b, nil)
		p := benchProxy(b, up, Options{Metrics: f.m, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
		serveLoop(b, p, "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400)
	})
	// As deployed in front of many agents: metrics, the log, and each
	// wrong call the first of a caller of its own, so that the callers
	// remembered (10,000 by default) turn over.
	b.Run("agents", func(b *testing.B) {
		f := newProxy(b, nil)
		agents(b, benchProxy(b, up, Options{Metrics: f.m, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
	})
	// The same in observe mode: the 400 passed through, what enforce would
	// have answered logged, and each exchange recorded.
	b.Run("observed", func(b *testing.B) {
		f := newProxy(b, nil)
		p := benchProxy(b, up, Options{Metrics: f.m, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
		p.cfg.ObserveAll()
		agents(b, p)
	})
}

// agents sends the wrong PATCH through p, each time from a caller of its
// own.
func agents(b *testing.B, p *Proxy) {
	{
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			req := httptest.NewRequest("PATCH", "/tickets/T-8841", strings.NewReader(`{"status":"OPEN"}`))
			req.Header.Set("X-Session-Id", "agent-"+strconv.Itoa(n))
			w := httptest.NewRecorder()
			p.ServeHTTP(w, req)
			if w.Code != 400 {
				b.Fatalf("status %d; want 400: %s", w.Code, w.Body)
			}
		}
	}
}

// discard is a ResponseWriter that keeps nothing of the body, so that a
// benchmark's memory is the proxy's alone.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkStreamLargeBody streams 64 KiB and 1 MiB successes through the
// handler: the memory per request must not grow with the body.
func BenchmarkStreamLargeBody(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		up := loopbackUpstream(b, 200, bytes.Repeat([]byte("a"), size))
		p := benchProxy(b, up, Options{})
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				p.ServeHTTP(&discard{h: http.Header{}}, httptest.NewRequest("GET", "/big", nil))
			}
		})
	}
}

// BenchmarkServer sends requests over one kept-alive loopback connection
// to the proxy served by net/http's server and by signpost's front, each in
// front of a loopback upstream: the whole server side of a request, parsing
// and framing included, for a 200 passed through and a 400 rewritten.
func BenchmarkServer(b *testing.B) {
	p := benchProxy(b, loopbackUpstream(b, 200, okBody), Options{})
	rw := benchProxy(b, loopbackUpstream(b, 400, []byte(`{"error":"Invalid status"}`)), Options{})
	quiet := log.New(io.Discard, "", 0)
	serve := map[string]func(net.Listener, http.Handler) func(){
		"net/http": func(ln net.Listener, h http.Handler) func() {
			s := &http.Server{Handler: h, ErrorLog: quiet}
			go s.Serve(ln)
			return func() { s.Close() }
		},
		"front": func(ln net.Listener, h http.Handler) func() {
			s := front.New(&http.Server{Handler: h, ErrorLog: quiet})
			go s.Serve(ln)
			return func() { s.Close() }
		},
	}
	paths := []struct {
		name    string
		handler http.Handler
		request string
		status  int
	}{
		{"success", p, "GET /tickets/T-8841 HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n", 200},
		{"rewrite", rw, "PATCH /tickets/T-8841 HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"status\":\"OPEN\"}", 400},
	}
	for _, path := range paths {
		for _, server := range []string{"net/http", "front"} {
			b.Run(path.name+"/"+server, func(b *testing.B) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer serve[server](ln, path.handler)()
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				req := []byte(path.request)
				br := bufio.NewReader(c)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Write(req); err != nil {
						b.Fatal(err)
					}
					res, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, res.Body); err != nil || res.StatusCode != path.status {
						b.Fatalf("status %d, %v", res.StatusCode, err)
					}
				}
			})
		}
	}
}
