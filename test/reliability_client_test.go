package test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestReliabilityShutdown sends SIGTERM with 64 requests in flight, 20 of
// them held 2 s by the upstream, while a load balancer polls /readyz and
// keeps sending new requests for as long as it answers 200. Bars: no
// request fails, /readyz answers 503 before the agents' listener refuses
// connections, and signpost exits 0 within its shutdown delay and drain
// timeout.
func TestReliabilityShutdown(t *testing.T) {
	t.Parallel()
	const (
		name     = "9 shutdown"
		inFlight = 64
		slow     = 20
		hold     = 2 * time.Second
		delay    = 500 * time.Millisecond
		drain    = 5 * time.Second
	)
	var arrived atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		wait := 300 * time.Millisecond
		if r.Header.Get("X-Hold") == "slow" {
			wait = hold
		}
		if r.Header.Get("X-Hold") == "none" {
			wait = 0
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"Invalid status"}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"T-8841","status":"open"}`)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL, "--drain-timeout", drain.String(), "--shutdown-delay", delay.String())

	// Every request gets a connection of its own, so that none is lost to
	// a keep-alive connection the server closes while idle.
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var failures sync.Map // request -> what went wrong
	var sent atomic.Int64
	call := func(id, holdFor string, patch bool) {
		sent.Add(1)
		req, _ := http.NewRequest(http.MethodGet, sp.URL+"/tickets/T-8841", nil)
		want, status := `{"id":"T-8841","status":"open"}`, http.StatusOK
		if patch {
			req, _ = http.NewRequest(http.MethodPatch, sp.URL+"/tickets/T-8841", strings.NewReader(`{"status":"OPEN"}`))
			want, status = `{"error":"invalid_status","field":"status","message":"must be one of: open, pending, closed","received":"OPEN","retryable":false}`, http.StatusBadRequest
		}
		req.Header.Set("X-Hold", holdFor)
		res, err := c.Do(req)
		if err != nil {
			failures.Store(id, err.Error())
			return
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != status || string(body) != want {
			failures.Store(id, fmt.Sprintf("%d %q (%v)", res.StatusCode, body, err))
		}
	}

	// The requests in flight at SIGTERM: 20 slow, the rest held 300 ms.
	var wg sync.WaitGroup
	for i := range inFlight {
		hold := "fast"
		if i < slow {
			hold = "slow"
		}
		wg.Go(func() { call(fmt.Sprintf("in-flight-%d", i), hold, i%2 == 0) })
	}
	deadline := time.Now().Add(waitTimeout)
	for arrived.Load() < inFlight {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests reached the upstream within %v", arrived.Load(), inFlight, waitTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}

	// From SIGTERM on: one poller of /readyz, one of the listener, and a
	// balancer that sends requests while /readyz last answered 200.
	var notReady, refused atomic.Int64 // nanoseconds after SIGTERM, 0 until seen
	var ready atomic.Bool
	ready.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var pollers sync.WaitGroup
	pollers.Go(func() {
		pc := &http.Client{Timeout: time.Second}
		for ctx.Err() == nil {
			res, err := pc.Get(sp.Admin + "/readyz")
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable {
					ready.Store(false)
					notReady.CompareAndSwap(0, int64(time.Since(start)))
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	pollers.Go(func() {
		for ctx.Err() == nil {
			conn, err := net.DialTimeout("tcp", sp.Addr, time.Second)
			if err != nil {
				refused.CompareAndSwap(0, int64(time.Since(start)))
				return
			}
			conn.Close()
			time.Sleep(2 * time.Millisecond)
		}
	})
	pollers.Go(func() {
		for i := 0; ctx.Err() == nil && ready.Load(); i++ {
			call(fmt.Sprintf("balanced-%d", i), "none", i%2 == 1)
		}
	})
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exitedIn := delay + drain + time.Second
	if !sp.wait(exitedIn) {
		t.Fatalf("signpost did not exit within %v of SIGTERM", exitedIn)
	}
	exited := time.Since(start)
	cancel()
	pollers.Wait()
	wg.Wait()

	var failed []string
	failures.Range(func(k, v any) bool {
		failed = append(failed, fmt.Sprintf("%v: %v", k, v))
		return true
	})
	figure(t, name, fmt.Sprintf("requests failed, of %d in flight at SIGTERM (%d slow) and %d sent while ready", inFlight, slow, sent.Load()-inFlight),
		len(failed), "0", len(failed) == 0)
	if len(failed) > 0 {
		t.Logf("failed: %v", failed)
	}
	nr, rf := time.Duration(notReady.Load()), time.Duration(refused.Load())
	figure(t, name, "/readyz 503 after SIGTERM", nr.Round(time.Millisecond), "before the listener refuses", nr > 0 && (rf == 0 || nr < rf))
	figure(t, name, "listener refuses after SIGTERM", rf.Round(time.Millisecond), fmt.Sprintf("after /readyz 503, with --shutdown-delay %v", delay), rf == 0 || rf >= nr)
	code := sp.exitCode()
	figure(t, name, "exit code", code, "0", code == 0)
	figure(t, name, "exit after SIGTERM", exited.Round(time.Millisecond), fmt.Sprintf("≤ shutdown delay + drain timeout (%v)", delay+drain), exited <= delay+drain)
}
