package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/rules"
)

// reloadRules is a valid rule file in which every message signpost can
// write names version v: a rewritten 400, a rewritten 404, and the rules of
// the two fields of a body signpost checks itself. An answer says which
// rules wrote it, and a batched answer says that all of it came from one
// version.
func reloadRules(v int) string {
	return fmt.Sprintf(`routes:
  get_ticket:
    method: GET
    path: /tickets/{ticket_id}
    fields:
      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}
    errors:
      - match: {status: 404, json: error, equals: No such ticket}
        code: unknown_ticket
        field: ticket_id
        message: "v%[1]d: no ticket has this id"
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    fields:
      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}
      status: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
        message: "v%[1]d: must be one of open, pending, closed"
  create_ticket:
    method: POST
    path: /tickets
    validate: before
    fields:
      status: {required: true, enum: [open, pending, closed], list_tokens: 0, rule: "v%[1]d: must be open, pending or closed"}
      priority: {required: true, enum: [p1, p2, p3], list_tokens: 0, rule: "v%[1]d: must be p1, p2 or p3"}
`, v)
}

// brokenMarker is added to a step's number to mark the broken file written
// at that step, wherever the file can carry a version: an answer naming
// one would be a broken file in force.
const brokenMarker = 1000

// brokenSave is one way a save of the rule file can go wrong.
type brokenSave struct {
	kind string
	// save puts the broken file in place of path; m marks it.
	save func(t *testing.T, path string, m int)
	// problem is part of the problem signpost must log for it.
	problem string
}

// replaced returns a save that renames a new file over the rule file, as
// editors do, holding version m's rules changed by edit.
func replaced(edit func(string) string) func(*testing.T, string, int) {
	return func(t *testing.T, path string, m int) { mustReplace(t, path, edit(reloadRules(m))) }
}

// swap replaces old in s, and panics when old is not there, so that a
// fixture that no longer breaks the file as meant is noticed.
func swap(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic(fmt.Sprintf("%q is not in the rule file", old))
	}
	return strings.Replace(s, old, new, 1)
}

// aliasBomb is a field whose merge keys nest nine copies of the field
// before it, nine deep: 9^9 mappings once expanded.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("      f0: &a0 {enum: [x, y]}\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "      f%d: &a%d {<<: [*a%d", i, i, i-1)
		b.WriteString(strings.Repeat(fmt.Sprintf(", *a%d", i-1), 8))
		b.WriteString("]}\n")
	}
	return b.String()
}

