package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/proxy"
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
	Name    string      `yaml:"name"`
	Request testRequest `yaml:"request"`
	// Repeat sends the request this many times, as one caller, and expect
	// applies to the last answer: a call an agent repeats. Zero means once.
	Repeat   int        `yaml:"repeat"`
	Upstream *canned    `yaml:"upstream"`
	Expect   testExpect `yaml:"expect"`
}

// testRequest is the request a test case sends.
type testRequest struct {
	Method  string            `yaml:"method"`
	Path    string            `yaml:"path"`
	Headers map[string]string `yaml:"headers"`
	Body    any               `yaml:"body"`
}

// testExpect is what the caller must get.
type testExpect struct {
	Status  int               `yaml:"status"`
	Headers map[string]string `yaml:"headers"`
	// Body is compared whole: as JSON when it is a mapping or list, as
	// text when it is a string. BodySubset needs only what it lists.
	Body       any `yaml:"body"`
	BodySubset any `yaml:"body_subset"`
}

// timestampsAsText decodes again, from the document, each body the test
// file gives, with what YAML reads as a timestamp (2026-03-11) kept as the
// text written, as the rule file reads it, rather than as a time sent in
// another form ("2026-03-11T00:00:00Z"). Bodies are values alone, so no
// key goes unchecked for being decoded from a node.
func timestampsAsText(doc *yaml.Node, tf *testFile) {
	cases := member(doc, "tests")
	if cases == nil || cases.Kind != yaml.SequenceNode || len(cases.Content) != len(tf.Tests) {
		return
	}
	retagged := map[*yaml.Node]bool{}
	redecode := func(n *yaml.Node, into *any) {
		if n == nil || !retag(n, retagged, map[*yaml.Node]bool{}) {
			return
		}
		var v any
		if n.Decode(&v) == nil {
			*into = v
		}
	}
	for i, c := range cases.Content {
		tc := &tf.Tests[i]
		redecode(member(member(c, "request"), "body"), &tc.Request.Body)
		if tc.Upstream != nil {
			redecode(member(member(c, "upstream"), "body"), &tc.Upstream.Body)
		}
		redecode(member(member(c, "expect"), "body"), &tc.Expect.Body)
		redecode(member(member(c, "expect"), "body_subset"), &tc.Expect.BodySubset)
	}
}

// retag retags the untagged timestamps under n as strings, noting them in
// retagged, and reports whether n holds any such, retagged now or before
// (under an anchor another body named first).
func retag(n *yaml.Node, retagged, seen map[*yaml.Node]bool) bool {
	if n == nil || seen[n] {
		return false
	}
	seen[n] = true
	if n.Kind == yaml.ScalarNode && n.Tag == "!!timestamp" && n.Style&yaml.TaggedStyle == 0 {
		n.Tag, retagged[n] = "!!str", true
	}
	found := retagged[n]
	found = retag(n.Alias, retagged, seen) || found
	for _, c := range n.Content {
		found = retag(c, retagged, seen) || found
	}
	return found
}

// member returns the value of key in the mapping n, through aliases and
// documents; nil when there is none.
func member(n *yaml.Node, key string) *yaml.Node {
	n = resolved(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolved(n.Content[i+1])
		}
	}
	return nil
}

func resolved(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) == 1 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

