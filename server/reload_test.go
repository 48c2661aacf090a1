package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// reloadRules is a rule file whose one rewrite says msg, so that a test
// can tell which version of the rules answered.
func reloadRules(msg string) string {
	return `upstream: http://upstream.test
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    fields:
      status: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
        message: "` + msg + `"
`
}

// brokenRules are rule files that must not load, each as a writer in a
// hurry or a slip of the keyboard would leave it.
var brokenRules = map[string]string{
	"yaml syntax":  "routes:\n  update_ticket: {method: PATCH\n",
	"unknown key":  strings.Replace(reloadRules("broken"), "message:", "mesage:", 1),
	"bad regex":    strings.Replace(reloadRules("broken"), "equals: Invalid status", "regex: '([a-'", 1),
	"empty":        "",
	"half written": reloadRules("broken")[:strings.Index(reloadRules("broken"), "errors:")+len("errors:\n      - match: {status: 40")],
}

// reloadUpstream answers every call with the ticket API's bare 400.
var reloadUpstream = &answering{status: 400, header: http.Header{"Content-Type": {"application/json"}},
	body: []byte(`{"error":"Invalid status"}`)}

// messageOf is what the proxy p answers a status the upstream refuses
// with: a permitted one, so that the rule's own message, not the field's
// constraint, is the answer.
func messageOf(t *testing.T, h http.Handler) string {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest("PATCH", "/tickets/T-1", strings.NewReader(`{"status":"open"}`))
	r.Header.Set("X-Session-Id", newCaller())
	h.ServeHTTP(w, r)
	if w.Code != 400 || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("answer %d %q, want a rewritten 400", w.Code, w.Body)
	}
	return gjson.GetBytes(w.Body.Bytes(), "message").String()
}

var callerIDs atomic.Int64