// brokenSaves are the twelve kinds of broken save, in the order the case
// writes them. The rename race is not here: it needs a valid version too.
var brokenSaves = []brokenSave{
	{"YAML syntax", replaced(func(s string) string {
		return swap(s, "status: {enum: [open, pending, closed]}", "status: {enum: [open, pending, closed]")
	}), "YAML syntax"},
	{"wrong types", replaced(func(s string) string {
		return swap(s, "required: true, enum: [p1, p2, p3]", "required: maybe, enum: {p1: p2}")
	}), "routes.create_ticket.fields.priority.required"},
	{"unknown key", replaced(func(s string) string {
		return swap(s, "    method: PATCH\n", "    method: PATCH\n    timeout: 5s\n")
	}), `unknown key "timeout"`},
	{"duplicate route", replaced(func(s string) string {
		return s + "  patch_ticket: {method: PATCH, path: '/tickets/{ticket_id}'}\n"
	}), "is already routed as"},
	{"regex that does not compile", replaced(func(s string) string {
		return swap(s, "json: error, equals: Invalid status", "json: error, regex: '(Invalid [a-'")
	}), "routes.update_ticket.errors[0].match.regex"},
	{"alias bomb", replaced(func(s string) string {
		return swap(s, "      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}\n    errors:\n      - match: {status: 404",
			aliasBomb()+"      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}\n    errors:\n      - match: {status: 404")
	}), "YAML nodes"},
	// Comments first: a read of any prefix of it is no valid file either.
	{"10 MiB file", func(t *testing.T, path string, m int) {
		line := "# " + strings.Repeat("padding ", 127) + "\n"
		pad := strings.Repeat(line, 10<<20/len(line)+1)
		mustReplace(t, path, pad+reloadRules(m))
	}, "larger than 4 MiB"},
	// A writer that stopped half way, in place.
	{"half-written file", func(t *testing.T, path string, m int) {
		s := reloadRules(m)
		mustWrite(t, path, s[:strings.Index(s, "enum: [open, pending, closed], list_tokens")+len("enum: [open, pen")])
	}, "YAML syntax"},
	{"empty file", func(t *testing.T, path string, _ int) { mustWrite(t, path, "") }, "the rule file is empty"},
	{"non-UTF-8", replaced(func(s string) string {
		return swap(s, "must be one of open, pending, closed", "must be one of open, pending, clos\xe9d")
	}), "is not valid UTF-8"},
	{"dangling symlink", func(t *testing.T, path string, _ int) {
		tmp := path + ".link"
		if err := os.Symlink(filepath.Join(filepath.Dir(path), "gone.yaml"), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}, "no such file or directory"},
}

// versionRef finds the version a message names.
var versionRef = regexp.MustCompile(`"v([0-9]+): `)

// TestReliabilityReload rewrites the rule file 24 times (100 with
// -reliability.long), valid versions alternating with twelve kinds of
// broken save, while 64 connections keep mixed traffic going. Reloads come
// from the watcher, SIGHUP and POST /-/reload in turn. No request may fail,
// no broken file may ever take effect, every answer must come whole from
// one valid version (never older than its connection saw before), and each
// reload must take under a second.
func TestReliabilityReload(t *testing.T) {
	t.Parallel()
	const name, conns = "1 reload under load", 64
	steps := sized(24, 100)
	export := bytes.Repeat([]byte("0123456789abcdef"), 4<<10) // 64 KiB
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/export":
			w.Header().Set("Content-Type", "text/csv")
			_, _ = w.Write(export)
		case r.Method == "GET" && r.URL.Path == "/tickets/T-404":
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"No such ticket"}`)
		case r.Method == "GET":
			_, _ = io.WriteString(w, `{"id":"T-1","status":"open"}`)
		case r.Method == "PATCH":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"Invalid status"}`)
		case r.Method == "DELETE":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":"Internal error"}`)
		default: // validation answers POST /tickets before it comes here
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"T-2"}`)
		}
	}))

	// Check the premise: every broken save fails to load with its problem.
	scratch := filepath.Join(t.TempDir(), "rules.yaml")
	for i, b := range brokenSaves {
		mustWrite(t, scratch, reloadRules(0))
		b.save(t, scratch, brokenMarker+i)
		_, err := rules.Load(scratch)
		if err == nil || !strings.Contains(err.Error(), b.problem) {
			t.Fatalf("broken save %q: loading gives %v; want a problem with %q", b.kind, err, b.problem)
		}
	}
	if len(brokenSaves)+1 != 12 {
		t.Fatalf("%d kinds of broken save, want 12 with the rename race", len(brokenSaves)+1)
	}

	file := filepath.Join(t.TempDir(), "rules.yaml")
	mustWrite(t, file, reloadRules(0))
	sp := startSignpost(t, file, up.URL)

	// The calls, and each one's answer under version 0: every later answer
	// must be the same but for the version its messages name.
	calls := []struct {
		method, path, body string
		status             int
		versioned          bool
	}{
		{"GET", "/tickets/T-1", "", 200, false},
		{"PATCH", "/tickets/T-1", `{"status":"open"}`, 400, true},
		{"POST", "/tickets", `{"status":"OPEN","priority":"high"}`, 400, true},
		{"GET", "/tickets/T-404", "", 404, true},
		{"GET", "/export", "", 200, false},
		{"DELETE", "/tickets/T-1", "", 500, false},
	}
	want := make([][]byte, len(calls))
	for i, c := range calls {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		got := send(t, c.method, sp.URL+c.path, body, "Content-Type", "application/json")
		vs := versionRef.FindAllSubmatch(got.body, -1)
		if got.status != c.status || c.versioned != (len(vs) > 0) {
			t.Fatalf("%s %s at start: %d %s; want %d, versioned %v", c.method, c.path, got.status, clip(got.body), c.status, c.versioned)
		}
		want[i] = got.body
	}
	if n := len(versionRef.FindAll(want[2], -1)); n != 2 {
		t.Fatalf("the batched answer names %d versions, want one per field: %s", n, want[2])
	}

	// The load: one connection per worker, each going through the calls.
	var written atomic.Int64 // the newest valid version written so far
	var requests, failed, broken, mixed atomic.Int64
	var noteMu sync.Mutex
	var notes []string
	note := func(n *atomic.Int64, format string, args ...any) {
		n.Add(1)
		noteMu.Lock()
		defer noteMu.Unlock()
		if len(notes) < 10 {
			notes = append(notes, fmt.Sprintf(format, args...))
		}
	}
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	load := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			newest := 0 // the newest version this connection has seen
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c := calls[i%len(calls)]
				req, _ := http.NewRequest(c.method, sp.URL+c.path, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Session-Id", newCaller())
				requests.Add(1)
				res, err := load.Do(req)
				if err != nil {
					note(&failed, "%s %s: %v", c.method, c.path, err)
					continue
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil {
					note(&failed, "%s %s: reading the body: %v", c.method, c.path, err)
					continue
				}
				seen := map[int]bool{}
				for _, m := range versionRef.FindAllSubmatch(body, -1) {
					v, _ := strconv.Atoi(string(m[1]))
					seen[v] = true
				}
				if len(seen) > 1 {
					note(&mixed, "%s %s: the answer names versions %v: %s", c.method, c.path, seen, body)
					continue
				}
				for v := range seen {
					switch {
					case v >= brokenMarker:
						note(&broken, "%s %s: answered by the broken file of step %d: %s", c.method, c.path, v-brokenMarker, body)
					case int64(v) > written.Load():
						note(&mixed, "%s %s: answered by version %d before it was written", c.method, c.path, v)
					case v < newest:
						note(&mixed, "%s %s: answered by version %d after this connection saw %d", c.method, c.path, v, newest)
					}
					newest = max(newest, v)
					body = versionRef.ReplaceAll(body, []byte(`"v0: `))
				}
				if res.StatusCode != c.status || !bytes.Equal(body, want[i%len(calls)]) {
					note(&failed, "%s %s: %d %s; want %d %s", c.method, c.path, res.StatusCode, clip(body), c.status, clip(want[i%len(calls)]))
				}
			}
		}()
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoad()

	// inForce is the version the rules in force answer with.
	inForce := func() int {
		got := send(t, "PATCH", sp.URL+"/tickets/T-1", []byte(`{"status":"open"}`), "X-Session-Id", newCaller())
		m := versionRef.FindSubmatch(got.body)
		if m == nil {
			t.Fatalf("PATCH: %d %s, want a versioned message", got.status, got.body)
		}
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	// until waits for cond, polling, and reports whether it came in time.
	until := func(cond func() bool) bool {
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if cond() {
				return true
			}
		}
		return false
	}
	// logged reports whether the log, past offset, holds a line with msg
	// whose key holds part.
	logged := func(offset int, msg, key, part string) bool {
		for _, l := range strings.Split(sp.stdout.String()[offset:], "\n") {
			var line logLine
			if json.Unmarshal([]byte(l), &line) == nil && line["msg"] == msg {
				if s, _ := line[key].(string); strings.Contains(s, part) {
					return true
				}
			}
		}
		return false
	}

	start := time.Now()
	version, next := 0, 0 // the version in force; the last one written
	taken, rejected, outcome := 0, 0, 0
	kinds := map[string]int{}
	// What each step wrote, and where its log lines begin.
	wrote, offsets := make([]string, steps+1), make([]int, steps+1)
	for step := 1; step <= steps; step++ {
		trigger := []string{"watch", "SIGHUP", "POST /-/reload"}[step%3]
		offset := len(sp.stdout.String())
		offsets[step], wrote[step] = offset, "a valid version"
		reload := func() *reply {
			switch trigger {
			case "SIGHUP":
				if err := sp.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
			case "POST /-/reload":
				return send(t, "POST", sp.Admin+"/-/reload", nil)
			}
			return nil
		}
		// Odd steps write a valid version, by rename or in place.
		if step%2 == 1 {
			next++
			written.Store(int64(next))
			if fi, err := os.Lstat(file); step%4 == 1 || err != nil || !fi.Mode().IsRegular() {
				mustReplace(t, file, reloadRules(next))
			} else {
				mustWrite(t, file, reloadRules(next))
			}
			if got := reload(); got != nil && got.status != 200 {
				t.Errorf("step %d, version %d: POST /-/reload: %d %s, want 200", step, next, got.status, got.body)
			}
			if until(func() bool { return inForce() == next }) {
				outcome++
			} else {
				t.Errorf("step %d: version %d (by %s) did not take effect; version %d answers", step, next, trigger, inForce())
			}
			version = inForce()
			taken++
			continue
		}
		// Even steps write a broken file; every twelfth is the rename race.
		rejected++
		i := (step/2 - 1) % 12
		if i == len(brokenSaves) {
			kinds["rename race"]++
			wrote[step] = "the rename race"
			// The next valid version and two broken files, renamed over the
			// rule file at once: whichever lands last is the file, and the
			// watcher may read any of them on the way.
			next++
			written.Store(int64(next))
			texts := []string{reloadRules(next),
				swap(reloadRules(brokenMarker+step), "    method: PATCH\n", "    method: PATCH\n    timeout: 5s\n"),
				reloadRules(brokenMarker + step)[:200]}
			var race sync.WaitGroup
			begin := make(chan struct{})
			for j, text := range texts {
				tmp := fmt.Sprintf("%s.race%d", file, j)
				mustWrite(t, tmp, text)
				race.Add(1)
				go func() {
					defer race.Done()
					<-begin
					if err := os.Rename(tmp, file); err != nil {
						t.Error(err)
					}
				}()
			}
			close(begin)
			race.Wait()
			got := send(t, "POST", sp.Admin+"/-/reload", nil)
			final, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			landed := string(final) == texts[0]
			switch now := inForce(); {
			case landed && (got.status != 200 || now != next):
				t.Errorf("step %d: the rename race left version %d in the file; POST /-/reload %d %s, and version %d answers", step, next, got.status, got.body, now)
			case !landed && (got.status != 422 || now != version && now != next):
				t.Errorf("step %d: the rename race left a broken file; POST /-/reload %d %s, and version %d answers; want 422 and %d or %d",
					step, got.status, got.body, now, version, next)
			default:
				outcome++
			}
			version = inForce()
			continue
		}
		b := brokenSaves[i]
		kinds[b.kind]++
		wrote[step] = "the " + b.kind
		b.save(t, file, brokenMarker+step)
		got := reload()
		if got != nil && (got.status != 422 || !strings.Contains(string(got.body), b.problem)) {
			t.Errorf("step %d, %s: POST /-/reload: %d %s, want 422 naming %q", step, b.kind, got.status, clip(got.body), b.problem)
		}
		ok := until(func() bool {
			return logged(offset, "rules problem", "problem", b.problem) && logged(offset, "rules reload rejected", "msg", "")
		})
		now := inForce()
		switch {
		case !ok:
			t.Errorf("step %d: no reload rejected the %s (by %s) with a problem naming %q", step, b.kind, trigger, b.problem)
		case now != version:
			note(&broken, "step %d: after the %s, version %d answers; want %d still", step, b.kind, now, version)
		default:
			outcome++
		}
	}
	// A last look for late reloads, after the debounce has long passed.
	time.Sleep(300 * time.Millisecond)
	if now := inForce(); now != version {
		note(&broken, "at the end: version %d answers, want %d", now, version)
	}
	stopLoad()

	// Each reload's time, from its log line: load, validate and compile.
	var slowest float64
	var slowestOf string
	reloads, pos := 0, 0
	for _, l := range strings.SplitAfter(sp.stdout.String(), "\n") {
		at := pos
		pos += len(l)
		var line logLine
		if json.Unmarshal([]byte(l), &line) != nil || line["msg"] != "rules reloaded" && line["msg"] != "rules reload rejected" {
			continue
		}
		ms, ok := line["took_ms"].(float64)
		if !ok {
			t.Errorf("reload log line without took_ms: %s", l)
		}
		reloads++
		if ms >= slowest {
			slowest, slowestOf = ms, "?"
			for step := steps; step > 0; step-- {
				if offsets[step] <= at {
					slowestOf = wrote[step]
					break
				}
			}
		}
	}

	t.Logf("%d rewrites (%d valid, %d broken: %v) in %v; %d reloads; %d requests on %d connections",
		steps, taken, rejected, kinds, time.Since(start).Round(time.Millisecond), reloads, requests.Load(), conns)
	if len(notes) > 0 {
		t.Logf("the first faults:\n%s", strings.Join(notes, "\n"))
	}
	if requests.Load() < int64(10*steps) {
		t.Errorf("only %d requests during %d rewrites; the load did not keep the connections busy", requests.Load(), steps)
	}
	figure(t, name, "rewrites with the expected outcome", fmt.Sprintf("%d of %d", outcome, steps), "all", outcome == steps)
	figure(t, name, "failed requests", fmt.Sprintf("%d of %d", failed.Load(), requests.Load()), "0", failed.Load() == 0)
	figure(t, name, "broken files that took effect", broken.Load(), "0", broken.Load() == 0)
	figure(t, name, "answers not from exactly one valid version", mixed.Load(), "0", mixed.Load() == 0)
	figure(t, name, "slowest reload", fmt.Sprintf("%.0f ms (%s)", slowest, slowestOf), "< 1 s", reloads >= steps && slowest < 1000)
}

