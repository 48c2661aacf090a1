package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestShutdownUnderLoad sends SIGTERM while 32 connections keep requests
// in flight, each held 100 ms by the upstream: every request the upstream
// received must get its whole answer, and signpost must exit 0 once they
// are done. Requests that never reached the upstream may fail, at the
// connection, once signpost stops accepting.
func TestShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	arrived := map[string]bool{} // request ids the upstream received
	var inFlight atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived[r.Header.Get(requestIDHeader)] = true
		mu.Unlock()
		inFlight.Add(1)
		defer inFlight.Add(-1)
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		answerTicket(w, r)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL, "--drain-timeout", "5s")

	tr := &http.Transport{MaxIdleConnsPerHost: 32, MaxConnsPerHost: 32, DisableCompression: true}
	defer tr.CloseIdleConnections()
	load := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mismatches atomic.Int64
	var answeredMu sync.Mutex
	answered := map[string]bool{} // request ids answered in full
	var failedMu sync.Mutex
	var failed []string // errors of requests that got no answer
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !sp.exited(); i++ {
				id := fmt.Sprintf("load-%d-%d", w, i)
				patch := (i+w)%2 == 0
				var req *http.Request
				if patch {
					req, _ = http.NewRequest("PATCH", sp.URL+"/tickets/T-8841", strings.NewReader(`{"status":"OPEN"}`))
				} else {
					req, _ = http.NewRequest("GET", sp.URL+"/tickets/T-8841", nil)
				}
				req.Header.Set(requestIDHeader, id)
				req.Header.Set("X-Session-Id", id) // an agent of its own, repeating nothing
				res, err := load.Do(req)
				if err != nil {
					failedMu.Lock()
					failed = append(failed, id+": "+err.Error())
					failedMu.Unlock()
					time.Sleep(5 * time.Millisecond)
					continue
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				want, status := `{"id":"T-8841","status":"open"}`, 200
				if patch {
					want, status = `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`, 400
				}
				if err != nil || res.StatusCode != status || string(body) != want {
					mismatches.Add(1)
					t.Errorf("%s %s: %d %q (%v), want %d %q", req.Method, id, res.StatusCode, body, err, status, want)
					continue
				}
				answeredMu.Lock()
				answered[id] = true
				answeredMu.Unlock()
			}
		}()
	}

	// Let the load settle, then stop signpost with requests in flight.
	deadline := time.Now().Add(waitTimeout)
	for inFlight.Load() < 16 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests in flight at the upstream after %v", inFlight.Load(), waitTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	atTerm := inFlight.Load()
	start := time.Now()
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !sp.wait(waitTimeout) {
		t.Fatalf("signpost did not exit within %v of SIGTERM under load", waitTimeout)
	}
	exited := time.Since(start)
	wg.Wait()
	if code := sp.exitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM under load, want 0; stderr:\n%s", code, sp.stderr)
	}

	// Every request the upstream saw was answered in full.
	mu.Lock()
	defer mu.Unlock()
	var lost []string
	for id := range arrived {
		if !answered[id] {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		failedMu.Lock()
		t.Errorf("%d requests reached the upstream but got no whole answer: %v\nclient errors: %v", len(lost), lost, failed)
		failedMu.Unlock()
	}
	// The rest failed at the connection: never accepted, or closed idle.
	for _, f := range failed {
		id, msg, _ := strings.Cut(f, ": ")
		if arrived[id] {
			continue // reported above
		}
		if !connectionLevel(msg) {
			t.Errorf("a request failed otherwise than at the connection: %s", f)
		}
	}
	t.Logf("%d requests in flight at SIGTERM, %d answered in all, %d refused at the connection after it; exited in %v",
		atTerm, len(answered), len(failed), exited.Round(time.Millisecond))
	if mismatches.Load() > 0 {
		t.Errorf("%d answers differed from the expected ones", mismatches.Load())
	}
}

// connectionLevel reports whether a client error is one of a connection
// refused, reset or closed before any answer: what a client of a server
// that stops accepting sees.
func connectionLevel(msg string) bool {
	for _, s := range []string{"connection refused", "connection reset", "EOF", "server closed idle connection", "broken pipe"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestShutdownWritesEveryLine stops signpost while requests are held in
// flight at the upstream: the log is written in batches off the request
// path, and the lines of every request, those finished during the drain
// included, must reach stdout before the process exits.
func TestShutdownWritesEveryLine(t *testing.T) {
	t.Parallel()
	const quick, held = 200, 8
	var holding atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			holding.Add(1)
			time.Sleep(300 * time.Millisecond)
		}
		answerTicket(w, r)
	}))
	// The requests' lines wait in the buffer until shutdown: the first
	// of them starts a batch of 5 s, and all is over within 2 s.
	sp := startSignpost(t, ticketsConfig, up.URL, "--access-log", "--drain-timeout", "5s", "--log-flush-interval", "5s")

	var ids sync.Map // request id -> answered
	call := func(id string, hold bool) {
		req, _ := http.NewRequest("GET", sp.URL+"/tickets/T-8841", nil)
		req.Header.Set(requestIDHeader, id)
		if hold {
			req.Header.Set("X-Hold", "1")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d, want 200", id, res.StatusCode)
			return
		}
		ids.Store(id, true)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range quick / 8 {
				call(fmt.Sprintf("quick-%d-%d", w, i), false)
			}
		})
	}
	wg.Wait()
	for i := range held {
		wg.Go(func() { call(fmt.Sprintf("held-%d", i), true) })
	}
	for deadline := time.Now().Add(waitTimeout); holding.Load() < held; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests held at the upstream after %v", holding.Load(), held, waitTimeout)
		}
	}
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !sp.wait(waitTimeout) {
		t.Fatalf("signpost did not exit within %v of SIGTERM", waitTimeout)
	}

	logged := map[string]bool{}
	for _, l := range strings.Split(sp.stdout.String(), "\n") {
		var line logLine
		if json.Unmarshal([]byte(l), &line) == nil && line["msg"] == "request" {
			id, _ := line["request_id"].(string)
			logged[id] = true
		}
	}
	answered := 0
	ids.Range(func(id, _ any) bool {
		answered++
		if !logged[id.(string)] {
			t.Errorf("request %s was answered but its access log line was never written", id)
		}
		return true
	})
	if answered != quick+held {
		t.Errorf("%d requests answered, want %d", answered, quick+held)
	}
	if !strings.Contains(sp.stdout.String(), `"msg":"shutting down"`) {
		t.Errorf("no \"shutting down\" line in stdout:\n%s", clip([]byte(sp.stdout.String())))
	}
}
