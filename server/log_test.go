package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/logbuffer"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// stuck is a log output that never returns, as a full pipe nobody reads.
type stuck struct{ release chan struct{} }

func (s stuck) Write(p []byte) (int, error) {
	<-s.release
	return len(p), nil
}

// TestLogNeverHoldsARequest serves with the log's output stuck: every
// request is still answered, the lines that found no room are dropped,
// and /metrics counts them.
func TestLogNeverHoldsARequest(t *testing.T) {
	out := stuck{release: make(chan struct{})}
	lines := logbuffer.New(out, logbuffer.Options{Size: 4 << 10, Batch: 1 << 10, Delay: time.Millisecond})
	defer func() { close(out.release); lines.Close() }()

	cfg, err := rules.Parse("rules.yaml", []byte(reloadRules("v1")))
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan [2]net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{
			Options: proxy.Options{Transport: reloadUpstream, AccessLog: true,
				Log: slog.New(slog.NewJSONHandler(lines, nil))},
			LogLinesDropped: lines.Dropped,
			Listen:          "127.0.0.1:0", Admin: "127.0.0.1:0",
			Ready:        func(l, a net.Addr) { ready <- [2]net.Addr{l, a} },
			DrainTimeout: 2 * time.Second,
		})
	}()
	var addrs [2]net.Addr
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not start within 5s")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	agent, admin := "http://"+addrs[0].String(), "http://"+addrs[1].String()
	// Each rejection logs two lines, the rewrite's and the access line.
	for i := range 200 {
		req, _ := http.NewRequest("PATCH", agent+"/tickets/T-1", strings.NewReader(`{"status":"OPEN"}`))
		req.Header.Set("X-Session-Id", newCaller())
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d with the log stuck: %v", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 400 || gjson.GetBytes(body, "error").String() != "invalid_status" {
			t.Fatalf("request %d with the log stuck: %d %s", i, res.StatusCode, body)
		}
	}
	if lines.Dropped() == 0 {
		t.Fatal("no line dropped with the log stuck and its buffer 4 KiB")
	}
	res, err := client.Get(admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := "signpost_log_lines_dropped_total "
	i := strings.Index(string(metricsText), "\n"+want)
	if i < 0 {
		t.Fatalf("/metrics has no %s", want)
	}
	if v := strings.Fields(string(metricsText[i+1:]))[1]; v == "0" {
		t.Errorf("%s%s with %d lines dropped", want, v, lines.Dropped())
	}
}
