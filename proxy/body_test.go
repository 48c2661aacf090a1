package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// bodyRules declare a route with body fields and signpost's default bound
// on the bodies it reads.
const bodyRules = `
limits: {request_body: 1MiB}
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    validate: before
    fields:
      status: {enum: [open, pending, closed]}
`

// bodyProxy serves bodyRules in front of the upstream at addr, with a
// request body timeout of wait.
func bodyProxy(t *testing.T, addr string, wait time.Duration) *Proxy {
	t.Helper()
	cfg, err := rules.Parse("body.yaml", []byte(bodyRules))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream = &url.URL{Scheme: "http", Host: addr}
	p, err := New(cfg, Options{RequestBodyTimeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// countingUpstream answers every request 200 and counts them, and the
// body bytes it read.
func countingUpstream(t *testing.T) (addr string, requests, bodyBytes *atomic.Int64) {
	requests, bodyBytes = new(atomic.Int64), new(atomic.Int64)
	addr, _ = rawUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			requests.Add(1)
			n, _ := io.Copy(io.Discard, req.Body)
			bodyBytes.Add(n)
			io.WriteString(c, okResponse)
		}
	})
	return addr, requests, bodyBytes
}

// TestSlowRequestBodyIsRefusedInTime: a caller that declares a body on a
// route whose body signpost reads, then sends part of it or none, holds no
// more of the budget than the bytes that came (a first buffer), and is
// answered 408 request_body_timeout once the request body timeout passes,
// on the front and on net/http's server alike; the connection then ends,
// and the upstream is never called.
func TestSlowRequestBodyIsRefusedInTime(t *testing.T) {
	const wait = 300 * time.Millisecond
	addr, requests, _ := countingUpstream(t)
	p := bodyProxy(t, addr, wait)
	onFront, onNetHTTP := servedBy(t, p)
	for server, at := range map[string]string{"front": onFront, "net/http": onNetHTTP} {
		for _, sent := range []string{"", `{"status":`} {
			c, err := net.Dial("tcp", at)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			fmt.Fprintf(c, "PATCH /tickets/T-1 HTTP/1.1\r\nHost: signpost.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", 1<<20, sent)
			time.Sleep(wait / 3)
			if held := p.budget.InUse(); held > firstBodyBuffer {
				t.Errorf("%s, %d bytes of a 1 MiB body sent: %d bytes of the budget held; want at most a first buffer, %d", server, len(sent), held, firstBodyBuffer)
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: no answer: %v", server, err)
			}
			body, _ := io.ReadAll(res.Body)
			took := time.Since(start)
			if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"error":"request_body_timeout"`) || !res.Close {
				t.Errorf("%s: %d %s (close %v); want 408 request_body_timeout and the connection closed", server, res.StatusCode, body, res.Close)
			}
			if took < wait || took > wait+2*time.Second {
				t.Errorf("%s: answered after %v; want just past the %v timeout", server, took, wait)
			}
			if _, err := br.ReadByte(); err == nil {
				t.Errorf("%s: the connection carried on after the 408", server)
			}
			c.Close()
			if held := p.budget.InUse(); held != 0 {
				t.Errorf("%s: %d bytes of the budget still held after the answer", server, held)
			}
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the upstream got %d requests; want none: no body was whole", n)
	}
	// Both servers wait 500 ms for a refused body's bytes before they
	// close: their goroutines end only then.
	time.Sleep(600 * time.Millisecond)
}

// TestRequestBodyOverTheBudgetStreams: when other requests hold the
// buffer budget, a body signpost would read streams to the upstream
// whole instead, unchecked, rather than be refused.
func TestRequestBodyOverTheBudgetStreams(t *testing.T) {
	addr, requests, bodyBytes := countingUpstream(t)
	p := bodyProxy(t, addr, time.Second)
	reg := prometheus.NewRegistry()
	b := budget.New(1<<20, metrics.New(reg))
	held := &budget.Charge{Budget: b}
	held.Grow(1<<20 - 16) // other requests hold all but 16 bytes
	p.budget = b
	onFront, _ := servedBy(t, p)
	body := `{"status":"OPEN","note":"` + strings.Repeat("x", 8<<10) + `"}` // arrives in parts, after the head
	c, err := net.Dial("tcp", onFront)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PATCH /tickets/T-1 HTTP/1.1\r\nHost: signpost.test\r\nContent-Length: %d\r\n\r\n", len(body))
	time.Sleep(50 * time.Millisecond)
	io.WriteString(c, body)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || requests.Load() != 1 || bodyBytes.Load() != int64(len(body)) {
		t.Errorf("answered %d; the upstream got %d requests, %d body bytes; want 200 from one request with the whole %d-byte body",
			res.StatusCode, requests.Load(), bodyBytes.Load(), len(body))
	}
	if n := b.InUse(); n != 1<<20-16 {
		t.Errorf("budget in use after the answer: %d; want the %d held before", n, 1<<20-16)
	}
	if n := metricstest.Counter(t, reg, "signpost_buffer_budget_exhausted_total"); n != 1 {
		t.Errorf("signpost_buffer_budget_exhausted_total = %v; want 1, the body the budget had no room for", n)
	}
}
