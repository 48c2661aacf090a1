package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// seen is what an upstream received of one request.
type seen struct {
	Method, URI, Host string
	Header            http.Header
	Body              string
	Chunked           bool
	Length            int64
}

// echoUpstream answers every request with a JSON account of what it
// received, and an answer shaped by the request's X-Answer header.
func echoUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := seen{Method: r.Method, URI: r.RequestURI, Host: r.Host, Header: r.Header, Body: string(body),
			Chunked: slices.Contains(r.TransferEncoding, "chunked"), Length: r.ContentLength}
		out, _ := json.Marshal(s)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		switch r.Header.Get("X-Answer") {
		case "hop-by-hop":
			h.Set("Connection", "X-Internal")
			h.Set("X-Internal", "upstream only")
			h.Set("Keep-Alive", "timeout=5")
			h.Set("Proxy-Authenticate", "Basic")
		case "trailers":
			h.Set("Trailer", "X-Checksum")
			w.WriteHeader(http.StatusOK)
			w.Write(out)
			w.(http.Flusher).Flush()
			h.Set("X-Checksum", "abc")
			return
		}
		w.Write(out)
	}))
	t.Cleanup(up.Close)
	return up
}

// proxyPair serves the test rules in front of upstream twice: directly, and
// through httputil.ReverseProxy, the general path.
func proxyPair(t *testing.T, upstream string) (direct, general *httptest.Server) {
	t.Helper()
	u, _ := url.Parse(upstream)
	serve := func(transport http.RoundTripper) *httptest.Server {
		cfg, err := rules.Load("testdata/rules.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(cfg, Options{Upstream: u, Transport: transport, UpstreamTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if (p.conns != nil) != (transport == nil) {
			t.Fatalf("direct path in use = %v with transport %v", p.conns != nil, transport)
		}
		s := httptest.NewServer(p)
		t.Cleanup(func() { s.Close(); p.Close() })
		return s
	}
	transport := NewTransport(2 * time.Second)
	t.Cleanup(transport.CloseIdleConnections)
	return serve(nil), serve(transport)
}

// chunkedBody is a request body of unknown length, so the client sends it
// chunked.
type chunkedBody struct{ io.Reader }

