package proxy

// Tests of the direct path's exchanges with the upstream, each held to what
// the general path, httputil.ReverseProxy over http.Transport, does.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/rules"
)

// bothPaths builds a direct and a general proxy, as handlers, in front of
// addr, with the given upstream timeout.
func bothPaths(t *testing.T, addr string, timeout time.Duration) (direct, general *Proxy) {
	t.Helper()
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u := &url.URL{Scheme: "http", Host: addr}
	direct, err = New(cfg, Options{Upstream: u, UpstreamTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	transport := NewTransport(timeout)
	general, err = New(cfg, Options{Upstream: u, Transport: transport, UpstreamTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if direct.conns == nil || general.conns != nil {
		t.Fatal("paths not as expected")
	}
	t.Cleanup(func() { direct.Close(); general.Close(); transport.CloseIdleConnections() })
	return direct, general
}

func serveOn(p *Proxy, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// TestDirectPathSendsNonIdempotentRequestsOnce sends a POST, and a PATCH
// whose body signpost read, on a reused connection whose upstream reads the
// request, as if it acted on it, and ends the connection without
// answering: with a close, with a reset, or with a reset having read only
// the head. Neither path may send it again, as http.Transport does not: a
// reset says only that the peer's socket is gone, not that it never read
// the request.
func TestDirectPathSendsNonIdempotentRequestsOnce(t *testing.T) {
	for _, tc := range []struct{ method, target, body, end string }{
		{"POST", "/elsewhere", "", "close"},
		{"POST", "/elsewhere", "", "reset"},
		{"POST", "/elsewhere", "twelve bytes", "reset"},
		{"POST", "/elsewhere", "twelve bytes", "reset, head read"},
		{"PATCH", "/tickets/T-1", `{"status":"open"}`, "close"}, // routed: its body read, and so sendable again
		{"PATCH", "/tickets/T-1", `{"status":"open"}`, "reset"},
	} {
		for _, path := range []string{"direct", "general"} {
			t.Run(fmt.Sprintf("%s %s %q %s", path, tc.method, tc.body, tc.end), func(t *testing.T) {
				var posts atomic.Int32
				addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
					for i := 0; ; i++ {
						req, err := http.ReadRequest(br)
						if err != nil {
							return
						}
						if tc.end != "reset, head read" {
							io.Copy(io.Discard, req.Body)
						}
						if req.Method == tc.method {
							posts.Add(1)
							if i > 0 {
								// Acted on it, then died without answering.
								if tc.end != "close" {
									c.(*net.TCPConn).SetLinger(0)
								}
								c.Close()
								return
							}
						}
						io.WriteString(c, okResponse)
					}
				})
				direct, general := bothPaths(t, addr, 2*time.Second)
				p := map[string]*Proxy{"direct": direct, "general": general}[path]
				if w := serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil)); w.Code != 200 {
					t.Fatalf("warm-up GET: %d", w.Code)
				}
				var body io.Reader // nil: an empty body, as servers give one (http.NoBody)
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				w := serveOn(p, httptest.NewRequest(tc.method, tc.target, body))
				if n := posts.Load(); n != 1 || w.Code != http.StatusBadGateway {
					t.Errorf("%s path: upstream received one non-idempotent %s %d times, and the caller got %d; want once, and 502",
						path, tc.method, n, w.Code)
				}
			})
		}
	}
}

// TestDirectPathDropsBytesSentOnAnIdleConnection has the upstream send an
// answer nobody asked for on a connection idle after a complete exchange:
// the next caller must get its own answer, not those bytes, as
// http.Transport drops such a connection.
func TestDirectPathDropsBytesSentOnAnIdleConnection(t *testing.T) {
	for _, path := range []string{"direct", "general"} {
		t.Run(path, func(t *testing.T) {
			unasked := make(chan struct{}, 1)
			addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
				for i := 0; ; i++ {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					io.WriteString(c, okResponse)
					if i == 0 {
						time.Sleep(5 * time.Millisecond)
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n\"stale\"")
						unasked <- struct{}{}
					}
				}
			})
			direct, general := bothPaths(t, addr, 2*time.Second)
			p := map[string]*Proxy{"direct": direct, "general": general}[path]
			if w := serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil)); w.Body.String() != "{}" {
				t.Fatalf("first: %d %q", w.Code, w.Body)
			}
			// After the upstream's second write, however briefly the
			// connection was idle since.
			<-unasked
			time.Sleep(5 * time.Millisecond)
			w := serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
			if w.Body.String() != "{}" {
				t.Errorf("%s path: second caller got %d %q; want its own answer {}", path, w.Code, w.Body)
			}
		})
	}
}

// slowReader yields one piece every gap.
type slowReader struct {
	pieces int
	gap    time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.pieces == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.gap)
	s.pieces--
	return copy(p, "0123456789"), nil
}

