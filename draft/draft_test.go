package draft

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldens are the Documents under testdata, each with its expected rule
// file (NAME.rules.yaml) and tests file (NAME.tests.yaml).
var goldens = []struct {
	name string
	opts Options
	// has and lacks are texts the rule file must and must not hold, beyond
	// the golden comparison: what the case is about.
	has, lacks []string
}{
	{name: "tickets", opts: Options{Upstream: "http://127.0.0.1:8081"}, has: []string{
		"get_ticket:", "update_ticket:", "create_ticket:", "assign_ticket:", "list_tickets:",
		"ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}",
		"# status: {enum: [open, closed]}", // a closed set in the query no error refused a value of
		"page: {format: integer}",
		"due_at: {format: date}",
		"enum: [open, pending, closed]",
		"          done: closed",
		"          # finished: closed",
		"match: {status: 409, json: error, equals: Cannot close ticket}",
		"code: update_ticket_requires_assign_ticket",
		"next_call: assign_ticket(ticket_id)",
		"code: unknown_ticket",
		"code: invalid_status",
		`- match: {status: 500, body: '(?i:<title>)\s*500 Internal Server Error\s*(?i:</title>)'}`,
		"code: upstream_error",
		"retryable: true",
	}, lacks: []string{"OPEN: open", "title: {"}},
	// Traffic of scripted agents against Prometheus's and Alertmanager's
	// APIs, each point a mistake that made a served draft worse.
	{name: "agents", has: []string{
		"      type:\n        enum: [alert, record]", // refused values, several callers
		"# createdBy: {enum: [alice-bot, bob-bot, carol-bot]}",
		// Thirteen texts that differ only past `invalid parameter "query": `
		// are one rule; a value quoted is captured as received.
		`- match: {status: 400, json: error, regex: '^invalid parameter "query": .*'}`,
		`regex: '^invalid parameter "time": cannot parse "(?P<received>[^"]*)" to a valid timestamp$'}`,
		`- match: {status: 400, body: '\A\s*bad matcher format: (?P<received>.*)'}`,
		// The field the text names, not the one retries changed most.
		"code: missing_created_by\n        field: createdBy",
		"code: invalid_step\n        field: step",
		// A parser's position is matched as any, since the next error's differs.
		`regex: '^invalid parameter "query": [0-9]+:[0-9]+: parse error: no expression found in input$'`,
		// A recovery that changed the body's encoding blames the encoding.
		"code: unsupported_body_encoding\n        message: send the body as application/x-www-form-urlencoded",
		// A call that never succeeded is no route, only a comment.
		"  # list_tsdbstats:\n  #   method: GET\n  #   path: /api/v1/status/tsdbstats",
	}, lacks: []string{
		"equals: 'invalid parameter \"query\": 1:5", "code: invalid_query_2", "field: comment", "field: endsAt",
		"\n  list_tsdbstats:",
		"enum: [up", "enum: ['15s'", "enum: [15s", "enum: ['60'", "enum: [maintenance", "# comment: {enum",
		"rfc3339-utc", "step: {", "pattern: '^[0-9]+-", "pattern: '^sha",
		"example: sha256",
	}},
	{name: "paths", has: []string{"path: /api/v1/label/{name}/values", "path: /v2/{name:.+}/tags/list",
		// A read named by a verb after its noun reads as words.
		"  list_tags:\n", "  search_tickets:\n"}},
	{name: "low_evidence", has: []string{"# upstream: give"}, lacks: []string{"    errors:\n", "    fields:\n", "\n      status", "\n        next_call"}},
	{name: "credential", lacks: []string{"\n      api_key", "\n      accessToken", "[masked]"}},
	{name: "names", has: []string{
		"  list_tickets:\n    method: GET\n    path: /search",
		"  list_tickets_2:\n    method: GET\n    path: /v1/tickets",
		"  list_tickets_3:\n    method: GET\n    path: /v2/tickets",
		"  list_things:", "  get_root:", "  delete_ticket:", "  replace_ticket:",
		"id: {format: uuid}", "code: unknown_ticket",
	}},
	{name: "metacharacters", has: []string{
		`version: {pattern: '^v[0-9]+\.[0-9]+\+beta$', example: v1.2+beta}`,
		`body: '\A\s*Error: price must be \$5\.00\+ \(USD\)\? \[see docs\]'`,
		`equals: 'Invalid {version}: use ''vN.N+beta'' #1'`,
		`message: 'invalid {{version}}: use ''vN.N+beta'' #1'`,
		"amount: {format: number}",
	}},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldens {
		t.Run(tc.name, func(t *testing.T) {
			doc := readDocument(t, filepath.Join("testdata", tc.name+".json"))
			d, err := Write(doc, tc.name+".rules.yaml", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Write(doc, tc.name+".rules.yaml", tc.opts)
			if err != nil || !bytes.Equal(again.Rules, d.Rules) || !bytes.Equal(again.Tests, d.Tests) {
				t.Fatalf("a second Write differs: the draft must be deterministic (err %v)", err)
			}
			golden(t, filepath.Join("testdata", tc.name+".rules.yaml"), d.Rules)
			golden(t, filepath.Join("testdata", tc.name+".tests.yaml"), d.Tests)
			for _, s := range tc.has {
				if !strings.Contains(string(d.Rules), s) {
					t.Errorf("the rules lack %q", s)
				}
			}
			for _, s := range tc.lacks {
				if strings.Contains(string(d.Rules), s) {
					t.Errorf("the rules hold %q", s)
				}
			}

			// The draft loads with no problem and no warning, and its tests
			// pass, run as signpost runs them.
			dir := t.TempDir()
			rulesFile := filepath.Join(dir, tc.name+".rules.yaml")
			testsFile := filepath.Join(dir, tc.name+".tests.yaml")
			mustWrite(t, rulesFile, d.Rules)
			mustWrite(t, testsFile, d.Tests)
			cfg, err := rules.Load(rulesFile)
			if err != nil {
				t.Fatalf("the draft does not load:\n%v", err)
			}
			if w := cfg.Warnings(); len(w) > 0 {
				t.Errorf("the draft has warnings:\n%v", w)
			}
			bin := signpostBinary(t)
			run(t, bin, "check", "--strict", rulesFile)
			run(t, bin, "test", testsFile)
		})
	}
}

func readDocument(t *testing.T, path string) *observe.Document {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc observe.Document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &doc
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		mustWrite(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./draft -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; run go test ./draft -update and review the diff. Got:\n%s", path, got)
	}
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// signpostBinary builds cmd/signpost once per test run: its test and check
// commands live in package main, which a test cannot import.
func signpostBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds cmd/signpost")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "signpost-draft-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "signpost")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/signpost-proxy/signpost/cmd/signpost")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building signpost: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func run(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Errorf("signpost %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