const testHelp = `Usage: signpost test [--run REGEXP] TESTFILE...

Runs rule unit tests: each case sends a request through the rules, in process,
against a canned upstream response, and compares what the caller gets; a case
with repeat: N sends it N times, as one caller, and compares the last answer.
A body given as a string is sent as that text, so a JSON string is written with
its quotes, body: '"hello"'; any other body is sent as JSON. A case that cannot
be sent as written (a path a request line cannot carry, a header that is not
one, a body other than its headers declare) fails alone, saying why, and the
other cases still run. Exits 0 when every case passes, 1 when any fails.`

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
	tf, caseErrs, err := readTestFile(file)
	if err != nil {
		return 0, 0, err
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
		msgs := caseErrs[i]
		if msgs == nil {
			msgs = runCase(cfg, &tc, rulesFile)
		}
		if len(msgs) > 0 {
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

// readTestFile reads a test file. A case yaml.v3 cannot decode does not
// stop the others: what is wrong with it is in caseErrs, by its index.
func readTestFile(file string) (tf *testFile, caseErrs map[int][]string, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot read the test file: %v", file, errors.Unwrap(err))
	}
	const shape = "a test file holds rules: <rule file> and tests: [{name, request, upstream, expect}]"
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %s; %s", file, strings.TrimPrefix(err.Error(), "yaml: "), shape)
	}
	tf = &testFile{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// On a value it cannot decode, yaml.v3 reads on and reports them all.
	err = dec.Decode(tf)
	timestampsAsText(&doc, tf)
	if err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, nil, fmt.Errorf("%s: %s; %s", file, strings.TrimPrefix(err.Error(), "yaml: "), shape)
		}
		var fileErrs []string
		caseErrs, fileErrs = caseTypeErrors(&doc, te)
		if len(fileErrs) > 0 {
			return nil, nil, fmt.Errorf("%s: %s; %s", file, strings.Join(fileErrs, "; "), shape)
		}
	}
	if tf.Rules == "" {
		return nil, nil, fmt.Errorf("%s: rules: missing; name the rule file the tests are for, e.g. rules: ../tickets.yaml", file)
	}
	if len(tf.Tests) == 0 {
		return nil, nil, fmt.Errorf("%s: tests: no cases; add at least one {name, request, upstream, expect}", file)
	}
	return tf, caseErrs, nil
}

// runCase returns what is wrong with the case, or with its outcome;
// nothing when it passes. A case signpost cannot send as written is not
// run, and its faults are all there is to say.
func runCase(cfg *rules.Config, tc *testCase, rulesFile string) (msgs []string) {
	if faults := caseFaults(tc); len(faults) > 0 {
		return faults
	}
	defer func() {
		if v := recover(); v != nil {
			msgs = []string{fmt.Sprintf("signpost panicked running this case: %v\nthe case is %s %s; a panic is a fault in signpost, whatever the case holds", v, tc.Request.Method, tc.Request.Path)}
		}
	}()
	build := func() (*http.Request, error) {
		return newRequest(tc.Request.Method, tc.Request.Path, tc.Request.Headers, tc.Request.Body)
	}
	req, err := build()
	if err != nil {
		return []string{"request: " + err.Error()}
	}
	up := &fakeUpstream{res: tc.Upstream}
	w, err := inProcessRepeated(cfg, build, up, tc.Repeat)
	if err != nil {
		return []string{err.Error()}
	}
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
	if len(msgs) > 0 {
		msgs = append(msgs, caseNotes(cfg, tc, req, rulesFile)...)
	}
	return msgs
}

