package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
	"gopkg.in/yaml.v3"
)

// testFile is a file of rule unit tests: the rule file they test, and cases.
type testFile struct {
	Rules string     `yaml:"rules"`
	Tests []testCase `yaml:"tests"`
}

// testCase is one request, the upstream's answer to it (none when signpost
// must answer before calling the upstream), and what the caller must get.
type testCase struct {
	Name    string `yaml:"name"`
	Request struct {
		Method  string            `yaml:"method"`
		Path    string            `yaml:"path"`
		Headers map[string]string `yaml:"headers"`
		Body    any               `yaml:"body"`
	} `yaml:"request"`
	// Repeat sends the request this many times, as one caller, and expect
	// applies to the last answer: a call an agent repeats. Zero means once.
	Repeat   int     `yaml:"repeat"`
	Upstream *canned `yaml:"upstream"`
	Expect   struct {
		Status  int               `yaml:"status"`
		Headers map[string]string `yaml:"headers"`
		// Body is compared whole: as JSON when it is a mapping or list, as
		// text when it is a string. BodySubset needs only what it lists.
		Body       any `yaml:"body"`
		BodySubset any `yaml:"body_subset"`
	} `yaml:"expect"`
}

const testHelp = `Usage: signpost test [--run REGEXP] TESTFILE...

Runs rule unit tests: each case sends a request through the rules, in process,
against a canned upstream response, and compares what the caller gets; a case
with repeat: N sends it N times, as one caller, and compares the last answer.
Exits 0 when every case passes, 1 when any fails.`

// testCmd runs rule unit tests, in process.
func testCmd(fs *flag.FlagSet) runFunc {
	run := fs.String("run", "", "run only the cases whose name matches this `regexp`")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "signpost test: name at least one test file, e.g. signpost test configs/tests/tickets.yaml")
			return exitUsage
		}
		var only *regexp.Regexp
		if *run != "" {
			var err error
			if only, err = regexp.Compile(*run); err != nil {
				fmt.Fprintf(stderr, "signpost test: --run %q does not compile: %v\n", *run, err)
				return exitUsage
			}
		}
		passed, failed := 0, 0
		for _, file := range fs.Args() {
			p, f, err := runTestFile(file, only, stdout)
			if err != nil {
				fmt.Fprintln(stderr, err)
				failed++
				continue
			}
			passed += p
			failed += f
		}
		fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
		if failed > 0 {
			return exitFindings
		}
		return exitOK
	}
}

func runTestFile(file string, only *regexp.Regexp, out io.Writer) (passed, failed int, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: cannot read the test file: %v", file, errors.Unwrap(err))
	}
	var tf testFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&tf); err != nil {
		return 0, 0, fmt.Errorf("%s: %s; a test file holds rules: <rule file> and tests: [{name, request, upstream, expect}]", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if tf.Rules == "" {
		return 0, 0, fmt.Errorf("%s: rules: missing; name the rule file the tests are for, e.g. rules: ../tickets.yaml", file)
	}
	if len(tf.Tests) == 0 {
		return 0, 0, fmt.Errorf("%s: tests: no cases; add at least one {name, request, upstream, expect}", file)
	}
	rulesFile := tf.Rules
	if !filepath.IsAbs(rulesFile) {
		rulesFile = filepath.Join(filepath.Dir(file), rulesFile)
	}
	cfg, err := rules.Load(rulesFile)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: rules %s do not load:\n%v", file, rulesFile, err)
	}
	for i, tc := range tf.Tests {
		name := tc.Name
		if name == "" {
			name = fmt.Sprintf("tests[%d]", i)
		}
		if only != nil && !only.MatchString(name) {
			continue
		}
		if msgs := runCase(cfg, &tc); len(msgs) > 0 {
			failed++
			fmt.Fprintf(out, "--- FAIL: %s: %s\n", file, name)
			for _, m := range msgs {
				fmt.Fprintln(out, indent(m, "    "))
			}
			continue
		}
		passed++
		fmt.Fprintf(out, "ok   %s: %s\n", file, name)
	}
	return passed, failed, nil
}

// runCase returns what is wrong with the case's outcome; nothing when it
// passes.
func runCase(cfg *rules.Config, tc *testCase) []string {
	if tc.Request.Method == "" || tc.Request.Path == "" {
		return []string{"request: needs method and path, e.g. {method: PATCH, path: /tickets/T-8841}"}
	}
	if tc.Repeat < 0 || tc.Repeat > maxRepeat {
		return []string{fmt.Sprintf("repeat: %d is out of range; send the request from 1 to %d times, e.g. repeat: 3", tc.Repeat, maxRepeat)}
	}
	build := func() (*http.Request, error) {
		return newRequest(tc.Request.Method, tc.Request.Path, tc.Request.Headers, tc.Request.Body)
	}
	if _, err := build(); err != nil {
		return []string{"request: " + err.Error()}
	}
	up := &fakeUpstream{res: tc.Upstream}
	w, err := inProcessRepeated(cfg, build, up, tc.Repeat)
	if err != nil {
		return []string{err.Error()}
	}
	var msgs []string
	if tc.Upstream == nil && up.called {
		msgs = append(msgs, "the request reached the upstream; a case with no upstream: expects signpost to answer first")
	}
	if tc.Expect.Status != 0 && w.Code != tc.Expect.Status {
		msgs = append(msgs, fmt.Sprintf("status: got %d, want %d", w.Code, tc.Expect.Status))
	}
	for _, k := range sortedKeys(tc.Expect.Headers) {
		if got := w.Header().Get(k); got != tc.Expect.Headers[k] {
			msgs = append(msgs, fmt.Sprintf("header %s: got %q, want %q", k, got, tc.Expect.Headers[k]))
		}
	}
	got := w.Body.Bytes()
	if tc.Expect.Body != nil {
		if m := compareBody(got, tc.Expect.Body, false); m != "" {
			msgs = append(msgs, m)
		}
	}
	if tc.Expect.BodySubset != nil {
		if m := compareBody(got, tc.Expect.BodySubset, true); m != "" {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// compareBody compares a response body with an expected one: text for a
// string, JSON otherwise; with subset, only what want holds must be there.
func compareBody(got []byte, want any, subset bool) string {
	if s, ok := want.(string); ok && !subset {
		if string(got) != s {
			return "body differs:\n" + lineDiff(s, string(got))
		}
		return ""
	}
	want = normalize(want)
	var g any
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Sprintf("body is not JSON (%v):\n%s", err, got)
	}
	wantJSON, _ := json.Marshal(want)
	var w any
	_ = json.Unmarshal(wantJSON, &w) // numbers as float64 on both sides
	if subset {
		if path, ok := contains(g, w, "$"); !ok {
			return fmt.Sprintf("body lacks %s of body_subset:\n%s", path, lineDiff(pretty(w), pretty(g)))
		}
		return ""
	}
	if !reflect.DeepEqual(g, w) {
		return "body differs (- want, + got):\n" + lineDiff(pretty(w), pretty(g))
	}
	return ""
}

// contains reports whether have holds everything in want, and where not.
func contains(have, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return path, false
		}
		for _, k := range sortedKeys(w) {
			hv, ok := h[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := contains(hv, w[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := contains(h[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(have, want)
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// lineDiff shows want and got line by line: lines only in want with "-",
// only in got with "+", shared ones with two spaces. It aligns the two on
// their longest common subsequence, which suits bodies of a few dozen lines.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return strings.TrimRight(out.String(), "\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