// TestDirectPathTimesTheHeadersFromTheEndOfAStreamedBody streams a body
// for longer than the upstream timeout, which bounds the wait for the
// answer's headers: as on the general path, the wait starts once the body
// is sent.
func TestDirectPathTimesTheHeadersFromTheEndOfAStreamedBody(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", int(n/10)))
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	direct, general := bothPaths(t, u.Host, 200*time.Millisecond)
	for name, p := range map[string]*Proxy{"direct": direct, "general": general} {
		r := httptest.NewRequest("POST", "/elsewhere", &slowReader{pieces: 6, gap: 80 * time.Millisecond})
		r.ContentLength = -1
		w := serveOn(p, r)
		t.Logf("%s: %d %q", name, w.Code, w.Body.String())
		if w.Code != 200 {
			t.Errorf("%s path: a 480ms upload with a 200ms header timeout answered %d", name, w.Code)
		}
	}
}

// TestDirectPathPassesOnAnAnswerSentBeforeTheBodyWasRead has the upstream
// answer 413 at once and close, without reading a large body: the caller
// must get the 413, as http.Transport gives it, and not a 502 saying the
// call did not take effect.
func TestDirectPathPassesOnAnAnswerSentBeforeTheBodyWasRead(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, "too large")
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	direct, general := bothPaths(t, u.Host, 2*time.Second)
	body := bytes.Repeat([]byte("z"), 32<<20)
	for _, name := range []string{"general", "direct"} {
		p := map[string]*Proxy{"direct": direct, "general": general}[name]
		r := httptest.NewRequest("POST", "/elsewhere", bytes.NewReader(body))
		w := serveOn(p, r)
		t.Logf("%s: %d %.120q", name, w.Code, w.Body.String())
		if w.Code != 413 {
			t.Errorf("%s path answered %d; the upstream answered 413", name, w.Code)
		}
	}
}

// TestDirectPathDropsWhatTwoConnectionLinesName: an answer whose Connection
// field comes in two lines, one of them close, reaches the caller as the
// general path passes it on.
func TestDirectPathDropsWhatTwoConnectionLinesName(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: X-Internal\r\nX-Internal: secret\r\nContent-Length: 2\r\n\r\n{}")
	})
	direct, general := bothPaths(t, addr, 2*time.Second)
	d := serveOn(direct, httptest.NewRequest("GET", "/elsewhere", nil))
	g := serveOn(general, httptest.NewRequest("GET", "/elsewhere", nil))
	if a, b := d.Header().Get("X-Internal"), g.Header().Get("X-Internal"); a != b {
		t.Errorf("X-Internal: direct %q, general %q", a, b)
	}
}

// TestDirectPathPassesOnEarlyHints: an upstream's 103 Early Hints before
// its answer reach the caller on both paths.
func TestDirectPathPassesOnEarlyHints(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"+okResponse)
		}
	})
	u := "http://" + addr
	direct, general := proxyPair(t, u)
	for _, base := range []string{general.URL, direct.URL} {
		var hints atomic.Int32
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			Got1xxResponse: func(code int, h textproto.MIMEHeader) error { hints.Add(1); return nil },
		})
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/elsewhere", nil)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		name := map[bool]string{true: "direct", false: "general"}[base == direct.URL]
		if hints.Load() != 1 {
			t.Errorf("%s path: caller got %d 1xx responses; the upstream sent one 103", name, hints.Load())
		}
	}
}

// TestDirectPathGivesAReusedConnectionTheWholeTimeout: a reused connection
// keeps the deadline of its last exchange while three quarters of the
// timeout remain; an answer that comes within the timeout must still be
// waited for.
func TestDirectPathGivesAReusedConnectionTheWholeTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for i := 0; ; i++ {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			if i == 1 {
				time.Sleep(1800 * time.Millisecond) // within the 2s timeout
			}
			io.WriteString(c, okResponse)
		}
	})
	direct, general := bothPaths(t, addr, timeout)
	for name, p := range map[string]*Proxy{"direct": direct, "general": general} {
		serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
		time.Sleep(400 * time.Millisecond) // 1.6s of the old deadline left: >= 3/4, kept
		start := time.Now()
		w := serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
		if w.Code != 200 {
			t.Errorf("%s path: an answer 1.8s into a 2s timeout got %d after %v", name, w.Code, time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestDirectPathKeepsAConnectionPastItsLastDeadline: a connection idle past
// probeAfter is probed before reuse; the deadline its last exchange left,
// run out since, must not fail the probe of a healthy connection.
func TestDirectPathKeepsAConnectionPastItsLastDeadline(t *testing.T) {
	addr, accepted := answeringUpstream(t)
	p := directProxy(t, addr, 300*time.Millisecond)
	serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
	time.Sleep(1200 * time.Millisecond) // idle past probeAfter and past the old deadline
	serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
	if n := accepted.Load(); n != 1 {
		t.Errorf("two requests 1.2s apart opened %d connections to a healthy upstream; want 1", n)
	}
}

// TestDirectPathAnnouncesTrailers: an upstream's trailers are announced in
// a Trailer field before the body, as the general path announces them.
func TestDirectPathAnnouncesTrailers(t *testing.T) {
	up := echoUpstream(t)
	direct, general := proxyPair(t, up.URL)
	raw := "GET /elsewhere HTTP/1.1\r\nHost: a\r\nX-Answer: trailers\r\n\r\n"
	for name, base := range map[string]string{"direct": direct.URL, "general": general.URL} {
		c, err := net.Dial("tcp", base[len("http://"):])
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, raw)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		announced := len(res.Trailer)
		io.ReadAll(res.Body)
		c.Close()
		t.Logf("%s: announced %d, trailers after body %v", name, announced, res.Trailer)
		if announced == 0 {
			t.Errorf("%s path: no Trailer field announced the trailers", name)
		}
	}
}

// TestDirectPathBoundsTheAnswersHead has the upstream answer with a head
// of 11 MiB: both paths must refuse it, as http.Transport refuses a head
// over 10 MiB, rather than hold it all.
func TestDirectPathBoundsTheAnswersHead(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		bw := bufio.NewWriter(c)
		bw.WriteString("HTTP/1.1 200 OK\r\n")
		line := "X-Filler: " + strings.Repeat("f", 1000) + "\r\n"
		for range (11 << 20) / len(line) {
			if _, err := bw.WriteString(line); err != nil {
				return
			}
		}
		bw.WriteString(okResponse[len("HTTP/1.1 200 OK\r\n"):])
		bw.Flush()
	})
	direct, general := bothPaths(t, addr, 5*time.Second)
	for name, p := range map[string]*Proxy{"direct": direct, "general": general} {
		w := serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
		if w.Code != http.StatusBadGateway {
			t.Errorf("%s path: an answer with an 11 MiB head got %d %.80q; want 502", name, w.Code, w.Body.String())
		}
	}
}

