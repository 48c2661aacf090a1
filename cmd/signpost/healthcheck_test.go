package main

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/admin"
)

// TestHealthcheck probes the real admin handler: live while it serves,
// ready only when every check passes, with the failing check named.
func TestHealthcheck(t *testing.T) {
	upstreamErr := errors.New("dial tcp 127.0.0.1:8081: connect: connection refused")
	var failing error
	admin := httptest.NewServer(admin.Handler(admin.Admin{Ready: func() []admin.Check {
		return []admin.Check{{Name: "rules"}, {Name: "upstream", Err: failing}}
	}}))
	defer admin.Close()
	addr := strings.TrimPrefix(admin.URL, "http://")
	_, port, _ := net.SplitHostPort(addr)
	dead := deadAddress(t)

	for _, tc := range []struct {
		name    string
		args    []string
		failing error
		code    int
		stdout  string // must appear
		stderr  string // must appear
	}{
		{name: "live", args: []string{"--admin", addr}, code: 0,
			stdout: "GET http://" + addr + "/livez: 200 OK\nok\n"},
		{name: "live while the upstream is down", args: []string{"--admin", addr}, failing: upstreamErr, code: 0,
			stdout: "/livez: 200 OK"},
		{name: "ready", args: []string{"--admin", addr, "--ready"}, code: 0,
			stdout: "GET http://" + addr + "/readyz?verbose: 200 OK\n[+]rules ok\n[+]upstream ok\n"},
		{name: "not ready", args: []string{"--admin", addr, "--ready"}, failing: upstreamErr, code: 1,
			stderr: "GET http://" + addr + "/readyz?verbose: 503 Service Unavailable, want 200 OK\n[+]rules ok\n[-]upstream failed: " + upstreamErr.Error()},
		{name: "every address is probed on loopback", args: []string{"--admin", ":" + port}, code: 0,
			stdout: "GET http://127.0.0.1:" + port + "/livez: 200 OK"},
		{name: "the unspecified address too", args: []string{"--admin", "0.0.0.0:" + port}, code: 0,
			stdout: "GET http://127.0.0.1:" + port + "/livez: 200 OK"},
		{name: "nothing listening", args: []string{"--admin", dead}, code: 1,
			stderr: "signpost healthcheck: Get \"http://" + dead + "/livez\": dial tcp " + dead + ": connect: connection refused"},
		{name: "bad address", args: []string{"--admin", "9090"}, code: 2,
			stderr: `--admin "9090" is not a listen address; must be host:port, e.g. 127.0.0.1:8080 or :8080`},
		{name: "bad timeout", args: []string{"--timeout", "0s"}, code: 2,
			stderr: "--timeout 0s: must be a positive duration, e.g. --timeout 2s"},
		{name: "stray argument", args: []string{addr}, code: 2,
			stderr: `unexpected argument "` + addr + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failing = tc.failing
			code, stdout, stderr := run(t, append([]string{"healthcheck"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout =\n%s\nwant it to contain\n%s", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr =\n%s\nwant it to contain\n%s", stderr, tc.stderr)
			}
		})
	}
}

// deadAddress returns a loopback address nothing listens on.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestHealthcheckTimeout checks that a hung admin listener fails the probe
// within its --timeout rather than hanging the container runtime's check.
func TestHealthcheckTimeout(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer hung.Close()
	defer close(release)
	code, _, stderr := run(t, "healthcheck", "--admin", strings.TrimPrefix(hung.URL, "http://"), "--timeout", "100ms")
	if code != 1 || !strings.Contains(stderr, "Client.Timeout exceeded") {
		t.Errorf("exit code %d, stderr %q; want 1 and a timeout", code, stderr)
	}
}