// TestReliabilityReloadEndless points the rule file at a file that never
// ends. The reload must read no more than a rule file may hold, reject it
// within the bar, and leave reloads working: the next valid save takes
// effect.
func TestReliabilityReloadEndless(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("SKIP: no /dev/zero to point the rule file at: %v", err)
	}
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"Invalid status"}`)
	}))
	file := filepath.Join(t.TempDir(), "rules.yaml")
	mustWrite(t, file, reloadRules(1))
	sp := startSignpost(t, file, up.URL)

	tmp := file + ".link"
	if err := os.Symlink("/dev/zero", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := send(t, "POST", sp.Admin+"/-/reload", nil)
	took := time.Since(start)
	if got.status != 422 || !strings.Contains(string(got.body), "larger than 4 MiB") {
		t.Errorf("POST /-/reload with the rule file on /dev/zero: %d %s; want 422 naming the 4 MiB bound", got.status, clip(got.body))
	}
	mustReplace(t, file, reloadRules(2))
	if got := send(t, "POST", sp.Admin+"/-/reload", nil); got.status != 200 {
		t.Errorf("POST /-/reload after a valid save: %d %s, want 200", got.status, got.body)
	}
	if got := send(t, "PATCH", sp.URL+"/tickets/T-1", []byte(`{"status":"open"}`), "X-Session-Id", newCaller()); !strings.Contains(string(got.body), `"v2: `) {
		t.Errorf("after the valid save: %d %s, want version 2's message", got.status, got.body)
	}
	figure(t, "1 reload under load", "a rule file that never ends (/dev/zero), rejected in",
		took.Round(time.Millisecond), "< 1 s", got.status == 422 && took < time.Second)
}