// newCaller returns an X-Session-Id no request has sent yet: each question
// about the rules in force comes from a caller of its own, never told the
// value was already rejected.
func newCaller() string { return "caller-" + strconv.FormatInt(callerIDs.Add(1), 10) }

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceFile saves text as an editor does: a new file renamed over the old.
func replaceFile(t *testing.T, path, text string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	writeFile(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// reloadFixture is a reloader over a rule file in a temporary directory,
// with the proxies it builds answering from reloadUpstream.
type reloadFixture struct {
	*reloader
	file  string
	reg   *prometheus.Registry
	state *learn.State
	logs  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newReloadFixture(t *testing.T, file, text string) *reloadFixture {
	t.Helper()
	writeFile(t, file, text)
	return loadReloadFixture(t, file)
}

// loadReloadFixture is newReloadFixture for a file already in place.
func loadReloadFixture(t *testing.T, file string) *reloadFixture {
	t.Helper()
	f := &reloadFixture{file: file, reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	m := metrics.New(f.reg)
	log := slog.New(slog.NewJSONHandler(f.logs, nil))
	cfg, err := rules.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	shared := proxy.NewShared(cfg, proxy.SharedOptions{Metrics: m, Log: log})
	t.Cleanup(shared.Close)
	f.state = shared.State
	build := func(c *rules.Config) (*proxy.Proxy, error) {
		return proxy.New(c, proxy.Options{Transport: reloadUpstream, Metrics: m, Log: log, Shared: shared})
	}
	p, err := build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.reloader = newReloader(p, func() (*rules.Config, error) { return rules.Load(file) }, build, m, log, time.Now)
	return f
}

// run runs the reload loop until the test ends.
func (f *reloadFixture) run(t *testing.T, sig <-chan os.Signal, debounce time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.reloader.run(ctx, sig, true, debounce)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func (f *reloadFixture) reloads(t *testing.T, result string) float64 {
	t.Helper()
	return metricstest.Counter(t, f.reg, "signpost_rules_reloads_total", "result", result)
}

func (f *reloadFixture) gauge(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) == 1 {
			return mf.Metric[0].GetGauge().GetValue()
		}
	}
	return 0
}

// waitMessage waits up to five seconds for the proxy in force to answer
// with want.
func (f *reloadFixture) waitMessage(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := messageOf(t, f.Proxy())
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rules in force answer %q, want %q within 5s\nlogs:\n%s", got, want, f.logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReloadSwapsValidRules(t *testing.T) {
	f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v1"))
	before := f.Proxy()
	if got := messageOf(t, before); got != "v1" {
		t.Fatalf("message %q, want v1", got)
	}
	writeFile(t, f.file, reloadRules("v2"))
	if err := f.Reload(TriggerAdmin); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := messageOf(t, f.Proxy()); got != "v2" {
		t.Errorf("after the reload: message %q, want v2", got)
	}
	if got := messageOf(t, before); got != "v1" {
		t.Errorf("the proxy a request in flight holds answers %q, want v1 still", got)
	}
	st := f.Status()
	if !st.OK || st.At.IsZero() || st.Since != st.At || len(st.Problems) != 0 {
		t.Errorf("status %+v, want OK at the reload", st)
	}
	if got := f.reloads(t, "success"); got != 1 {
		t.Errorf("reloads{result=success} = %v, want 1", got)
	}
	g := f.gauge(t, "signpost_rules_last_reload_success_timestamp_seconds")
	if want := float64(st.Since.Unix()); g < want || g > want+1 {
		t.Errorf("last reload success timestamp %v, want %v", g, want)
	}
}

func TestReloadKeepsOldRulesOnProblems(t *testing.T) {
	for name, text := range brokenRules {
		t.Run(name, func(t *testing.T) {
			f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v1"))
			before := f.Proxy()
			since := f.Status().Since
			writeFile(t, f.file, text)
			err := f.Reload(TriggerSignal)
			var ps rules.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Reload of a broken file: %v, want rules.Problems", err)
			}
			if f.Proxy() != before {
				t.Errorf("a broken file replaced the rules in force")
			}
			if got := messageOf(t, f.Proxy()); got != "v1" {
				t.Errorf("message %q after a failed reload, want v1", got)
			}
			st := f.Status()
			if st.OK || st.At.IsZero() || !st.Since.Equal(since) || len(st.Problems) != len(ps) {
				t.Errorf("status %+v, want a failure that keeps the rules loaded at %v", st, since)
			}
			if got := f.reloads(t, "failure"); got != 1 {
				t.Errorf("reloads{result=failure} = %v, want 1", got)
			}
			if got := f.reloads(t, "success"); got != 0 {
				t.Errorf("reloads{result=success} = %v, want 0", got)
			}
			logs := f.logs.String()
			for _, p := range ps {
				if !strings.Contains(logs, mustJSON(p.String())) {
					t.Errorf("the logs lack the problem as check prints it: %s\nlogs:\n%s", p, logs)
				}
			}
			if !strings.Contains(logs, `"msg":"rules reload rejected"`) || !strings.Contains(logs, "still serving the rules loaded at") {
				t.Errorf("no summary line in the logs:\n%s", logs)
			}
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestReloadWithoutUpstream: a file that loads but names no upstream, when
// the command line gives none, is refused like a broken one.
func TestReloadWithoutUpstream(t *testing.T) {
	f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v1"))
	writeFile(t, f.file, strings.Replace(reloadRules("v2"), "upstream: http://upstream.test\n", "", 1))
	err := f.Reload(TriggerAdmin)
	if err == nil || !strings.Contains(err.Error(), "no upstream") {
		t.Fatalf("Reload: %v, want no upstream", err)
	}
	if got := messageOf(t, f.Proxy()); got != "v1" {
		t.Errorf("message %q, want v1", got)
	}
	if st := f.Status(); st.OK || len(st.Problems) != 1 || st.Problems[0].File != f.file {
		t.Errorf("status %+v, want one problem in %s", st, f.file)
	}
}

// TestReloadWarnsOfRestartOnlySettings: new addresses are logged as taking
// effect on restart, unless a flag overrides them.
func TestReloadWarnsOfRestartOnlySettings(t *testing.T) {
	f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v1"))
	f.adminFixed = true
	writeFile(t, f.file, "listen: 127.0.0.1:7070\nadmin: 127.0.0.1:7071\n"+reloadRules("v2"))
	if err := f.Reload(TriggerAdmin); err != nil {
		t.Fatal(err)
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "a new listen: address takes effect only on restart") {
		t.Errorf("no warning about the new listen address:\n%s", logs)
	}
	if strings.Contains(logs, "a new admin: address") {
		t.Errorf("a warning about the admin address, which a flag overrides:\n%s", logs)
	}
}

func TestReloadOnRuleFileChange(t *testing.T) {
	f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v1"))
	f.run(t, nil, 20*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // let the watcher start
	replaceFile(t, f.file, reloadRules("v2"))
	f.waitMessage(t, "v2")
	writeFile(t, f.file, reloadRules("v3")) // in place this time
	f.waitMessage(t, "v3")
	replaceFile(t, f.file, brokenRules["unknown key"])
	waitFor(t, func() bool { return f.reloads(t, "failure") == 1 })
	if got := messageOf(t, f.Proxy()); got != "v3" {
		t.Errorf("message %q after a broken save, want v3", got)
	}
	if got := f.reloads(t, "success"); got != 2 {
		t.Errorf("reloads{result=success} = %v, want 2", got)
	}
}

// TestReloadOnCatalogChange: a catalog lives in another directory than the
// rule file, and a change to it alone reloads the rules.
func TestReloadOnCatalogChange(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "catalogs"), 0o755); err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(dir, "catalogs", "status.yaml")
	writeFile(t, catalog, "rule: must be a status\nexample: open\nvalues: [open, closed]\n")
	text := strings.Replace(reloadRules("v1"), "{enum: [open, pending, closed]}", "{catalog: catalogs/status.yaml}", 1)
	text = strings.Replace(text, `        message: "v1"`+"\n", "", 1)
	f := newReloadFixture(t, filepath.Join(dir, "rules.yaml"), text)
	if got := messageOf(t, f.Proxy()); !strings.Contains(got, "open, closed") {
		t.Fatalf("message %q, want the catalog's values listed", got)
	}
	f.run(t, nil, 20*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	replaceFile(t, catalog, "rule: must be a status\nexample: open\nvalues: [open, pending, closed]\n")
	f.waitMessage(t, "allowed values: open, pending, closed")

	// A broken catalog is a broken load: the rules in force stay, and the
	// problem names the catalog's file.
	writeFile(t, catalog, "rule: must be a status\nexample: nope\nvalues: [open]\n")
	waitFor(t, func() bool { return f.reloads(t, "failure") == 1 })
	if st := f.Status(); st.OK || len(st.Problems) == 0 || st.Problems[0].File != catalog {
		t.Errorf("status %+v, want a problem in %s", st, catalog)
	}
	if got := messageOf(t, f.Proxy()); got != "allowed values: open, pending, closed" {
		t.Errorf("message %q after a broken catalog, want the last good one", got)
	}
}

// TestReloadDebounces: a burst of saves is read once, as it ends; a file
// beside the rules that changes, or a save that changes nothing, reloads
// nothing.
func TestReloadDebounces(t *testing.T) {
	f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v0"))
	f.run(t, nil, 300*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	for i := 1; i <= 20; i++ {
		writeFile(t, f.file, reloadRules(fmt.Sprintf("v%d", i)))
	}
	f.waitMessage(t, "v20")
	time.Sleep(400 * time.Millisecond)
	// Twenty saves within well under the debounce: one reload, or two
	// should the machine stall between two saves for 300 ms.
	if got := f.reloads(t, "success"); got < 1 || got > 2 {
		t.Errorf("reloads{result=success} = %v after a burst of 20 saves, want 1", got)
	}
	n := f.reloads(t, "success")
	writeFile(t, filepath.Join(filepath.Dir(f.file), "notes.txt"), "unrelated\n")
	writeFile(t, f.file, reloadRules("v20")) // the same content
	time.Sleep(500 * time.Millisecond)
	if got := f.reloads(t, "success") + f.reloads(t, "failure"); got != n {
		t.Errorf("reloads = %v after changes that leave the rules as they were, want %v", got, n)
	}
}

// TestReloadOnConfigMapSwap mimics a Kubernetes ConfigMap volume: the rule
// file is a symlink into ..data, itself a symlink to a timestamped
// directory, and an update swaps ..data atomically.
func TestReloadOnConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name, text string) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name, "rules.yaml"), text)
	}
	version("..2026_11_30_04_00_00.1", reloadRules("v1"))
	if err := os.Symlink("..2026_11_30_04_00_00.1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rules.yaml")
	if err := os.Symlink("..data/rules.yaml", file); err != nil {
		t.Fatal(err)
	}
	f := loadReloadFixture(t, file)
	f.run(t, nil, 20*time.Millisecond)
	time.Sleep(50 * time.Millisecond)

	swap := func(name, text string, old string) {
		version(name, text)
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(name, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			t.Fatal(err)
		}
	}
	swap("..2026_11_30_04_01_00.2", reloadRules("v2"), "..2026_11_30_04_00_00.1")
	f.waitMessage(t, "v2")
	swap("..2026_11_30_04_02_00.3", reloadRules("v3"), "..2026_11_30_04_01_00.2")
	f.waitMessage(t, "v3")
}

func TestReloadOnSignal(t *testing.T) {
	f := newReloadFixture(t, filepath.Join(t.TempDir(), "rules.yaml"), reloadRules("v1"))
	sig := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.reloader.run(ctx, sig, false, 0) // not watching: only the signal reloads
	}()
	defer func() { cancel(); <-done }()
	writeFile(t, f.file, reloadRules("v2"))
	time.Sleep(100 * time.Millisecond)
	if got := messageOf(t, f.Proxy()); got != "v1" {
		t.Fatalf("message %q with watching off and no signal, want v1", got)
	}
	sig <- syscall.SIGHUP
	f.waitMessage(t, "v2")
	if !strings.Contains(f.logs.String(), `"trigger":"signal"`) {
		t.Errorf("the reload is not logged as the signal's:\n%s", f.logs)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeReloads drives Serve in process: POST /-/reload swaps valid
// rules and answers a broken file with its problems, GET /readyz sees the
// upstream, and cancelling the context shuts everything down (TestMain
// checks that no goroutine is left).
func TestServeReloads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	// The upstream the readiness check dials: a listener that accepts.
	upLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer upLn.Close()
	writeFile(t, file, strings.Replace(reloadRules("v1"), "http://upstream.test", "http://"+upLn.Addr().String(), 1))
	cfg, err := rules.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	type addrs struct{ listen, admin net.Addr }
	ready := make(chan addrs, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{
			Options: proxy.Options{Transport: reloadUpstream},
			Listen:  "127.0.0.1:0", Admin: "127.0.0.1:0",
			Ready: func(l, a net.Addr) { ready <- addrs{l, a} },
			Load:  func() (*rules.Config, error) { return rules.Load(file) },
			Watch: true, Debounce: 20 * time.Millisecond,
			DrainTimeout: 2 * time.Second,
		})
	}()
	var sp addrs
	select {
	case sp = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not start within 5s")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	call := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("X-Session-Id", newCaller())
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	agent, admin := "http://"+sp.listen.String(), "http://"+sp.admin.String()
	message := func() string {
		_, b := call("PATCH", agent+"/tickets/T-1", `{"status":"open"}`)
		return gjson.Get(b, "message").String()
	}
	if got := message(); got != "v1" {
		t.Fatalf("message %q, want v1", got)
	}
	// The watcher reloads too; writing in place and posting at once
	// checks that the two do not trip over each other.
	writeFile(t, file, strings.Replace(reloadRules("v2"), "http://upstream.test", "http://"+upLn.Addr().String(), 1))
	code, body := call("POST", admin+"/-/reload", "")
	if code != 200 || gjson.Get(body, "result").String() != "success" {
		t.Errorf("POST /-/reload: %d %s, want 200 success", code, body)
	}
	if got := message(); got != "v2" {
		t.Errorf("message %q after POST /-/reload, want v2", got)
	}
	writeFile(t, file, brokenRules["bad regex"])
	code, body = call("POST", admin+"/-/reload", "")
	problems := gjson.Get(body, "problems").Array()
	if code != 422 || gjson.Get(body, "result").String() != "failure" || len(problems) == 0 ||
		!strings.HasPrefix(problems[0].String(), file+":") {
		t.Errorf("POST /-/reload of a broken file: %d %s, want 422 with positioned problems", code, body)
	}
	if got := message(); got != "v2" {
		t.Errorf("message %q after a rejected reload, want v2", got)
	}
	if code, _ := call("GET", admin+"/-/reload", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}
	if code, body := call("GET", admin+"/readyz?verbose", ""); code != 200 || !strings.Contains(body, "upstream") {
		t.Errorf("GET /readyz?verbose: %d %q, want 200 with the upstream check", code, body)
	}
	if code, body := call("GET", admin+"/livez", ""); code != 200 {
		t.Errorf("GET /livez: %d %q", code, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after its context ended, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return within 5s of its context ending")
	}
}

// TestUpstreamProbe: the readiness check dials at most once per TTL.
func TestUpstreamProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	u := &upstreamProbe{timeout: time.Second, ttl: time.Hour}
	if err := u.check(target); err != nil {
		t.Fatalf("a listening upstream: %v", err)
	}
	ln.Close()
	if err := u.check(target); err != nil {
		t.Errorf("within the TTL the cached answer stands, got %v", err)
	}
	u.ttl = 0
	if err := u.check(target); err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("a closed upstream: %v, want an error naming its address", err)
	}
}

// answering is an upstream transport that answers every request alike.
type answering struct {
	status int
	header http.Header
	body   []byte
}

func (a *answering) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: a.status, Header: a.header.Clone(), Body: io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)), Request: r}, nil
}