// TestDirectPathForwardsAsTheGeneralPathDoes sends the same requests
// through both paths and compares what the upstream received and what the
// caller got back.
func TestDirectPathForwardsAsTheGeneralPathDoes(t *testing.T) {
	up := echoUpstream(t)
	direct, general := proxyPair(t, up.URL)
	tests := []struct {
		name, method, target, body string
		header                     http.Header
		chunked                    bool
	}{
		{name: "get", method: "GET", target: "/tickets/T-1"},
		{name: "query kept as sent", method: "GET", target: "/search?q=a%2Fb&x=1&x=2"},
		{name: "escaped path kept as sent", method: "GET", target: "/files/a%2Fb/c%20d"},
		{name: "hop-by-hop headers dropped", method: "GET", target: "/tickets/T-1", header: http.Header{
			"Connection": {"X-Secret, keep-alive"}, "X-Secret": {"caller only"}, "Keep-Alive": {"timeout=5"},
			"Proxy-Authorization": {"Basic Zm9vOmJhcg=="}, "Proxy-Connection": {"keep-alive"}, "Te": {"trailers, deflate"},
		}},
		{name: "forwarding headers set from the connection", method: "GET", target: "/tickets/T-1", header: http.Header{
			"X-Forwarded-For": {"6.6.6.6"}, "X-Forwarded-Host": {"evil.example"}, "X-Forwarded-Proto": {"https"},
			"Forwarded": {"for=6.6.6.6"},
		}},
		{name: "repeated headers kept in order", method: "GET", target: "/tickets/T-1", header: http.Header{
			"X-Tag": {"one", "two", "three"}, "Cookie": {"a=1", "b=2"},
		}},
		{name: "buffered body on a routed request", method: "PATCH", target: "/tickets/T-1", body: `{"status":"open"}`},
		{name: "body with a length, unrouted", method: "POST", target: "/elsewhere", body: strings.Repeat("x", 100<<10)},
		{name: "chunked body, unrouted", method: "POST", target: "/elsewhere", body: strings.Repeat("y", 70<<10), chunked: true},
		{name: "chunked body, routed and buffered", method: "PATCH", target: "/tickets/T-1", body: `{"status":"open"}`, chunked: true},
		{name: "empty POST", method: "POST", target: "/elsewhere"},
		{name: "delete", method: "DELETE", target: "/tickets/T-1"},
		{name: "head", method: "HEAD", target: "/tickets/T-1"},
		{name: "hop-by-hop response headers dropped", method: "GET", target: "/tickets/T-1", header: http.Header{"X-Answer": {"hop-by-hop"}}},
		{name: "trailers passed on", method: "GET", target: "/tickets/T-1", header: http.Header{"X-Answer": {"trailers"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do := func(base string) (*http.Response, []byte) {
				var body io.Reader = strings.NewReader(tt.body)
				if tt.chunked {
					body = chunkedBody{body}
				}
				if tt.body == "" && !tt.chunked {
					body = nil
				}
				req, _ := http.NewRequest(tt.method, base+tt.target, body)
				for k, vv := range tt.header {
					req.Header[k] = vv
				}
				res, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				return res, b
			}
			dres, dbody := do(direct.URL)
			gres, gbody := do(general.URL)
			if dres.StatusCode != gres.StatusCode {
				t.Fatalf("status: direct %d, general %d", dres.StatusCode, gres.StatusCode)
			}
			for _, h := range []http.Header{dres.Header, gres.Header} {
				h.Del("Date")
				h.Del(RequestIDHeader)
				// The echoed bodies carry each path's own request id and
				// address, whose lengths may differ; the bodies are
				// compared below.
				h.Del("Content-Length")
			}
			if !headersEqual(dres.Header, gres.Header) {
				t.Errorf("response headers differ:\ndirect  %v\ngeneral %v", dres.Header, gres.Header)
			}
			if !headersEqual(dres.Trailer, gres.Trailer) {
				t.Errorf("trailers differ:\ndirect  %v\ngeneral %v", dres.Trailer, gres.Trailer)
			}
			if tt.method == "HEAD" {
				return
			}
			var d, g seen
			if err := json.Unmarshal(dbody, &d); err != nil {
				t.Fatalf("direct body %q: %v", dbody, err)
			}
			if err := json.Unmarshal(gbody, &g); err != nil {
				t.Fatalf("general body %q: %v", gbody, err)
			}
			for _, s := range []struct {
				seen  *seen
				proxy string
			}{{&d, direct.URL}, {&g, general.URL}} {
				s.seen.Header.Del(RequestIDHeader)
				if got, want := s.seen.Header.Get("X-Forwarded-Host"), strings.TrimPrefix(s.proxy, "http://"); got != want {
					t.Errorf("X-Forwarded-Host = %q; want the host the caller asked for, %q", got, want)
				}
				s.seen.Header.Del("X-Forwarded-Host")
			}
			if d.Method != g.Method || d.URI != g.URI || d.Host != g.Host || d.Body != g.Body || d.Chunked != g.Chunked || d.Length != g.Length {
				t.Errorf("upstream saw\ndirect  %s %s host=%s chunked=%v length=%d body=%.40q\ngeneral %s %s host=%s chunked=%v length=%d body=%.40q",
					d.Method, d.URI, d.Host, d.Chunked, d.Length, d.Body, g.Method, g.URI, g.Host, g.Chunked, g.Length, g.Body)
			}
			if !headersEqual(d.Header, g.Header) {
				t.Errorf("upstream headers differ:\ndirect  %v\ngeneral %v", d.Header, g.Header)
			}
			if tt.body != "" && d.Body != tt.body {
				t.Errorf("upstream got a body of %d bytes, want the %d sent", len(d.Body), len(tt.body))
			}
			for _, k := range []string{"X-Secret", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Connection", "Forwarded"} {
				if v, ok := d.Header[k]; ok {
					t.Errorf("upstream received %s: %q; it concerns the caller's connection only", k, v)
				}
			}
			if got := d.Header.Get("X-Forwarded-For"); got != "127.0.0.1" {
				t.Errorf("X-Forwarded-For = %q; want the connection's peer 127.0.0.1 alone", got)
			}
			if k := "X-Internal"; dres.Header.Get(k) != "" {
				t.Errorf("caller received %s: %q; the upstream's Connection header named it", k, dres.Header.Get(k))
			}
		})
	}
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		if !slices.Equal(av, b[k]) {
			return false
		}
	}
	return true
}