// caseFaults returns what keeps the case from being sent as written, each
// naming the key, the value seen and what it must be.
func caseFaults(tc *testCase) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	r := &tc.Request
	if r.Method == "" || r.Path == "" {
		add("request: needs method and path, e.g. {method: PATCH, path: /tickets/T-8841}")
	}
	if r.Method != "" && !httpMethod.MatchString(strings.ToUpper(r.Method)) {
		add("request.method %q is not an HTTP method: a method is letters alone, e.g. GET or PATCH", r.Method)
	}
	if r.Path != "" {
		if m := targetFault(r.Path); m != "" {
			add("request.path %s", m)
		}
	}
	out = append(out, headerFaults("request", r.Headers)...)
	out = append(out, bodyFaults("request", r.Headers, r.Body)...)
	if tc.Repeat < 0 || tc.Repeat > maxRepeat {
		add("repeat: %d is out of range; send the request from 1 to %d times, e.g. repeat: 3", tc.Repeat, maxRepeat)
	}
	if u := tc.Upstream; u != nil {
		switch {
		case u.Status == 0:
			add("upstream.status: missing; give the status the upstream answers with, e.g. upstream: {status: 400, body: {error: Invalid status}}")
		case u.Status < 200 || u.Status > 599:
			add("upstream.status %d is not a status an upstream answers a request with; want one from 200 to 599, e.g. 400", u.Status)
		}
		out = append(out, headerFaults("upstream", u.Headers)...)
		out = append(out, bodyFaults("upstream", u.Headers, u.Body)...)
	}
	if st := tc.Expect.Status; st != 0 && (st < 100 || st > 599) {
		add("expect.status %d is not an HTTP status; want one from 100 to 599, e.g. 400", st)
	}
	for _, k := range sortedKeys(tc.Expect.Headers) {
		if !httpwire.ValidFieldName(k) {
			add("expect.headers: %q is not a header name, so no answer has it: %s", k, headerNameRule)
		}
	}
	return out
}

const headerNameRule = "a name is letters, digits and !#$%&'*+-.^_`|~ alone, e.g. X-Session-Id"

// templateVariable finds a path template's variable left in a request path.
var templateVariable = regexp.MustCompile(`\{[A-Za-z][A-Za-z0-9_]*(:[^/]*)?\}`)

// targetFault says what keeps a request path, with its query, from a
// request line, after its quoted value; "" when nothing does.
func targetFault(target string) string {
	if !strings.HasPrefix(target, "/") {
		return fmt.Sprintf("%q must start with /, e.g. /tickets/T-8841", target)
	}
	if v := templateVariable.FindString(target); v != "" {
		return fmt.Sprintf("%q holds the template variable %s; a case sends a request, so put the value to send in its place", target, v)
	}
	if f := rules.TargetFault(target); f != nil {
		return fmt.Sprintf("%q holds %v; write it percent-encoded, e.g. %s", target, f, f.Fixed)
	}
	return ""
}

// headerFaults returns what keeps the headers of where ("request" or
// "upstream") from being sent.
func headerFaults(where string, h map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(h) {
		v := h[k]
		if !httpwire.ValidFieldName(k) {
			out = append(out, fmt.Sprintf("%s.headers: %q is not a header name: %s", where, k, headerNameRule))
			continue
		}
		for i, c := range []byte(v) {
			if c < ' ' && c != '\t' || c == 0x7f {
				out = append(out, fmt.Sprintf("%s.headers.%s %q holds %s at byte %d, which a header value cannot carry; write the value on one line, without control characters", where, k, v, controlName(c), i+1))
				break
			}
		}
		if strings.EqualFold(k, "Transfer-Encoding") {
			out = append(out, fmt.Sprintf("%s.headers.%s %q: signpost test frames the body by its length; leave Transfer-Encoding out", where, k, v))
		}
	}
	return out
}

func controlName(c byte) string {
	switch c {
	case '\n':
		return "a line feed"
	case '\r':
		return "a carriage return"
	}
	return fmt.Sprintf("the control character U+%04X", c)
}

// bodyFaults returns what makes the body of where ("request" or
// "upstream") other than its headers declare it, or unsendable.
func bodyFaults(where string, h map[string]string, body any) []string {
	b, err := bodyBytes(body)
	if err != nil {
		what := strings.TrimPrefix(err.Error(), "json: unsupported value: ")
		return []string{fmt.Sprintf("%s.body holds %s, which JSON cannot carry; quote it to send it as a string, e.g. '%s'", where, what, what)}
	}
	var out []string
	if k, v, ok := header(h, "Content-Length"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n != len(b) {
			out = append(out, fmt.Sprintf("%s.headers.%s %q does not match the body, %d bytes; leave it out: signpost test sets it from the body", where, k, v, len(b)))
		}
	}
	_, isText := body.(string)
	if k, ct, ok := header(h, "Content-Type"); ok && body != nil && !isText && !jsonMediaType(ct) {
		out = append(out, fmt.Sprintf("%s.body is %s, sent as JSON, but %s.headers.%s is %q; write the body as the text to send, e.g. body: 'status=open', or declare a JSON type, e.g. application/json", where, yamlKind(body), where, k, ct))
	}
	return out
}