// TestReliabilityReloadGrowth loads rule files with n and with 4n values.
// Loading must grow with the file, not with its square: a file under the
// 4 MiB bound once held an enum of 470,000 values that took four minutes
// to load, each value checked against all before it, and a reload of it
// would have held every other reload back as long. Then a file of many
// routes near the size bound must load: the bound on YAML nodes, meant for
// aliases, once refused any file over about 1.5 MiB. It runs alone, not in
// parallel, so that other tests disturb its timings less, and not under
// -race, which slows some of the work twenty times more than the rest.
func TestReliabilityReloadGrowth(t *testing.T) {
	if raceEnabled {
		t.Skip("SKIP: under -race the load's parts slow unevenly, so its growth says little; test/reliability/run.sh measures it")
	}
	n := sized(10_000, 20_000)
	file := func(n int) []byte {
		var b strings.Builder
		b.WriteString("routes:\n  r:\n    method: GET\n    path: /x\n    fields:\n      s:\n        hidden: [")
		for i := range n {
			fmt.Fprintf(&b, "h%d, ", i)
		}
		b.WriteString("h]\n        enum: [")
		for i := range n {
			fmt.Fprintf(&b, "v%d, ", i)
		}
		b.WriteString("v]\n        aliases: {")
		for i := range n / 10 {
			fmt.Fprintf(&b, "a%d: v%d, ", i, i)
		}
		b.WriteString("a: v}\n")
		return []byte(b.String())
	}
	// The fastest of three loads, against a busy machine's noise.
	load := func(data []byte) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 3 {
			start := time.Now()
			if _, err := rules.Parse("big.yaml", data); err != nil {
				t.Fatalf("a file of %d bytes does not load: %v", len(data), err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := file(n), file(4*n)
	if len(large) > rules.MaxFileSize {
		t.Fatalf("the larger file is %d bytes, over the %d a rule file may hold", len(large), rules.MaxFileSize)
	}
	a, b := load(small), load(large)
	ratio := float64(b) / float64(a)
	t.Logf("%d values: %v; %d values (%d KiB): %v", 2*n, a, 8*n, len(large)>>10, b)
	figure(t, "1 reload under load", fmt.Sprintf("load time, 4× the values (%d against %d)", 8*n, 2*n),
		fmt.Sprintf("%.1f×", ratio), "≤ 8× (linear: 4×)", ratio <= 8)

	// A file of many routes and no aliases, within the size bound, loads:
	// the bound on nodes is for aliases, not for what the file holds.
	var routes strings.Builder
	routes.WriteString("routes:\n")
	for i := 0; routes.Len() < sized(2<<20, rules.MaxFileSize-1024); i++ {
		fmt.Fprintf(&routes, `  r%d:
    method: GET
    path: /r%d/{id}
    fields:
      id: {pattern: '^T-[0-9]+$', example: T-1}
      s: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: s
`, i, i)
	}
	start := time.Now()
	_, err := rules.Parse("routes.yaml", []byte(routes.String()))
	took := time.Since(start)
	if err != nil {
		t.Errorf("a rule file of %d KiB, routes without aliases, does not load: %.300s", routes.Len()>>10, err)
	}
	figure(t, "1 reload under load", fmt.Sprintf("a rule file of %d KiB of routes, no aliases", routes.Len()>>10),
		fmt.Sprintf("loads in %v", took.Round(time.Millisecond)), "loads", err == nil)
}
