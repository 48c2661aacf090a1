package test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

const (
	unavailableBody = `{"error":"upstream_unavailable","message":"the upstream service could not be reached; the call did not take effect, retry it shortly","retryable":true}`
	timeoutBody     = `{"error":"upstream_timeout","message":"the upstream service did not answer in time; the call may or may not have taken effect, check before retrying","retryable":true}`
	// timeoutRepeatableBody answers a call that may be repeated, a GET.
	timeoutRepeatableBody = `{"error":"upstream_timeout","message":"the upstream service did not answer in time; the call may be repeated with the same effect, retry it shortly","retryable":true}`
)

// TestUpstreamUnavailable puts signpost in front of a closed port: every
// call gets a structured, retryable 502 instead of an empty one.
// failureCases are the calls sent to an upstream that cannot answer: with
// a body, without, and on no route.
var failureCases = []failureCase{
	{"routed with body", "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, "update_ticket"},
	{"routed", "GET", "/tickets/T-8841", ``, "get_ticket"},
	{"unrouted", "GET", "/health", ``, "(unrouted)"},
}

type failureCase struct{ name, method, path, body, route string }

// bytes is the request body, nil for none.
func (c failureCase) bytes() []byte {
	if c.body == "" {
		return nil
	}
	return []byte(c.body)
}

func TestUpstreamUnavailable(t *testing.T) {
	t.Parallel()
	sp := startSignpost(t, ticketsConfig, refusingURL(t))

	for _, tt := range failureCases {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.bytes()
			start := time.Now()
			got := send(t, tt.method, sp.URL+tt.path, body)
			if d := time.Since(start); d > waitTimeout {
				t.Errorf("answered after %v; a refused connection should fail fast", d)
			}
			wantJSONError(t, got, http.StatusBadGateway, unavailableBody)
			sp.wantCounter(t, 1, "signpost_upstream_failures_total", "route", tt.route, "code", "upstream_unavailable")
		})
	}
	sp.waitLog(t, "upstream failed", map[string]any{"route": "update_ticket", "code": "upstream_unavailable"})
}

// TestUpstreamStopped stops a working upstream under signpost, as when its
// process exits: the next calls, on pooled connections or new ones, get
// the structured, retryable 502, and calls succeed again once an upstream
// listens on the port anew.
func TestUpstreamStopped(t *testing.T) {
	t.Parallel()
	api := httptest.NewServer(ticketapi.New().Handler())
	t.Cleanup(api.Close)
	sp := startSignpost(t, ticketsConfig, api.URL)

	// Two calls leave pooled connections to the upstream behind.
	if got := send(t, "GET", sp.URL+"/tickets/T-8841", nil); got.status != 200 {
		t.Fatalf("GET before the stop: %d %s", got.status, got.body)
	}
	if got := send(t, "PATCH", sp.URL+"/tickets/T-8841", []byte(`{"status":"OPEN"}`)); got.status != 400 {
		t.Fatalf("PATCH before the stop: %d %s", got.status, got.body)
	}
	addr := api.Listener.Addr().String()
	api.Close()
	// Hold the port, bound but not listening, so that no other test's
	// server can take it and answer in the stopped upstream's place.
	release := holdPort(t, addr)

	for _, tt := range failureCases {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.bytes()
			wantJSONError(t, send(t, tt.method, sp.URL+tt.path, body), http.StatusBadGateway, unavailableBody)
			sp.wantCounter(t, 1, "signpost_upstream_failures_total", "route", tt.route, "code", "upstream_unavailable")
		})
	}

	// The upstream comes back on the same port.
	release()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s again: %v", addr, err)
	}
	back := &http.Server{Handler: ticketapi.New().Handler(), ReadHeaderTimeout: waitTimeout}
	go func() { _ = back.Serve(ln) }()
	t.Cleanup(func() { _ = back.Close() })
	if got := send(t, "GET", sp.URL+"/tickets/T-8841", nil); got.status != 200 {
		t.Errorf("GET once the upstream is back: %d %s, want 200", got.status, got.body)
	}
}

// holdPort binds a socket to addr without listening, so that connections
// to it are refused, until release is called or the test ends.
func holdPort(t *testing.T, addr string) (release func()) {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	t.Cleanup(release)
	// The stopped server's connections linger in TIME_WAIT on this port.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		t.Fatalf("holding %s after the upstream stopped: %v (another test took the port)", addr, err)
	}
	return release
}

// refusingURL returns the URL of a loopback port that refuses connections:
// bound, so that no other test can take it, but not listening.
func refusingURL(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
}

// TestUpstreamTimeout puts signpost in front of an upstream that never
// answers: with --upstream-timeout 300ms the caller gets a structured 504
// soon after, and the upstream sees its request cancelled.
func TestUpstreamTimeout(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	cancelled := make(chan struct{}, 4)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does the server notice a caller
		// that hangs up, and cancel r.Context().
		_, _ = io.Copy(io.Discard, r.Body)
		if !g.wait(r.Context()) {
			cancelled <- struct{}{}
		}
	}), g)
	sp := startSignpost(t, ticketsConfig, up.URL, "--upstream-timeout", "300ms")

	for _, tt := range []struct{ name, method, path, body, route, want string }{
		{"routed with body", "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, "update_ticket", timeoutBody},
		{"unrouted", "GET", "/slow", ``, "(unrouted)", timeoutRepeatableBody},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			start := time.Now()
			got := send(t, tt.method, sp.URL+tt.path, body)
			d := time.Since(start)
			if d < 300*time.Millisecond || d > waitTimeout {
				t.Errorf("answered after %v; want shortly after the 300ms upstream timeout", d)
			}
			wantJSONError(t, got, http.StatusGatewayTimeout, tt.want)
			sp.wantCounter(t, 1, "signpost_upstream_failures_total", "route", tt.route, "code", "upstream_timeout")
			select {
			case <-cancelled:
			case <-time.After(waitTimeout):
				t.Errorf("the upstream's request was not cancelled within %v of the timeout", waitTimeout)
			}
		})
	}
}
