package test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// TestServeUsesTheCPUsItIsGiven checks that signpost runs as many threads
// of Go code at once as it has CPUs to run them on, as a container's CPU
// set or a taskset gives: more would only contend for them.
func TestServeUsesTheCPUsItIsGiven(t *testing.T) {
	up := newUpstream(t, nil)
	sp := startSignpost(t, "../configs/tickets.yaml", up.URL)
	line := sp.waitLog(t, "listening", nil)
	if got := line["gomaxprocs"]; got != float64(runtime.NumCPU()) {
		t.Errorf("gomaxprocs = %v with the test's %d CPUs", got, runtime.NumCPU())
	}

	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset is not installed (util-linux); the one-CPU case is not checked")
	}
	cmd := exec.Command(taskset, "-c", "0", binary, "serve", "--config", "../configs/tickets.yaml",
		"--upstream", up.URL, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--watch=false")
	cmd.Env = childEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	found := make(chan float64, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == "listening" {
				found <- l["gomaxprocs"].(float64)
				return
			}
		}
		close(found)
	}()
	select {
	case n, ok := <-found:
		if !ok || n != 1 {
			t.Errorf("under taskset -c 0, gomaxprocs = %v; want 1", n)
		}
	case <-time.After(startTimeout):
		t.Fatal(`no "listening" line within ` + startTimeout.String())
	}
}
