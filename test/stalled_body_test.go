package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStalledBodiesHoldLittle opens 200 connections that each declare a
// 1 MiB body on a route whose body signpost reads (POST /tickets), then
// send none of it. Signpost must hold less memory for them, in the Go
// heap and goroutine stacks, than net/http's Server with
// httputil.ReverseProxy does for the same (the plain Go proxy of the
// benchmarks, which streams each body to the upstream), and answer each
// 408 request_body_timeout, and close it, once --request-body-timeout has
// passed. Resident memory is logged beside: a buffer allocated whole and
// never written may not be resident yet, but the heap holds it.
func TestStalledBodiesHoldLittle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads resident memory from /proc")
	}
	const (
		conns   = 200
		timeout = 3 * time.Second
	)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL, "--request-body-timeout", timeout.String())
	reference := startPlainProxy(t, up.URL)

	head := fmt.Sprintf("POST /tickets HTTP/1.1\r\nHost: tickets.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<20)
	spMemory := func() int64 {
		return int64(sp.total(t, "go_memstats_heap_inuse_bytes") + sp.total(t, "go_memstats_stack_inuse_bytes"))
	}
	type heldMemory struct{ runtime, resident int64 } // bytes, KiB
	held := func(addr string, pid int, memory func() int64) (heldMemory, []net.Conn) {
		t.Helper()
		before := heldMemory{memory(), procField(t, pid, "status", "VmRSS")}
		open := make([]net.Conn, 0, conns)
		for range conns {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			open = append(open, c)
		}
		time.Sleep(timeout / 3) // every head is read and waits for its body
		return heldMemory{memory() - before.runtime, procField(t, pid, "status", "VmRSS") - before.resident}, open
	}
	start := time.Now()
	spHeld, spConns := held(sp.Addr, sp.cmd.Process.Pid, spMemory)
	refHeld, refConns := held(reference.addr, reference.cmd.Process.Pid, reference.memory(t))
	t.Logf("memory added by %d connections that declared 1 MiB and sent nothing: signpost %d KiB of heap and stacks (%d KiB resident), net/http %d KiB (%d KiB resident)",
		conns, spHeld.runtime>>10, spHeld.resident, refHeld.runtime>>10, refHeld.resident)
	if spHeld.runtime >= refHeld.runtime {
		t.Errorf("signpost's heap and stacks rose %d KiB for %d stalled bodies; want less than net/http's %d KiB", spHeld.runtime>>10, conns, refHeld.runtime>>10)
	}
	for _, c := range refConns {
		c.Close()
	}

	// Each of signpost's is answered, and closed, once the timeout passed.
	var wg sync.WaitGroup
	var mu sync.Mutex
	faults := map[string]int{}
	for _, c := range spConns {
		wg.Go(func() {
			_ = c.SetReadDeadline(start.Add(timeout + 10*time.Second))
			br := bufio.NewReader(c)
			fault := ""
			res, err := http.ReadResponse(br, nil)
			switch {
			case err != nil:
				fault = "no answer: " + err.Error()
			default:
				b, _ := io.ReadAll(res.Body)
				if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"error":"request_body_timeout"`) {
					fault = fmt.Sprintf("answered %d %s", res.StatusCode, b)
				} else if _, err := br.ReadByte(); err != io.EOF {
					fault = fmt.Sprintf("after the 408, %v; want the connection's end", err)
				}
			}
			if fault != "" {
				mu.Lock()
				faults[fault]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	for fault, n := range faults {
		t.Errorf("%d of %d stalled connections: %s", n, conns, fault)
	}
	if took < timeout {
		t.Errorf("all answered after %v, before the %v timeout", took, timeout)
	}
	t.Logf("all %d answered 408 and closed %v after they were opened (timeout %v)", conns, took.Round(10*time.Millisecond), timeout)
}

// plainProxy is the benchmarks' plain Go proxy, net/http's Server with
// httputil.ReverseProxy, running.
type plainProxy struct {
	addr, admin string
	cmd         *exec.Cmd
}

// memory returns a function that reads what the plain proxy's Go runtime
// holds in its heap and goroutine stacks, in bytes, from /debug/vars.
func (p *plainProxy) memory(t *testing.T) func() int64 {
	return func() int64 {
		t.Helper()
		got := send(t, "GET", "http://"+p.admin+"/debug/vars", nil)
		var vars struct {
			Memstats struct{ HeapInuse, StackInuse int64 }
		}
		if err := json.Unmarshal(got.body, &vars); err != nil {
			t.Fatalf("plainproxy's /debug/vars: %v\n%s", err, got.body)
		}
		return vars.Memstats.HeapInuse + vars.Memstats.StackInuse
	}
}

// startPlainProxy builds test/bench/plainproxy, with the race detector
// when the tests run with it, and runs it in front of upstream on a free
// loopback port until the test ends.
func startPlainProxy(t *testing.T, upstream string) *plainProxy {
	t.Helper()
	out := filepath.Join(t.TempDir(), "plainproxy")
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", append(args, "./test/bench/plainproxy")...)
	build.Dir = ".."
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, b)
	}
	addr, admin := freePort(t), freePort(t)
	cmd := exec.Command(out, "--listen", addr, "--admin", admin, "--upstream", upstream)
	cmd.Env = childEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(startTimeout); ; {
		a, aerr := net.Dial("tcp", admin)
		c, err := net.Dial("tcp", addr)
		if aerr == nil {
			a.Close()
		}
		if err == nil {
			c.Close()
		}
		if aerr == nil && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plainproxy did not listen on %s within %v", addr, startTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &plainProxy{addr: addr, admin: admin, cmd: cmd}
}

// freePort returns a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
