package test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quotingConfig enforces a rule on /sessions and observes /observed/sessions,
// in front of quotingUpstream.
const quotingConfig = "testdata/quoting_upstream.yaml"

// The secrets the caller signs in with, which no log line may carry.
const (
	signInPassword = "hunter2"
	signInToken    = "tok-8c1f-4471"
)

var signInBody = []byte(`{"user":"ada","password":"` + signInPassword + `","token":"` + signInToken + `"}`)

// quotingUpstream refuses every sign-in and quotes the request's JSON body
// back as a JSON string: once in request, twice over in trace, beside a
// password sent as null. With ?status=422 it answers a 422 no rule
// matches, quoting the body the same way.
func quotingUpstream(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	once, _ := json.Marshal(string(body))
	inner, _ := json.Marshal(map[string]string{"request": string(body)})
	twice, _ := json.Marshal(string(inner))
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("status") == "422" {
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"message":"cannot process","request":` + string(once) + `,"password":null}`))
		return
	}
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"error":"bad request","request":` + string(once) + `,"trace":` + string(twice) +
		`,"retry":{"password":null,"token":12345}}`))
}

// signIn sends the sign-in to path, with its secrets in the body.
func signIn(t *testing.T, sp *signpost, path string) *reply {
	t.Helper()
	return send(t, "POST", sp.URL+path, signInBody, "Content-Type", "application/json")
}

// TestLogMasksQuotedBody sends a sign-in whose upstream error quotes the
// request's JSON body as a JSON string, to a route that rewrites the error,
// to the same route for an error no rule explains, and to a route in
// observe mode, in the JSON log: the password and the token never reach
// the log, and each body logged, the upstream's and the bodies of the
// sample observe mode records, is JSON still.
func TestLogMasksQuotedBody(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(quotingUpstream))
	sp := startSignpost(t, quotingConfig, up.URL)

	got := signIn(t, sp, "/sessions")
	if got.status != http.StatusBadRequest || !strings.Contains(string(got.body), "sign_in_refused") {
		t.Fatalf("POST /sessions: %d %s, want the rewritten 400", got.status, got.body)
	}
	sp.logFor(t, "rewrote upstream error", wantRequestID(t, got))
	got = signIn(t, sp, "/sessions?status=422")
	sp.logFor(t, "upstream error unmatched", wantRequestID(t, got))
	if got = signIn(t, sp, "/observed/sessions"); got.status != http.StatusBadRequest {
		t.Fatalf("POST /observed/sessions: %d, want the upstream's 400 passed through", got.status)
	}
	sp.waitLog(t, "observed: enforce would rewrite", map[string]any{"route": "sign_in_observed"})
	signIn(t, sp, "/observed/sessions?status=422")
	sp.waitLog(t, "upstream error unmatched", map[string]any{"route": "sign_in_observed"})

	// The observing route's record is written to the log as the process exits.
	terminate(t, sp)
	bodies := 0
	for _, l := range strings.Split(strings.TrimSpace(sp.stdout.String()), "\n") {
		var line any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("a log line is not JSON (%v): %s", err, l)
		}
		for _, body := range loggedBodies(line) {
			bodies++
			if !json.Valid([]byte(body)) || !strings.Contains(body, "[masked]") {
				t.Errorf("a body logged is not the JSON the upstream sent, masked: %s\nin %s", body, l)
			}
		}
	}
	// An upstream body per call, and the request and response bodies of
	// the sample of the 422 observed.
	if bodies < 6 {
		t.Errorf("%d bodies logged, want at least 6", bodies)
	}
	wantNoSecret(t, sp.stdout.String())
}

// loggedBodies returns the upstream_body, request_body and response_body
// strings of a decoded JSON log line, at any depth.
func loggedBodies(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "upstream_body" || k == "request_body" || k == "response_body") {
				out = append(out, s)
			}
			out = append(out, loggedBodies(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, loggedBodies(e)...)
		}
	}
	return out
}

// TestTextLogMasksQuotedBody is TestLogMasksQuotedBody with --log-format
// text: each upstream_body, unquoted, is the JSON the upstream sent,
// masked.
func TestTextLogMasksQuotedBody(t *testing.T) {
	up := newUpstream(t, http.HandlerFunc(quotingUpstream))
	sp := launch(t, "serve", "--config", quotingConfig, "--upstream", up.URL, "--listen", "127.0.0.1:0",
		"--admin", "127.0.0.1:0", "--drain-timeout", "3s", "--log-format", "text")
	listening, ok := waitText(sp, startTimeout, 1, func(l string) bool { return strings.Contains(l, " msg=listening ") })
	if !ok {
		sp.kill()
		t.Fatalf("no msg=listening line within %v:\n%s%s", startTimeout, sp.stdout, sp.stderr)
	}
	m := regexp.MustCompile(` listen=(127\.0\.0\.1:[0-9]+)`).FindStringSubmatch(listening[0])
	if m == nil {
		t.Fatalf("the listening line has no loopback address: %s", listening[0])
	}
	sp.URL = "http://" + m[1]

	for _, path := range []string{"/sessions", "/sessions?status=422", "/observed/sessions", "/observed/sessions?status=422"} {
		signIn(t, sp, path)
	}
	// A rewrite, an error no rule explains, what enforce would have
	// answered, and an error observed: at least four lines with the
	// upstream's body.
	if got, ok := waitText(sp, waitTimeout, 4, hasUpstreamBody); !ok {
		t.Fatalf("%d lines with an upstream_body within %v, want at least 4", len(got), waitTimeout)
	}
	terminate(t, sp)
	for _, l := range textLines(sp.stdout.String(), hasUpstreamBody) {
		_, rest, _ := strings.Cut(l, " upstream_body=")
		quoted, err := strconv.QuotedPrefix(rest)
		body, err2 := strconv.Unquote(quoted)
		if err != nil || err2 != nil || !json.Valid([]byte(body)) || !strings.Contains(body, "[masked]") {
			t.Errorf("upstream_body is not the JSON the upstream sent, masked: %s", l)
		}
	}
	wantNoSecret(t, sp.stdout.String())
}

func hasUpstreamBody(l string) bool { return strings.Contains(l, " upstream_body=") }

// terminate ends signpost with SIGTERM and waits for it to exit, its log
// written.
func terminate(t *testing.T, sp *signpost) {
	t.Helper()
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil || !sp.wait(stopTimeout) {
		t.Fatalf("signpost did not exit within %v of SIGTERM (%v)", stopTimeout, err)
	}
}

// wantNoSecret checks that a log holds neither of the caller's secrets.
func wantNoSecret(t *testing.T, log string) {
	t.Helper()
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, signInPassword) || strings.Contains(l, signInToken) {
			t.Errorf("a secret reached the log: %s", l)
		}
	}
}

// waitText waits up to d for n complete lines of a text log for which ok
// holds, and returns those it found.
func waitText(sp *signpost, d time.Duration, n int, ok func(string) bool) ([]string, bool) {
	deadline := time.After(d)
	for {
		sp.stdout.mu.Lock()
		text, changed := sp.stdout.buf.String(), sp.stdout.changed
		sp.stdout.mu.Unlock()
		if found := textLines(text, ok); len(found) >= n {
			return found, true
		}
		select {
		case <-changed:
		case <-sp.done:
			return textLines(sp.stdout.String(), ok), false
		case <-deadline:
			return textLines(sp.stdout.String(), ok), false
		}
	}
}

// textLines returns the complete lines of text for which ok holds.
func textLines(text string, ok func(string) bool) []string {
	var found []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasSuffix(l, "\n") && ok(l) {
			found = append(found, l)
		}
	}
	return found
}
