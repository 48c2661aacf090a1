package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestShippedRuleTests runs the unit tests every example rule file ships
// with, as a user would: signpost test configs/tests/*.yaml.
func TestShippedRuleTests(t *testing.T) {
	files, _ := filepath.Glob("../../configs/tests/*.yaml")
	rulesFiles, _ := filepath.Glob("../../configs/*.yaml")
	if len(files) < len(rulesFiles) {
		t.Errorf("%d test files for %d rule files: every file in configs/ ships with tests", len(files), len(rulesFiles))
	}
	code, stdout, stderr := run(t, append([]string{"test"}, files...)...)
	if code != 0 || !strings.Contains(stdout, " passed, 0 failed\n") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestTestCommand(t *testing.T) {
	rulesPath, _ := filepath.Abs("../../configs/tickets.yaml")
	failing := writeFile(t, "failing.yaml", `rules: `+rulesPath+`
tests:
  - name: wrong expectation
    request: {method: PATCH, path: /tickets/T-1, body: {status: OPEN}}
    upstream: {status: 400, body: {error: Invalid status}}
    expect:
      status: 422
      headers: {Content-Type: text/plain}
      body: {field: status, received: OPEN, message: "allowed values: open, closed", error: invalid_status, retryable: false}
  - name: before mode is not on, so the upstream is called
    request: {method: PATCH, path: /tickets/T-1, body: {status: OPEN}}
    expect: {status: 400}
  - name: passes
    request: {method: PATCH, path: /tickets/T-1, body: {status: OPEN}}
    upstream: {status: 400, body: {error: Invalid status}}
    expect: {status: 400, body_subset: {received: OPEN}}
  - name: repeated, the last answer counts
    request: {method: PATCH, path: /tickets/T-8842, body: {status: closed}}
    repeat: 3
    upstream: {status: 409, body: {error: Cannot close ticket}}
    expect: {status: 409, body_subset: {repeated: 2, retryable: false}}
`)
	code, stdout, _ := run(t, "test", failing)
	if code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	for _, want := range []string{
		"--- FAIL: " + failing + ": wrong expectation",
		"status: got 400, want 422",
		`header Content-Type: got "application/json", want "text/plain"`,
		"body differs (- want, + got):",
		`-   "message": "allowed values: open, closed",`,
		`+   "message": "allowed values: open, pending, closed",`,
		"--- FAIL: " + failing + ": before mode is not on, so the upstream is called",
		"the request reached the upstream; a case with no upstream: expects signpost to answer first",
		"ok   " + failing + ": passes",
		"--- FAIL: " + failing + ": repeated, the last answer counts",
		"body lacks $.repeated of body_subset:",
		`+   "repeated": 3,`,
		"1 passed, 3 failed\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if code, stdout, _ := run(t, "test", "--run", "^passes$", failing); code != 0 || !strings.Contains(stdout, "1 passed, 0 failed") {
		t.Errorf("--run: exit %d\n%s", code, stdout)
	}

	for _, tc := range []struct {
		name, file string
		args       []string
		code       int
		want       string
	}{
		{name: "no files", args: []string{"test"}, code: 2, want: "name at least one test file"},
		{name: "bad regexp", args: []string{"test", "--run", "(", "x.yaml"}, code: 2, want: `--run "(" does not compile`},
		{name: "missing file", args: []string{"test", "nope.yaml"}, code: 1, want: "nope.yaml: cannot read the test file: no such file or directory"},
		{name: "unknown key", file: "rules: " + rulesPath + "\ntests:\n  - name: a\n    expcet: {}\n", code: 1, want: `line 4: unknown key "expcet"; did you mean "expect"?`},
		{name: "unknown top-level key", file: "rules: " + rulesPath + "\ntets: []\n", code: 1, want: `line 2: unknown key "tets"; did you mean "tests"? the keys here are rules, tests`},
		{name: "no rules", file: "tests:\n  - name: a\n", code: 1, want: "rules: missing; name the rule file the tests are for"},
		{name: "no cases", file: "rules: " + rulesPath + "\n", code: 1, want: "tests: no cases"},
		{name: "broken rules", file: "rules: nope.yaml\ntests: [{name: a}]\n", code: 1, want: "do not load:"},
		{name: "bad request", file: "rules: " + rulesPath + "\ntests: [{name: a, request: {method: GET, path: tickets}}]\n", code: 1, want: `request.path "tickets" must start with /, e.g. /tickets/T-8841`},
		{name: "path with a space", file: "rules: " + rulesPath + "\ntests: [{name: a, request: {method: GET, path: /tickets/T 1}}, {name: b, request: {method: GET, path: /tickets/T-1}, upstream: {status: 200}}]\n", code: 1,
			want: "request.path \"/tickets/T 1\" holds a space at character 11, which a request line cannot carry as it is; write it percent-encoded, e.g. /tickets/T%201\n" +
				"ok   "},
		{name: "upstream status out of range", file: "rules: " + rulesPath + "\ntests: [{name: a, request: {method: GET, path: /tickets/T-1}, upstream: {status: 1000}}]\n", code: 1,
			want: "upstream.status 1000 is not a status an upstream answers a request with; want one from 200 to 599, e.g. 400"},
		{name: "bad repeat", file: "rules: " + rulesPath + "\ntests: [{name: a, repeat: -1, request: {method: GET, path: /tickets}}]\n", code: 1, want: "repeat: -1 is out of range; send the request from 1 to 100 times"},
		{name: "no method", file: "rules: " + rulesPath + "\ntests: [{name: a, request: {path: /tickets}}]\n", code: 1, want: "request: needs method and path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = []string{"test", writeFile(t, "t.yaml", tc.file)}
			}
			code, stdout, stderr := run(t, args...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, output:\n%s%s\nwant exit %d and %q", code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestTestCommandHostileCases runs testdata/testcmd/hostile.tests.yaml, as
// a user would, and checks each case's outcome against the "# want:"
// lines above it: a case with none passes; a case with some fails, its
// failure printing each of them, and the cases after it still run.
func TestTestCommandHostileCases(t *testing.T) {
	const file = "testdata/testcmd/hostile.tests.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wants [][]string // per case, in order
	var pending []string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if w, ok := strings.CutPrefix(trimmed, "# want: "); ok {
			pending = append(pending, w)
		}
		if strings.HasPrefix(line, "  - ") {
			wants, pending = append(wants, pending), nil
		}
	}
	code, stdout, stderr := run(t, "test", file)
	if code != 1 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 1 and nothing", code, stderr)
	}
	// One block per case: its ok or FAIL line, then its messages.
	var blocks [][]string
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "ok   "), strings.HasPrefix(line, "--- FAIL: "):
			blocks = append(blocks, []string{line})
		case len(blocks) > 0 && strings.HasPrefix(line, "    "):
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], strings.TrimPrefix(line, "    "))
		}
	}
	if len(blocks) != len(wants) {
		t.Fatalf("%d cases reported, %d in the file:\n%s", len(blocks), len(wants), stdout)
	}
	failed := 0
	for i, want := range wants {
		b := blocks[i]
		if len(want) == 0 {
			if !strings.HasPrefix(b[0], "ok   ") {
				t.Errorf("case %d fails; want it to pass:\n%s", i, strings.Join(b, "\n"))
			}
			continue
		}
		failed++
		if !strings.HasPrefix(b[0], "--- FAIL: ") {
			t.Errorf("case %d passes; want it to fail with %q", i, want)
			continue
		}
		for _, w := range want {
			found := false
			for _, l := range b[1:] {
				found = found || l == w
			}
			if !found {
				t.Errorf("%s\nlacks the line\n    %s\nit printed:\n    %s", b[0], w, strings.Join(b[1:], "\n    "))
			}
		}
	}
	if summary := fmt.Sprintf("%d passed, %d failed\n", len(wants)-failed, failed); !strings.HasSuffix(stdout, summary) {
		t.Errorf("output does not end with %q:\n%s", summary, stdout)
	}
}