// rawUpstream accepts connections on loopback and hands each to serve,
// counting them.
func rawUpstream(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int32)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), accepted
}

// directProxy serves the test rules in front of the upstream at addr over
// the direct path.
func directProxy(t *testing.T, addr string, timeout time.Duration) *Proxy {
	t.Helper()
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Upstream: &url.URL{Scheme: "http", Host: addr}, UpstreamTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

// answeringUpstream is a raw upstream that answers every request on a
// connection with okResponse, and counts the connections it accepts.
func answeringUpstream(t *testing.T) (addr string, accepted *atomic.Int32) {
	return rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, okResponse)
		}
	})
}

func TestDirectPathReusesConnections(t *testing.T) {
	addr, accepted := answeringUpstream(t)
	p := directProxy(t, addr, time.Second)
	for i := range 20 {
		method, body := "GET", ""
		if i%2 == 1 {
			method, body = "PATCH", `{"status":"open"}`
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(method, "/tickets/T-1", strings.NewReader(body)))
		if w.Code != 200 || w.Body.String() != "{}" {
			t.Fatalf("request %d: %d %q", i, w.Code, w.Body)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("20 sequential requests opened %d upstream connections; want 1", n)
	}
}

// TestDirectPathReplacesConnectionsTheUpstreamClosed has the upstream close
// each connection after one answer without saying so, as an upstream whose
// idle timeout fires does: every request must still succeed.
func TestDirectPathReplacesConnectionsTheUpstreamClosed(t *testing.T) {
	addr, accepted := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(c, okResponse)
	})
	p := directProxy(t, addr, time.Second)
	requests := []struct{ method, target, body string }{
		{"GET", "/tickets/T-1", ""},                       // no body: sent again
		{"PATCH", "/tickets/T-1", `{"status":"open"}`},    // buffered body: sent again
		{"POST", "/elsewhere", `{"streamed":"not kept"}`}, // streamed body: the connection is probed first
		{"GET", "/tickets/T-2", ""},
	}
	for i, rq := range requests {
		time.Sleep(10 * time.Millisecond) // let the upstream's close arrive
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(rq.method, rq.target, strings.NewReader(rq.body)))
		if w.Code != 200 {
			t.Fatalf("request %d (%s %s): %d %s", i, rq.method, rq.target, w.Code, w.Body)
		}
	}
	if n := accepted.Load(); n != int32(len(requests)) {
		t.Errorf("%d requests opened %d connections; want one each", len(requests), n)
	}
}

// TestDirectPathDropsConnectionsOutOfStep has the upstream send bytes past
// the end of its response; the connection must not carry another request.
func TestDirectPathDropsConnectionsOutOfStep(t *testing.T) {
	addr, accepted := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, okResponse+"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
		}
	})
	p := directProxy(t, addr, time.Second)
	for i := range 3 {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil))
		if w.Code != 200 || w.Body.String() != "{}" {
			t.Fatalf("request %d: %d %q; want 200 {}", i, w.Code, w.Body)
		}
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("3 requests opened %d connections; want 3, none reused after stray bytes", n)
	}
}

