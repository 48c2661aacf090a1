package main

import (
	"path/filepath"
	"strings"
	"testing"
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
      body: {field: status, received: OPEN, message: "must be one of: open, closed", error: invalid_status, retryable: false}
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
		`-   "message": "must be one of: open, closed",`,
		`+   "message": "must be one of: open, pending, closed",`,
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
		{name: "unknown key", file: "rules: x.yaml\ntests:\n  - name: a\n    expcet: {}\n", code: 1, want: "field expcet not found"},
		{name: "no rules", file: "tests:\n  - name: a\n", code: 1, want: "rules: missing; name the rule file the tests are for"},
		{name: "no cases", file: "rules: " + rulesPath + "\n", code: 1, want: "tests: no cases"},
		{name: "broken rules", file: "rules: nope.yaml\ntests: [{name: a}]\n", code: 1, want: "do not load:"},
		{name: "bad request", file: "rules: " + rulesPath + "\ntests: [{name: a, request: {method: GET, path: tickets}}]\n", code: 1, want: `request: path "tickets" must start with /`},
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