// TestTestFileBodies: a body a test file gives is sent as written: a
// string as its text, so a JSON string keeps its quotes only when written
// with them, and anything else as JSON, what YAML reads as a timestamp
// kept as the text written.
func TestTestFileBodies(t *testing.T) {
	rulesPath, _ := filepath.Abs("../../configs/tickets.yaml")
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"JSON string, quotes kept", `'"hello"'`, `"hello"`},
		{"JSON string, double-quoted in YAML", `"\"hello\""`, `"hello"`},
		{"text, YAML's quotes are YAML's", `"hello"`, `hello`},
		{"JSON text", `'{"status": "OPEN"}'`, `{"status": "OPEN"}`},
		{"mapping", `{status: OPEN, n: 2, ok: true, none: null}`, `{"n":2,"none":null,"ok":true,"status":"OPEN"}`},
		{"number", `42`, `42`},
		{"date in a mapping", `{due_at: 2026-03-11}`, `{"due_at":"2026-03-11"}`},
		{"timestamp in a list", `[2026-03-11T10:14:02Z, 2026-03-11 10:14:02]`, `["2026-03-11T10:14:02Z","2026-03-11 10:14:02"]`},
		{"date alone", `2026-03-11`, `2026-03-11`},
		{"a timestamp tagged as one", `!!timestamp 2026-03-11`, `"2026-03-11T00:00:00Z"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, "t.yaml", "rules: "+rulesPath+"\ntests:\n  - {name: a, request: {method: POST, path: /t, body: "+tc.yaml+"}, upstream: {status: 200, body: "+tc.yaml+"}, expect: {body: "+tc.yaml+", body_subset: "+tc.yaml+"}}\n")
			tf, caseErrs, err := readTestFile(file)
			if err != nil || len(caseErrs) > 0 {
				t.Fatalf("readTestFile: %v %v", err, caseErrs)
			}
			c := tf.Tests[0]
			for where, body := range map[string]any{"request": c.Request.Body, "expect.body": c.Expect.Body, "expect.body_subset": c.Expect.BodySubset, "upstream": c.Upstream.Body} {
				b, err := bodyBytes(body)
				if err != nil || string(b) != tc.want {
					t.Errorf("%s body %s, %v; want %s", where, b, err, tc.want)
				}
			}
		})
	}
	t.Run("through an alias", func(t *testing.T) {
		file := writeFile(t, "t.yaml", "rules: "+rulesPath+"\ntests:\n  - request: {method: POST, path: /t, body: &d {due_at: 2026-03-11}}\n    upstream: {status: 200, body: *d}\n")
		tf, _, err := readTestFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []any{tf.Tests[0].Request.Body, tf.Tests[0].Upstream.Body} {
			if b, _ := bodyBytes(body); string(b) != `{"due_at":"2026-03-11"}` {
				t.Errorf("body %s; want the date as written", b)
			}
		}
	})
}

// FuzzTestCase feeds the test command cases of any method, path, header
// and bodies: each must end in ok or in a FAIL that says why, signpost
// must never panic, and the case after it must still run.
func FuzzTestCase(f *testing.F) {
	f.Add("GET", "/api/v1/label/foo bar/values", "X-Note", "a", `"hello"`, `{"error":"x"}`, 400)
	f.Add("PATCH", "/tickets/T-1", "Content-Type", "application/json", `{"status":"OPEN"}`, `{"error":"Invalid status"}`, 400)
	f.Add("G ET", "/a#b\r\nc", "X Id", "a\nb", `.nan`, `2026-03-11`, 1000)
	f.Add("post", "/tickets/{ticket_id}?q=%zz", "Content-Length", "9", `[1, {a: *x}]`, `!!binary aGVsbG8=`, 0)
	f.Add("DELETE", "/\x00\xff/é", "Transfer-Encoding", "chunked", "", "\xef\xbb\xbf", -1)
	rulesPath, err := filepath.Abs("../../configs/tickets.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, path, hname, hvalue, reqBody, upBody string, status int) {
		// The case is written as YAML from the values, so that each is a
		// string where it stands; the bodies are YAML themselves, and
		// may not read, in which case the value stands as text.
		asYAML := func(v string) any {
			var x any
			if yaml.Unmarshal([]byte(v), &x) != nil {
				return v
			}
			return x
		}
		tc := map[string]any{
			"name":     "fuzzed",
			"request":  map[string]any{"method": method, "path": path, "headers": map[string]string{hname: hvalue}, "body": asYAML(reqBody)},
			"upstream": map[string]any{"status": status, "body": asYAML(upBody)},
			"expect":   map[string]any{"status": status},
		}
		last := map[string]any{"name": "last", "request": map[string]any{"method": "GET", "path": "/tickets/T-1"}, "upstream": map[string]any{"status": 200}}
		data, err := yaml.Marshal(map[string]any{"rules": rulesPath, "tests": []any{tc, last}})
		if err != nil {
			t.Skip(err)
		}
		file := filepath.Join(t.TempDir(), "t.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		passed, failed, err := runTestFile(file, nil, &out)
		if err != nil {
			t.Skip(err) // the file as a whole, e.g. a key yaml.v3 writes and reads apart
		}
		if strings.Contains(out.String(), "panicked") {
			t.Fatalf("a panic, recovered:\n%s", out.String())
		}
		if passed+failed != 2 || !strings.HasSuffix(out.String(), "ok   "+file+": last\n") {
			t.Fatalf("%d passed, %d failed; want both cases run, the last passing:\n%s\n%s", passed, failed, data, out.String())
		}
		sc := bufio.NewScanner(&out)
		sc.Scan()
		if first := sc.Text(); strings.HasPrefix(first, "--- FAIL: ") {
			if !sc.Scan() || !strings.HasPrefix(sc.Text(), "    ") || strings.TrimSpace(sc.Text()) == "" {
				t.Fatalf("a failure that says nothing:\n%s", out.String())
			}
		}
	})
}