func TestDirectPathCutsTheCallerOffWhenTheUpstreamBreaksOff(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
	})
	s := httptest.NewServer(directProxy(t, addr, time.Second))
	defer s.Close()
	res, err := http.Get(s.URL + "/tickets/T-1")
	if err != nil {
		return // cut before the headers were flushed: the caller sees the error
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil {
		t.Fatalf("caller read %q to a clean end; want the cut to show as an error", b)
	}
}

func TestDirectPathAnswersUpstreamFailures(t *testing.T) {
	stalled, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		http.ReadRequest(br)
		io.Copy(io.Discard, br) // never answers; returns when the proxy hangs up
	})
	stalledBody, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		http.ReadRequest(br)
		io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		io.Copy(io.Discard, br)
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := ln.Addr().String()
	ln.Close()
	tests := []struct {
		name, addr, code string
		status           int
	}{
		{"no answer within the timeout", stalled, "upstream_timeout", 504},
		{"connection refused", refused, "upstream_unavailable", 502},
		{"error body stalls", stalledBody, "upstream_failed", 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := directProxy(t, tt.addr, 200*time.Millisecond)
			w := httptest.NewRecorder()
			start := time.Now()
			p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil))
			if took := time.Since(start); took > 200*time.Millisecond+500*time.Millisecond {
				t.Errorf("answered after %v; the timeout is 200ms", took)
			}
			var body struct {
				Error     string `json:"error"`
				Retryable bool   `json:"retryable"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != tt.status || body.Error != tt.code || !body.Retryable {
				t.Errorf("got %d %s; want %d with error %q, retryable", w.Code, w.Body, tt.status, tt.code)
			}
		})
	}
}

// TestDirectPathStreamsEvents checks that each server-sent event reaches
// the caller while the upstream is still writing.
func TestDirectPathStreamsEvents(t *testing.T) {
	next := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	s := httptest.NewServer(directProxy(t, u.Host, time.Second))
	defer s.Close()
	res, err := http.Get(s.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("event %d: %q, %v", i, line, err)
		}
		br.ReadString('\n')
		next <- struct{}{}
	}
}

// TestDirectPathLetsGoWhenTheCallerLeaves cancels a request while the
// upstream has not answered: the proxy must hang up on the upstream too.
func TestDirectPathLetsGoWhenTheCallerLeaves(t *testing.T) {
	hungUp := make(chan struct{})
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		http.ReadRequest(br)
		io.Copy(io.Discard, br)
		close(hungUp)
	})
	p := directProxy(t, addr, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil).WithContext(ctx))
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-hungUp:
	case <-time.After(2 * time.Second):
		t.Fatal("the upstream connection stayed open 2s after the caller left")
	}
	<-done
}

func TestDirectPathIsChosenForPlainHTTPUpstreams(t *testing.T) {
	tests := []struct {
		upstream string
		direct   bool
	}{
		{"http://127.0.0.1:8081", true},
		{"http://api.internal", true},
		{"http://api.internal/", true},
		{"https://api.example", false},
		{"http://api.internal/v2", false},
		{"http://api.internal/?key=1", false},
	}
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.upstream)
		p, err := New(cfg, Options{Upstream: u})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.conns != nil; got != tt.direct {
			t.Errorf("%s: direct = %v; want %v", tt.upstream, got, tt.direct)
		}
		p.Close()
	}
	u, _ := url.Parse("http://127.0.0.1:8081")
	p, _ := New(cfg, Options{Upstream: u})
	defer p.Close()
	for _, h := range []http.Header{{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}}, {"Expect": {"100-continue"}}} {
		r := httptest.NewRequest("GET", "/tickets/T-1", bytes.NewReader(nil))
		r.Header = h
		if p.direct(r) {
			t.Errorf("request with %v takes the direct path; want the general one", h)
		}
	}
}

// TestDirectPathLetsBodiesTakeTheirTime has the upstream pause mid-body
// for longer than the upstream timeout: a stream of unknown length, and a
// small body with a length, take as long as the upstream takes, as
// through http.Transport, even on a connection whose deadline for the
// head was in force.
func TestDirectPathLetsBodiesTakeTheirTime(t *testing.T) {
	const timeout = 200 * time.Millisecond
	tests := []struct {
		name, head, first, rest string
	}{
		{"a stream waits for the upstream", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n",
			"5\r\nfirst\r\n", "4\r\nlast\r\n0\r\n\r\n"},
		{"a small body waits too", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\n",
			"first", "last"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				io.WriteString(c, tt.head+tt.first)
				time.Sleep(2 * timeout)
				io.WriteString(c, tt.rest)
			})
			s := httptest.NewServer(directProxy(t, addr, timeout))
			defer s.Close()
			res, err := http.Get(s.URL + "/stream")
			var body []byte
			if err == nil {
				body, err = io.ReadAll(res.Body)
				res.Body.Close()
			}
			if err != nil || string(body) != "firstlast" {
				t.Errorf("got %q, %v; want the whole body, firstlast", body, err)
			}
		})
	}
}

// TestDirectPathRecyclesRewrittenBodies has callers at once get rewritten
// errors of lengths that vary from one to the next, on the direct path,
// which writes each into a buffer kept for the next. Each must read as the
// general path, which keeps nothing, writes it.
func TestDirectPathRecyclesRewrittenBodies(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"Invalid status"}`)
	}))
	t.Cleanup(up.Close)
	direct, general := proxyPair(t, up.URL)
	patch := func(base, status string) (string, error) {
		body, _ := json.Marshal(map[string]string{"status": status})
		req, _ := http.NewRequest("PATCH", base+"/tickets/T-1", bytes.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		got, err := io.ReadAll(res.Body)
		return string(got), err
	}
	inParallel(t, 4, 40, func(c, i int) error {
		// Long, then short: a stale tail of the longer body would show.
		status := strings.Repeat(string(rune('A'+c)), 1+(i*37)%90)
		want, err := patch(general.URL, status)
		if err == nil && !strings.Contains(want, `"invalid_status"`) {
			err = fmt.Errorf("general path: %s", want)
		}
		if err != nil {
			return err
		}
		got, err := patch(direct.URL, status)
		if err == nil && got != want {
			err = fmt.Errorf("call %d of caller %d: direct path answered\n%s\nwant\n%s", i, c, got, want)
		}
		return err
	})
}