// header returns the value of the header named name, in any case.
func header(h map[string]string, name string) (key, value string, ok bool) {
	for _, k := range sortedKeys(h) {
		if strings.EqualFold(k, name) {
			return k, h[k], true
		}
	}
	return "", "", false
}

// jsonMediaType reports whether a Content-Type names JSON:
// application/json, or a type with the +json suffix.
func jsonMediaType(ct string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(ct), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func yamlKind(v any) string {
	switch v.(type) {
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	case bool:
		return "true or false"
	case int, int64, uint64, float64:
		return "a number"
	}
	return "a value"
}

// caseNotes says, after a case failed, what may explain it: a request no
// route takes, or a body sent as text that its Content-Type calls JSON.
func caseNotes(cfg *rules.Config, tc *testCase, req *http.Request, rulesFile string) []string {
	var out []string
	p, err := proxy.New(cfg, proxy.Options{Upstream: &url.URL{Scheme: "http", Host: "upstream.test"}, Transport: &fakeUpstream{}})
	if err == nil {
		if route, _ := p.RouteFor(req); route == nil {
			var others []string
			seen := map[string]bool{}
			for _, r := range cfg.Routes {
				if seen[r.Method] || r.Method == req.Method {
					continue
				}
				seen[r.Method] = true
				other := req.Clone(req.Context())
				other.Method = r.Method
				if route, _ := p.RouteFor(other); route != nil {
					others = append(others, route.Method+" "+route.RawPath+" ("+route.Name+")")
				}
			}
			note := fmt.Sprintf("note: %s %s matches no route of %s, so none of its rules applies", req.Method, req.URL.Path, rulesFile)
			if len(others) > 0 {
				note += "; routes for this path take another method: " + strings.Join(others, ", ")
			}
			out = append(out, note)
		}
		p.Close()
	}
	textUnderJSON := func(where string, h map[string]string, body any) {
		s, isText := body.(string)
		if _, ct, ok := header(h, "Content-Type"); ok && isText && jsonMediaType(ct) && !json.Valid([]byte(s)) {
			quoted, _ := json.Marshal(s)
			out = append(out, fmt.Sprintf("note: %s.body is sent as the text %s, which is not JSON, though its Content-Type is %s; if the JSON string is meant, write it with its quotes, e.g. body: %s", where, strconv.Quote(s), ct, yamlQuote(string(quoted))))
		}
	}
	textUnderJSON("request", tc.Request.Headers, tc.Request.Body)
	if tc.Upstream != nil {
		textUnderJSON("upstream", tc.Upstream.Headers, tc.Upstream.Body)
	}
	return out
}

// yamlQuote writes s as a single-quoted YAML scalar.
func yamlQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// caseTypeErrors sorts what yaml.v3 could not decode into the cases it is
// in, by line, each message in the test file's words; what lies outside
// every case is the file's.
func caseTypeErrors(doc *yaml.Node, te *yaml.TypeError) (byCase map[int][]string, file []string) {
	var cases []*yaml.Node
	if root := doc; root.Kind == yaml.DocumentNode && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0].Content
		for i := 0; i+1 < len(m); i += 2 {
			if m[i].Value == "tests" && m[i+1].Kind == yaml.SequenceNode {
				cases = m[i+1].Content
			}
		}
	}
	byCase = map[int][]string{}
	for _, e := range te.Errors {
		line := 0
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			n, _, _ := strings.Cut(rest, ":")
			line, _ = strconv.Atoi(n)
		}
		at := -1
		for i, c := range cases {
			if c.Line <= line && line <= lastLine(c) {
				at = i
				break
			}
		}
		if at < 0 {
			file = append(file, typeErrorWords(e, ""))
			continue
		}
		key := ""
		if m := cannotRead.FindStringSubmatch(e); m != nil {
			key = keyAt(cases[at], line, "!!"+m[1], m[2], "")
		}
		byCase[at] = append(byCase[at], typeErrorWords(e, key))
	}
	return byCase, file
}

