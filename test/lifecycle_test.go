package test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// TestShutdown sends SIGTERM while a request is in flight: signpost stops
// accepting connections, finishes that request, and exits 0 promptly.
func TestShutdown(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	arrived := make(chan struct{}, 1)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			if !g.wait(r.Context()) {
				return
			}
		}
		_, _ = io.WriteString(w, "done\n")
	}), g)
	sp := startSignpost(t, ticketsConfig, up.URL)

	if got := send(t, "GET", sp.URL+"/fast", nil); got.status != 200 || string(got.body) != "done\n" {
		t.Fatalf("GET /fast: %d %q", got.status, got.body)
	}

	type result struct {
		r   *http.Response
		err error
	}
	inflight := make(chan result, 1)
	go func() {
		res, err := client.Get(sp.URL + "/slow")
		inflight <- result{res, err}
	}()
	select {
	case <-arrived:
	case <-time.After(waitTimeout):
		t.Fatalf("the slow request did not reach the upstream within %v", waitTimeout)
	}

	start := time.Now()
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Shutdown closes the listener first; wait for that, bounded.
	deadline := time.Now().Add(waitTimeout)
	for {
		c, err := net.DialTimeout("tcp", sp.Addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("signpost still accepts connections %v after SIGTERM", waitTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.open()

	select {
	case r := <-inflight:
		if r.err != nil {
			t.Fatalf("the request in flight at SIGTERM failed: %v", r.err)
		}
		body, err := io.ReadAll(r.r.Body)
		r.r.Body.Close()
		if err != nil || r.r.StatusCode != 200 || string(body) != "done\n" {
			t.Errorf("the request in flight at SIGTERM got %d %q (%v), want 200 \"done\\n\"", r.r.StatusCode, body, err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("the request in flight at SIGTERM did not finish within %v", waitTimeout)
	}
	if !sp.wait(waitTimeout) {
		t.Fatalf("signpost did not exit within %v of SIGTERM", waitTimeout)
	}
	if code := sp.exitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, sp.stderr)
	}
	t.Logf("exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
}

// TestShutdownIdle checks that an idle signpost, with keep-alive
// connections open on both listeners, exits 0 within two seconds of
// SIGTERM or SIGINT.
func TestShutdownIdle(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			api := newUpstream(t, ticketapi.New().Handler())
			sp := startSignpost(t, ticketsConfig, api.URL, "--drain-timeout", "10s")
			send(t, "GET", sp.URL+"/tickets/T-8841", nil)
			send(t, "GET", sp.Admin+"/livez", nil)

			if err := sp.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if !sp.wait(2 * time.Second) {
				t.Fatalf("an idle signpost did not exit within 2s of %v", sig)
			}
			if code := sp.exitCode(); code != 0 {
				t.Errorf("exit code %d after %v, want 0; stderr:\n%s", code, sig, sp.stderr)
			}
		})
	}
}

// TestAdminEndpoints checks the admin listener and that its endpoints are
// not served to agents: /metrics on the agent listener goes upstream.
func TestAdminEndpoints(t *testing.T) {
	t.Parallel()
	saw := make(chan string, 8)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		saw <- r.URL.Path
		http.NotFound(w, r)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL)

	got := send(t, "GET", sp.URL+"/metrics", nil)
	if got.status != 404 || len(saw) != 1 || <-saw != "/metrics" {
		t.Errorf("GET /metrics on the agent listener: %d; want it forwarded to the upstream", got.status)
	}

	live := send(t, "GET", sp.Admin+"/livez", nil)
	if live.status != 200 || string(live.body) != "ok\n" {
		t.Errorf("GET /livez: %d %q, want 200 \"ok\\n\"", live.status, live.body)
	}
	m := send(t, "GET", sp.Admin+"/metrics", nil)
	if m.status != 200 || !strings.HasPrefix(m.header.Get("Content-Type"), "text/plain") {
		t.Errorf("GET /metrics: %d %s", m.status, m.header.Get("Content-Type"))
	}
	for _, want := range []string{
		"# TYPE signpost_upstream_errors_unmatched_total counter",
		`signpost_upstream_errors_unmatched_total{route="(unrouted)",status="404"} 1`,
		"go_goroutines",
	} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if _, err := parseMetrics(m.body); err != nil {
		t.Errorf("/metrics does not parse: %v", err)
	}
}