// inParallel has callers callers make calls calls each at once, and fails
// t with the first error one returns.
func inParallel(t *testing.T, callers, calls int, call func(caller, i int) error) {
	t.Helper()
	errs := make(chan error, callers)
	for c := range callers {
		go func() {
			for i := range calls {
				if err := call(c, i); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestDirectPathReusesExchangesCleanly has callers share the pooled
// exchanges, which keep the route's variables and the upstream's answer
// from one request to the next: every answer, a success or a rewritten 404,
// must carry its own request's id and headers, and no other's.
func TestDirectPathReusesExchangesCleanly(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/tickets/")
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "T-"))
		w.Header().Set("X-Ticket", id)
		if n%2 == 0 {
			w.Header().Set("X-Even", "yes")
		}
		w.Header().Set("Content-Type", "application/json")
		if n%3 == 0 {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"No such ticket"}`)
			return
		}
		fmt.Fprintf(w, `{"id":%q}`, id)
	}))
	t.Cleanup(up.Close)
	cfg, err := rules.Load("testdata/get_ticket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(up.URL)
	p, err := New(cfg, Options{Upstream: u, UpstreamTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if p.conns == nil {
		t.Fatal("the direct path is not in use")
	}
	front := httptest.NewServer(p)
	t.Cleanup(func() { front.Close(); p.Close() })

	check := func(n int) error {
		id := fmt.Sprintf("T-%d", n)
		res, err := http.Get(front.URL + "/tickets/" + id)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		got := fmt.Sprintf("%d X-Ticket=%q X-Even=%q %s", res.StatusCode, res.Header.Get("X-Ticket"), res.Header.Get("X-Even"), body)
		even := map[bool]string{true: "yes"}[n%2 == 0]
		want := fmt.Sprintf(`200 X-Ticket=%q X-Even=%q {"id":%q}`, id, even, id)
		if n%3 == 0 {
			want = fmt.Sprintf(`404 X-Ticket=%q X-Even=%q`, id, even)
			if !strings.HasPrefix(got, want) || !strings.Contains(got, `"received":"`+id+`"`) {
				return fmt.Errorf("GET %s: got %s\nwant %s and a body with \"received\":%q", id, got, want, id)
			}
			return nil
		}
		if got != want {
			return fmt.Errorf("GET %s: got %s\nwant %s", id, got, want)
		}
		return nil
	}
	inParallel(t, 4, 60, func(c, i int) error { return check(c*60 + i) })
}

// TestGeneralPathCutsABrokenUpstreamBody has the upstream break a chunked
// body off on the general path, behind the front and behind net/http's
// server: either way the caller must see the body cut, not a whole answer.
// httputil.ReverseProxy aborts the response only when the request's context
// says a server runs it.
func TestGeneralPathCutsABrokenUpstreamBody(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		time.Sleep(50 * time.Millisecond)
	})
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	transport := NewTransport(2 * time.Second)
	t.Cleanup(transport.CloseIdleConnections)
	p, err := New(cfg, Options{Upstream: &url.URL{Scheme: "http", Host: addr}, Transport: transport})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	onFront, onNetHTTP := servedBy(t, p)
	for server, addr := range map[string]string{"front": onFront, "net/http": onNetHTTP} {
		t.Run(server, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, "GET /tickets/T-1 HTTP/1.1\r\nHost: a\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			if err == nil {
				t.Errorf("the upstream broke its body off after %q; the caller got it whole", body)
			}
		})
	}
}

// slowStopContext is a caller's context whose AfterFunc stop functions are
// slow, as one is whose goroutine is descheduled: a stop that has not
// returned by the time it is released is recorded as late.
type slowStopContext struct {
	context.Context
	served  chan struct{} // closed once the handler has returned
	late    atomic.Bool
	calling atomic.Bool
}

func (c *slowStopContext) AfterFunc(func()) func() bool {
	return func() bool {
		c.calling.Store(true)
		select {
		case <-c.served:
			c.late.Store(true)
		case <-time.After(300 * time.Millisecond):
		}
		return true
	}
}

// TestStallTimerStopsBeforeTheHandlerReturns has an error body stall past
// its wait, so that its timer closes the body, and then arrive while the
// timer's Close is still stopping: the handler's own Close must wait for
// it. A stop that ran after the handler returned would clear what the
// connection's next request registers on the caller's context.
func TestStallTimerStopsBeforeTheHandlerReturns(t *testing.T) {
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n")
		time.Sleep(150 * time.Millisecond) // past the body's wait
		io.WriteString(c, "{}")
		time.Sleep(time.Second)
	})
	p := directProxy(t, addr, 100*time.Millisecond)
	ctx := &slowStopContext{Context: context.Background(), served: make(chan struct{})}
	r := httptest.NewRequest("GET", "/tickets/T-1", nil).WithContext(ctx)
	p.ServeHTTP(httptest.NewRecorder(), r)
	close(ctx.served)
	time.Sleep(400 * time.Millisecond) // for a stop still under way to finish
	if !ctx.calling.Load() {
		t.Fatal("no stop was called: the body's timer did not fire")
	}
	if ctx.late.Load() {
		t.Error("the upstream body's stop ran on after the handler returned")
	}
}

// servedBy returns the addresses at which signpost's front and net/http's
// server serve h over loopback, each until the test ends.
func servedBy(t *testing.T, h http.Handler) (onFront, onNetHTTP string) {
	t.Helper()
	quiet := log.New(io.Discard, "", 0)
	f := front.New(&http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: quiet})
	s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: quiet}
	return onLoopback(t, f.Serve, f.Close), onLoopback(t, s.Serve, s.Close)
}

// onLoopback runs serve on a loopback listener and returns its address;
// stop ends it with the test.
func onLoopback(t *testing.T, serve func(net.Listener) error, stop func() error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go serve(ln)
	t.Cleanup(func() { stop() })
	return ln.Addr().String()
}

// TestDirectPathSendsABodyOnceTheUpstreamMayHaveRead has the upstream read
// a request with a body whole on a reused connection and reset it without
// answering. A request with a body is never sent again once written, even
// buffered and with an idempotency key: httputil.ReverseProxy, which cannot
// rewind a body, sends it once and answers 502. A keyed request without a
// body goes again, as http.Transport sends it.
func TestDirectPathSendsABodyOnceTheUpstreamMayHaveRead(t *testing.T) {
	for _, tc := range []struct {
		name, method, target, body string
		wantSent                   int32
		wantStatus                 int
	}{
		{"keyed PATCH with a buffered body", "PATCH", "/tickets/T-1", `{"status":"open"}`, 1, http.StatusBadGateway},
		{"keyed POST with a streamed body", "POST", "/elsewhere", `{"note":"x"}`, 1, http.StatusBadGateway},
		{"keyed POST without a body", "POST", "/elsewhere", "", 2, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int32
			addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if req.Method == tc.method && sent.Add(1) == 1 {
						// Read whole, then reset: the upstream may have acted on it.
						c.(*net.TCPConn).SetLinger(0)
						return
					}
					io.WriteString(c, okResponse)
				}
			})
			p := directProxy(t, addr, time.Second)
			// A first exchange leaves a connection in the pool, to be reused.
			w := httptest.NewRecorder()
			p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil))
			if w.Code != 200 {
				t.Fatalf("GET: %d %s", w.Code, w.Body)
			}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req := httptest.NewRequest(tc.method, tc.target, body)
			req.Header.Set("Idempotency-Key", "k-1")
			w = httptest.NewRecorder()
			p.ServeHTTP(w, req)
			if w.Code != tc.wantStatus || sent.Load() != tc.wantSent {
				t.Errorf("%s answered %d after the upstream got it %d times; want %d after %d", tc.method, w.Code, sent.Load(), tc.wantStatus, tc.wantSent)
			}
		})
	}
}

// TestDirectPathGivesAPooledErrorBodyTheWholeTimeout has a pooled
// connection carry a second exchange soon after a first, so that the
// deadline the first set is kept, and the upstream send the second's error
// body late, after that deadline but within the second's own timeout. The
// body must be read whole and rewritten, not cut at the first's deadline.
func TestDirectPathGivesAPooledErrorBodyTheWholeTimeout(t *testing.T) {
	const timeout = 3 * time.Second
	const bodyAfter = 2700 * time.Millisecond // past the first's deadline, within the second's
	body := `{"error":"Invalid status"}`
	addr, accepted := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if req.Method == "GET" {
				io.WriteString(c, okResponse)
				continue
			}
			fmt.Fprintf(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
			time.Sleep(bodyAfter)
			io.WriteString(c, body)
		}
	})
	p := directProxy(t, addr, timeout)
	w := httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("GET", "/tickets/T-1", nil))
	if w.Code != 200 {
		t.Fatalf("GET: %d %s", w.Code, w.Body)
	}
	// Within a quarter of the timeout the first's deadline is kept.
	time.Sleep(timeout / 5)
	w = httptest.NewRecorder()
	p.ServeHTTP(w, httptest.NewRequest("PATCH", "/tickets/T-1", strings.NewReader(`{"status":"OPEN"}`)))
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the second exchange took a connection of its own (%d accepted); the test needs it pooled", n)
	}
	if w.Code != 400 || !strings.Contains(w.Body.String(), `"error":"invalid_status"`) {
		t.Errorf("an error body %v into a %v timeout answered %d %s; want it read whole and rewritten", bodyAfter, timeout, w.Code, w.Body)
	}
}

// pathsTo builds the test rules in front of the upstream at addr twice,
// each counting into a registry of its own: over the direct path, and
// over httputil.ReverseProxy, the general path.
func pathsTo(t *testing.T, addr string) map[string]*fixture {
	t.Helper()
	fixtures := map[string]*fixture{}
	for _, path := range []string{"direct", "general"} {
		cfg, err := rules.Load("testdata/rules.yaml")
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Upstream: &url.URL{Scheme: "http", Host: addr}, UpstreamTimeout: 2 * time.Second}
		if path == "general" {
			transport := NewTransport(2 * time.Second)
			t.Cleanup(transport.CloseIdleConnections)
			opts.Transport = transport
		}
		reg := prometheus.NewRegistry()
		opts.Metrics = metrics.New(reg)
		p, err := New(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		fixtures[path] = &fixture{p: p, reg: reg, m: opts.Metrics}
	}
	return fixtures
}

// TestUntypedAnswersPassUntyped has the upstream answer with no
// Content-Type, of unknown length and of known length: the caller gets no
// Content-Type either, on either path and either server, where net/http
// would sniff one (text/html here), as nginx and HAProxy pass it.
func TestUntypedAnswersPassUntyped(t *testing.T) {
	const page = "<html><body>no type</body></html>"
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if req.URL.Path == "/chunked" {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(page), page)
			} else {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(page), page)
			}
		}
	})
	for path, f := range pathsTo(t, addr) {
		onFront, onNetHTTP := servedBy(t, f.p)
		for server, at := range map[string]string{"front": onFront, "net/http": onNetHTTP} {
			for _, target := range []string{"/chunked", "/length"} {
				res, err := http.Get("http://" + at + target)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if ct, typed := res.Header["Content-Type"]; typed || string(body) != page {
					t.Errorf("%s path, %s, %s: Content-Type %q and %q; want no type and the page", path, server, target, ct, body)
				}
			}
		}
	}
}

// TestAnswersCutShortAreCountedAsWhatTheyAre: an upstream 200 broken off
// mid-body is a failure, and an answer whose caller left mid-body is
// cancelled, by signpost_request_duration_seconds' outcome; neither is a
// success.
func TestAnswersCutShortAreCountedAsWhatTheyAre(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	addr, _ := rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.URL.Path == "/broken" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
			return
		}
		// A stream that goes on until the proxy stops reading it.
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
		for {
			select {
			case <-release:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := io.WriteString(c, "4\r\nmore\r\n"); err != nil {
				return
			}
		}
	})
	outcome := func(f *fixture, outcome string) uint64 {
		n, _ := f.histogram(t, "signpost_request_duration_seconds", "route", metrics.Unrouted, "outcome", outcome)
		return n
	}
	for path, f := range pathsTo(t, addr) {
		onFront, _ := servedBy(t, f.p)
		res, err := http.Get("http://" + onFront + "/broken")
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if err == nil {
			t.Errorf("%s path: the caller read a broken body to a clean end", path)
		}
		if failed, success := outcome(f, metrics.OutcomeFailed), outcome(f, metrics.OutcomeSuccess); failed != 1 || success != 0 {
			t.Errorf("%s path, upstream broke off: %d failed, %d success; want 1 failed", path, failed, success)
		}

		c, err := net.Dial("tcp", onFront)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /stream HTTP/1.1\r\nHost: signpost.test\r\n\r\n")
		if _, err := bufio.NewReader(c).ReadString('t'); err != nil { // into the first chunk
			t.Fatal(err)
		}
		c.Close()
		deadline := time.Now().Add(5 * time.Second)
		for outcome(f, metrics.OutcomeCancelled) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if cancelled, success := outcome(f, metrics.OutcomeCancelled), outcome(f, metrics.OutcomeSuccess); cancelled != 1 || success != 0 {
			t.Errorf("%s path, caller left mid-answer: %d cancelled, %d success; want 1 cancelled", path, cancelled, success)
		}
	}
}