// keyAt returns the key path, inside the mapping n, of the value on the
// given line with the given tag (and text, when one is given), e.g.
// "repeat" or "request.headers"; "" when there is none.
func keyAt(n *yaml.Node, line int, tag, text, prefix string) string {
	n = resolved(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolved(n.Content[i+1])
		if v == nil {
			continue
		}
		p := prefix + k.Value
		if v.Line == line && v.ShortTag() == tag && (text == "" || v.Value == text) {
			return p
		}
		if sub := keyAt(v, line, tag, text, p+"."); sub != "" {
			return sub
		}
	}
	return ""
}

func lastLine(n *yaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		last = max(last, lastLine(c))
	}
	return last
}

// The keys of each mapping a test file holds, for messages about them.
var testKeys = map[string]reflect.Type{
	"main.testFile":    reflect.TypeFor[testFile](),
	"main.testCase":    reflect.TypeFor[testCase](),
	"main.testRequest": reflect.TypeFor[testRequest](),
	"main.canned":      reflect.TypeFor[canned](),
	"main.testExpect":  reflect.TypeFor[testExpect](),
}

// Go types, as yaml.v3 names them, in the test file's words.
var testTypeWords = map[string]string{
	"int":               "a whole number, e.g. 3",
	"string":            "text",
	"map[string]string": "a mapping of names to values, e.g. {Content-Type: application/json}",
	"[]main.testCase":   "a list of cases, each {name, request, upstream, expect}",
	"main.testCase":     "a case: a mapping {name, request, upstream, expect}",
	"main.testRequest":  "a request: a mapping {method, path, headers, body}",
	"*main.canned":      "an upstream answer: a mapping {status, headers, body}",
	"main.testExpect":   "what the caller must get: a mapping {status, headers, body or body_subset}",
}

var (
	unknownField = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
	cannotRead   = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
)

// typeErrorWords rewrites one of yaml.v3's decoding errors, which name Go
// types, in the test file's words, naming the key when it is known:
// "line 4: unknown key "expcet"; did you mean "expect"? the keys here are
// name, request, repeat, upstream, expect", "line 5: repeat: found text
// "twice"; want a whole number, e.g. 3".
func typeErrorWords(e, key string) string {
	prefix, msg := "", e
	if i := strings.Index(e, ": "); i >= 0 && strings.HasPrefix(e, "line ") {
		prefix, msg = e[:i+2], e[i+2:]
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		if t, ok := testKeys[m[2]]; ok {
			var keys []string
			for f := range t.Fields() {
				keys = append(keys, strings.Split(f.Tag.Get("yaml"), ",")[0])
			}
			return fmt.Sprintf("%sunknown key %q; %sthe keys here are %s", prefix, m[1], didYouMean(m[1], keys), strings.Join(keys, ", "))
		}
	}
	if m := cannotRead.FindStringSubmatch(msg); m != nil {
		found := map[string]string{"str": "text", "int": "a whole number", "float": "a number", "bool": "true or false", "map": "a mapping", "seq": "a list", "null": "nothing"}[m[1]]
		if found == "" {
			found = "!!" + m[1]
		}
		if m[2] != "" {
			found += " " + strconv.Quote(m[2])
		}
		if want, ok := testTypeWords[m[3]]; ok {
			if key != "" {
				prefix += key + ": "
			}
			return fmt.Sprintf("%sfound %s; want %s", prefix, found, want)
		}
	}
	return e
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