// TestDirectPathFlushesTheHeadBeforeAStreamedBody streams a body over
// 600 ms: on both paths the upstream must have the head at once, as
// http.Transport flushes it, so that it can answer the head alone, not
// once 4 KiB of body or its end have come.
func TestDirectPathFlushesTheHeadBeforeAStreamedBody(t *testing.T) {
	heads := make(chan time.Time, 2)
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			heads <- time.Now()
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, okResponse)
		}
	})
	direct, general := bothPaths(t, addr, 2*time.Second)
	for _, chunked := range []bool{false, true} {
		for name, p := range map[string]*Proxy{"direct": direct, "general": general} {
			r := httptest.NewRequest("POST", "/elsewhere", &slowReader{pieces: 6, gap: 100 * time.Millisecond})
			r.ContentLength = 60
			if chunked {
				r.ContentLength = -1
			}
			sent := time.Now()
			w := serveOn(p, r)
			at := <-heads
			if d := at.Sub(sent); d > 300*time.Millisecond || w.Code != 200 {
				t.Errorf("%s path, chunked %v: the head reached the upstream %v after the request began, and the caller got %d; want it at once, and 200",
					name, chunked, d.Round(time.Millisecond), w.Code)
			}
		}
	}
}

// TestDirectPathAnswersAStatusBelow100 has the upstream answer 099: no
// caller can be sent that, and both paths answer 502
// upstream_invalid_response rather than panic in WriteHeader.
func TestDirectPathAnswersAStatusBelow100(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n")
		}
	})
	direct, general := bothPaths(t, addr, 2*time.Second)
	for name, p := range map[string]*Proxy{"direct": direct, "general": general} {
		w := serveOn(p, httptest.NewRequest("GET", "/elsewhere", nil))
		if w.Code != http.StatusBadGateway || !strings.HasPrefix(w.Body.String(), `{"error":"upstream_invalid_response"`) {
			t.Errorf("%s path: got %d %s; want 502 upstream_invalid_response", name, w.Code, w.Body)
		}
	}
}

// cutBody is a request body that fails once its context is done, as a
// caller's body does when the caller goes.
type cutBody struct{ ctx context.Context }

func (b cutBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, io.ErrUnexpectedEOF
}

// TestACallerThatLeftGetsNoAnswerNobodyWrote: when the caller's context
// ends, while the upstream takes its time or while its body is read, both
// paths answer 499 request_cancelled, never an empty 200 by default.
func TestACallerThatLeftGetsNoAnswerNobodyWrote(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if req, err := http.ReadRequest(br); err == nil {
			io.Copy(io.Discard, req.Body)
		}
		io.Copy(io.Discard, br) // no answer, until signpost lets go
	})
	direct, general := bothPaths(t, addr, 5*time.Second)
	for _, body := range []bool{false, true} {
		for name, p := range map[string]*Proxy{"direct": direct, "general": general} {
			ctx, cancel := context.WithCancel(context.Background())
			r := httptest.NewRequest("GET", "/elsewhere", nil)
			if body {
				r = httptest.NewRequest("POST", "/elsewhere", cutBody{ctx})
				r.ContentLength = 10
			}
			time.AfterFunc(50*time.Millisecond, cancel)
			w := serveOn(p, r.WithContext(ctx))
			if w.Code != statusCallerClosed || !strings.HasPrefix(w.Body.String(), `{"error":"request_cancelled"`) {
				t.Errorf("%s path, body %v: got %d %q; want 499 request_cancelled", name, body, w.Code, w.Body)
			}
		}
	}
}
