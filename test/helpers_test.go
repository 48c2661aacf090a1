package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Bounds on every wait, so that a broken proxy fails a test instead of
// hanging it.
const (
	startTimeout = 10 * time.Second // until the "listening" line
	stopTimeout  = 10 * time.Second // from SIGTERM or kill to exit
	waitTimeout  = 5 * time.Second  // for a chunk, a log line, an event
)

// client talks to signpost and to upstreams directly. It never decodes
// gzip for us, never follows redirects and never uses an HTTP proxy, so
// tests see exactly what signpost sent.
var client = &http.Client{
	Transport: &http.Transport{
		DisableCompression:  true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	},
	Timeout:       20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// signpost is one running signpost process.
type signpost struct {
	URL   string // agent-facing base URL, http://127.0.0.1:port
	Admin string // admin base URL
	Addr  string // agent-facing host:port

	cmd    *exec.Cmd
	stdout *logBuffer // JSON log lines
	stderr *logBuffer
	done   chan struct{} // closed once the process has exited
	err    error         // cmd.Wait's result, set before done is closed
}

// startSignpost runs `signpost serve` with config in front of upstream on
// free loopback ports and waits for its "listening" log line. extra flags
// come last and so override the defaults set here. The process gets SIGTERM
// (then SIGKILL) at cleanup, and its output is logged if the test failed.
func startSignpost(t *testing.T, config, upstream string, extra ...string) *signpost {
	t.Helper()
	args := []string{"serve", "--config", config, "--upstream", upstream,
		"--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--drain-timeout", "3s"}
	sp := launch(t, append(args, extra...)...)
	line, ok := sp.stdout.waitLine(startTimeout, sp.done, func(l logLine) bool { return l["msg"] == "listening" })
	if !ok {
		sp.kill()
		t.Fatalf("signpost did not log \"listening\" within %v (exited: %v)\nstdout:\n%s\nstderr:\n%s",
			startTimeout, sp.exited(), sp.stdout, sp.stderr)
	}
	listen, _ := line["listen"].(string)
	admin, _ := line["admin"].(string)
	if !strings.HasPrefix(listen, "127.0.0.1:") || !strings.HasPrefix(admin, "127.0.0.1:") {
		t.Fatalf("listening line has no loopback addresses: %v", line)
	}
	sp.Addr, sp.URL, sp.Admin = listen, "http://"+listen, "http://"+admin
	return sp
}

// launch starts the binary with args and arranges for its end at cleanup.
func launch(t *testing.T, args ...string) *signpost {
	t.Helper()
	sp := &signpost{stdout: newLogBuffer(), stderr: newLogBuffer(), done: make(chan struct{})}
	sp.cmd = exec.Command(binary, args...)
	sp.cmd.Env = childEnv()
	sp.cmd.Stdout, sp.cmd.Stderr = sp.stdout, sp.stderr
	sp.cmd.WaitDelay = time.Second
	if err := sp.cmd.Start(); err != nil {
		t.Fatalf("starting %s %v: %v", binary, args, err)
	}
	go func() {
		sp.err = sp.cmd.Wait()
		close(sp.done)
	}()
	t.Cleanup(func() {
		if !sp.exited() {
			_ = sp.cmd.Process.Signal(syscall.SIGTERM)
			if !sp.wait(stopTimeout) {
				t.Errorf("signpost did not exit within %v of SIGTERM", stopTimeout)
				sp.kill()
			}
		}
		if strings.Contains(sp.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("the race detector reported a data race in signpost")
		}
		if t.Failed() {
			t.Logf("signpost %v\nstdout:\n%s\nstderr:\n%s", args, sp.stdout, sp.stderr)
		}
	})
	return sp
}

// childEnv is the environment of the binary under test: ours, without the
// race runtime's default one-second sleep at exit, which would otherwise
// be timed as part of shutdown.
func childEnv() []string {
	return append(os.Environ(), "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
}

func (sp *signpost) exited() bool {
	select {
	case <-sp.done:
		return true
	default:
		return false
	}
}

// wait reports whether the process exited within d.
func (sp *signpost) wait(d time.Duration) bool {
	select {
	case <-sp.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (sp *signpost) kill() {
	_ = sp.cmd.Process.Kill()
	sp.wait(stopTimeout)
}

// exitCode is the process's exit status; call it only after done.
func (sp *signpost) exitCode() int { return sp.cmd.ProcessState.ExitCode() }

// logLine is one decoded JSON log line.
type logLine map[string]any

// logBuffer collects a child's output and lets tests wait for lines.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced at every write
}

func newLogBuffer() *logBuffer { return &logBuffer{changed: make(chan struct{})} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLine waits up to d for a complete JSON line for which ok holds, and
// gives up early when abort is closed.
func (b *logBuffer) waitLine(d time.Duration, abort <-chan struct{}, ok func(logLine) bool) (logLine, bool) {
	deadline := time.After(d)
	for {
		b.mu.Lock()
		text, changed := b.buf.String(), b.changed
		b.mu.Unlock()
		for _, l := range strings.SplitAfter(text, "\n") {
			var line logLine
			if strings.HasSuffix(l, "\n") && json.Unmarshal([]byte(l), &line) == nil && ok(line) {
				return line, true
			}
		}
		select {
		case <-changed:
		case <-abort:
			return nil, false
		case <-deadline:
			return nil, false
		}
	}
}

// waitLog waits for a log line with msg and every attribute in attrs, as
// JSON decodes them (numbers are float64).
func (sp *signpost) waitLog(t *testing.T, msg string, attrs map[string]any) logLine {
	t.Helper()
	line, ok := sp.stdout.waitLine(waitTimeout, nil, func(l logLine) bool {
		if l["msg"] != msg {
			return false
		}
		for k, v := range attrs {
			if l[k] != v {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("no log line {msg: %q, %v} within %v", msg, attrs, waitTimeout)
	}
	return line
}

// logFor waits for the log line with msg about the request whose answer
// carried id in X-Request-Id.
func (sp *signpost) logFor(t *testing.T, msg, id string) logLine {
	t.Helper()
	if id == "" {
		t.Fatalf("no request id to find the %q log line by", msg)
	}
	return sp.waitLog(t, msg, map[string]any{"request_id": id})
}

// withSettings copies the rule file at path into a temporary directory
// with top-level lines appended, e.g. "unmatched: passthrough", and returns
// the copy's path. The copy keeps the file's base name.
func withSettings(t *testing.T, path string, lines ...string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = append(b, "\n# Added by the test.\n"+strings.Join(lines, "\n")+"\n"...)
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// passthrough returns a copy of the rule file at path whose errors no rule
// matches pass through untouched, instead of being wrapped.
func passthrough(t *testing.T, path string) string {
	t.Helper()
	return withSettings(t, path, "unmatched: passthrough")
}

// counting serves h and counts the requests that reach it.
type counting struct {
	h http.Handler
	n atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.h.ServeHTTP(w, r)
}

// newUpstream starts a loopback upstream serving h, closed at cleanup
// after the gates its handlers may wait on are opened.
func newUpstream(t *testing.T, h http.Handler, gates ...*gate) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		// Close waits for handlers; release those still held first.
		for _, g := range gates {
			g.open()
		}
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// reply is a response read to its end.
type reply struct {
	status int
	header http.Header
	body   []byte
	// contentLength is what the client's transport saw: -1 for a body
	// without Content-Length.
	contentLength    int64
	transferEncoding []string
}

// send makes a request with an optional body and header pairs ("K", "V")
// and reads the answer to its end. A nil body sends none; the body is sent
// with a Content-Length.
func send(t *testing.T, method, url string, body []byte, header ...string) *reply {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return do(t, req)
}

// do sends req with the shared client, bounded by the client's timeout.
func do(t *testing.T, req *http.Request) *reply {
	t.Helper()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return &reply{status: res.StatusCode, header: res.Header, body: body,
		contentLength: res.ContentLength, transferEncoding: res.TransferEncoding}
}

// Media types of the bodies signpost writes.
const (
	jsonType    = "application/json"
	problemType = "application/problem+json"
)

// wantJSONError checks a body signpost wrote itself: the status, the exact
// body, and framing that matches it.
func wantJSONError(t *testing.T, got *reply, status int, body string) {
	t.Helper()
	wantBody(t, got, status, jsonType, body)
}

// wantProblem is wantJSONError for an RFC 9457 Problem Details body.
func wantProblem(t *testing.T, got *reply, status int, body string) {
	t.Helper()
	wantBody(t, got, status, problemType, body)
}

func wantBody(t *testing.T, got *reply, status int, contentType, body string) {
	t.Helper()
	if got.status != status {
		t.Errorf("status = %d, want %d", got.status, status)
	}
	if string(got.body) != body {
		t.Errorf("body =\n\t%s\nwant\n\t%s", got.body, body)
	}
	wantFramingOf(t, got, contentType)
}

// wantFraming checks that a body signpost wrote is plain JSON framed by
// its own length, with a request id.
func wantFraming(t *testing.T, got *reply) {
	t.Helper()
	wantFramingOf(t, got, jsonType)
}

func wantFramingOf(t *testing.T, got *reply, contentType string) {
	t.Helper()
	if ct := got.header.Get("Content-Type"); ct != contentType {
		t.Errorf("Content-Type = %q, want %s", ct, contentType)
	}
	wantRequestID(t, got)
	if cl := got.header.Get("Content-Length"); cl != strconv.Itoa(len(got.body)) {
		t.Errorf("Content-Length = %q, want %d (the body's length)", cl, len(got.body))
	}
	if got.contentLength != int64(len(got.body)) {
		t.Errorf("response ContentLength = %d, want %d", got.contentLength, len(got.body))
	}
	if ce, ok := got.header["Content-Encoding"]; ok {
		t.Errorf("Content-Encoding = %q on a body signpost wrote, want none", ce)
	}
	if !json.Valid(got.body) {
		t.Errorf("body is not valid JSON: %q", got.body)
	}
}

// hopByHop are the headers a proxy may legitimately change, plus Date.
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Date"}

// endToEnd returns h without hop-by-hop headers and Date.
func endToEnd(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range hopByHop {
		out.Del(k)
	}
	return out
}

// wantSame checks that signpost passed an upstream answer through
// unchanged: status, end-to-end headers and body bytes. The one header
// signpost sets, X-Request-Id, is checked apart: present and well formed
// (TestRequestID checks its value).
func wantSame(t *testing.T, got, direct *reply) {
	t.Helper()
	if got.status != direct.status {
		t.Errorf("status = %d, upstream answered %d", got.status, direct.status)
	}
	if !bytes.Equal(got.body, direct.body) {
		t.Errorf("body differs from the upstream's:\n\tgot  %q\n\twant %q", clip(got.body), clip(direct.body))
	}
	g, d := endToEnd(got.header), endToEnd(direct.header)
	wantRequestID(t, got)
	g.Del(requestIDHeader)
	d.Del(requestIDHeader)
	for _, k := range sortedKeys(g, d) {
		if !slices.Equal(g[k], d[k]) {
			t.Errorf("header %s = %q, upstream sent %q", k, g[k], d[k])
		}
	}
}

// requestIDHeader carries the id that ties a call to signpost's log line.
const requestIDHeader = "X-Request-Id"

// requestIDPattern is what a request id signpost keeps or generates looks
// like: one token of at most 128 characters, safe to log and echo.
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

// wantRequestID checks that an answer carries exactly one well-formed
// X-Request-Id and returns it.
func wantRequestID(t *testing.T, got *reply) string {
	t.Helper()
	ids := got.header.Values(requestIDHeader)
	if len(ids) != 1 || !requestIDPattern.MatchString(ids[0]) {
		t.Errorf("X-Request-Id = %q, want one token of 1 to 128 characters", ids)
		return ""
	}
	return ids[0]
}

func sortedKeys(hs ...http.Header) []string {
	var keys []string
	for _, h := range hs {
		for k := range h {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// clip shortens a body for a failure message.
func clip(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "…"...)
	}
	return b
}

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads and parses the admin listener's /metrics.
func (sp *signpost) scrape(t *testing.T) []sample {
	t.Helper()
	got := send(t, "GET", sp.Admin+"/metrics", nil)
	if got.status != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", got.status, got.body)
	}
	samples, err := parseMetrics(got.body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, got.body)
	}
	return samples
}

// counter returns the value of the series name{labels}, labels given as
// pairs and matched exactly, or 0 when the series does not exist yet.
func (sp *signpost) counter(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, s := range sp.scrape(t) {
		if s.name == name && mapsEqual(s.labels, want) {
			return s.value
		}
	}
	return 0
}

// wantCounter checks the value of the series name{labels}.
func (sp *signpost) wantCounter(t *testing.T, want float64, name string, labels ...string) {
	t.Helper()
	if got := sp.counter(t, name, labels...); got != want {
		t.Errorf("%s%s = %v, want %v", name, labelText(labels), got, want)
	}
}

// total sums every series of the metric name.
func (sp *signpost) total(t *testing.T, name string) float64 {
	t.Helper()
	sum := 0.0
	for _, s := range sp.scrape(t) {
		if s.name == name {
			sum += s.value
		}
	}
	return sum
}

func labelText(pairs []string) string {
	var parts []string
	for i := 0; i+1 < len(pairs); i += 2 {
		parts = append(parts, fmt.Sprintf("%s=%q", pairs[i], pairs[i+1]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// parseMetrics reads the samples of the Prometheus text exposition format:
// name{label="value",...} value [timestamp]. Comments are skipped.
func parseMetrics(text []byte) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %v", n, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, errors.New("no metric name")
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, ", ")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, `="`)
			if eq <= 0 {
				return s, errors.New("malformed label")
			}
			key := line[:eq]
			line = line[eq+2:]
			var v strings.Builder
			closed := false
			for j := 0; j < len(line); j++ {
				c := line[j]
				if c == '\\' && j+1 < len(line) {
					j++
					switch line[j] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(line[j])
					}
					continue
				}
				if c == '"' {
					line, closed = line[j+1:], true
					break
				}
				v.WriteByte(c)
			}
			if !closed {
				return s, errors.New("unterminated label value")
			}
			s.labels[key] = v.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, errors.New("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// gate lets a test hold an upstream handler until it says so. The handler
// also gives up when its request is cancelled or after a bound, so that no
// test can hang on it.
type gate struct {
	once    sync.Once
	release chan struct{}
}

// newGate returns a closed gate; pass it to newUpstream too, so that it
// opens before the upstream is closed.
func newGate(t *testing.T) *gate {
	g := &gate{release: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// wait blocks until the gate opens, ctx ends or the bound passes, and
// reports whether the gate opened.
func (g *gate) wait(ctx context.Context) bool {
	select {
	case <-g.release:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(2 * stopTimeout):
		return false
	}
}

// canned is one fixed upstream answer.
type canned struct {
	status int
	header []string // pairs, e.g. "Content-Type", "application/json"
	body   []byte
	// chunked writes the body in two flushed pieces without a
	// Content-Length; otherwise Content-Length is set.
	chunked bool
}

// cannedUpstream serves fixed answers keyed by "METHOD /path" and fails
// the test on any other request.
func cannedUpstream(t *testing.T, answers map[string]canned) *httptest.Server {
	t.Helper()
	return newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			t.Errorf("upstream: unexpected request %s %s", r.Method, r.URL.Path)
			http.Error(w, "no canned answer", http.StatusTeapot)
			return
		}
		for i := 0; i+1 < len(a.header); i += 2 {
			w.Header().Add(a.header[i], a.header[i+1])
		}
		if a.chunked {
			w.WriteHeader(a.status)
			half := len(a.body) / 2
			_, _ = w.Write(a.body[:half])
			http.NewResponseController(w).Flush()
			_, _ = w.Write(a.body[half:])
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	}))
}

// answerTicket answers as a ticket API does: a bare 400 to a PATCH, the
// ticket to anything else.
func answerTicket(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPatch {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"Invalid status"}`)
		return
	}
	_, _ = io.WriteString(w, `{"id":"T-8841","status":"open"}`)
}

var callerIDs atomic.Int64

// newCaller returns an X-Session-Id no request has sent yet, for requests
// that stand for agents of their own: none is told its value was already
// rejected, or to stop, for another's failure.
func newCaller() string { return "caller-" + strconv.FormatInt(callerIDs.Add(1), 10) }
