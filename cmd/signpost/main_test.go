package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const broken = `routes:
  update_ticket:
    method: patch
    path: /tickets/{ticket_id}
    feilds:
      status: {enum: []}
`

func TestCommands(t *testing.T) {
	bad := writeFile(t, "bad.yaml", broken)
	noUpstream := writeFile(t, "no-upstream.yaml", "routes:\n  get_ticket:\n    method: GET\n    path: /tickets/{id}\n")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     []string // each must appear
		stderr     []string
		notStdout  string
		emptyError bool
	}{
		{name: "no args", args: nil, code: 2, stderr: []string{"Usage:", "signpost check FILE..."}},
		{name: "help", args: []string{"help"}, code: 0, stdout: []string{"signpost serve --config FILE"}},
		{name: "unknown command", args: []string{"serv"}, code: 2, stderr: []string{`unknown command "serv"; did you mean "serve"? commands: serve, check, demo, version`}},
		{name: "version", args: []string{"version"}, code: 0, stdout: []string{"signpost ", "go1."}},
		{name: "check clean", args: []string{"check", "../../configs/tickets.yaml"}, code: 0,
			stdout: []string{"../../configs/tickets.yaml: ok: 5 routes, 11 fields, 10 error rules"}, emptyError: true},
		{name: "check broken", args: []string{"check", bad}, code: 1,
			stdout: []string{bad + ": 2 problems"},
			stderr: []string{
				bad + `:3:13: routes.update_ticket.method: method "patch" must be upper case: PATCH`,
				bad + `:5:5: routes.update_ticket: unknown key "feilds"; did you mean "fields"?`,
			}},
		{name: "check missing file", args: []string{"check", "nope.yaml"}, code: 1,
			stderr: []string{"nope.yaml: cannot read the rule file: no such file or directory"}},
		{name: "check both", args: []string{"check", "../../configs/tickets.yaml", bad}, code: 1,
			stdout: []string{"tickets.yaml: ok", "2 problems"}},
		{name: "check verbose", args: []string{"check", "-v", "../../configs/addresses.yaml"}, code: 0,
			stdout: []string{
				`../../configs/addresses.yaml:13:7: routes.create_address.fields.country_code: 249 values, listing costs 516 tokens against a budget of 60: messages state "must be a two-letter ISO 3166-1 alpha-2 country code" and did_you_mean proposes values`,
				"../../configs/addresses.yaml: ok: 1 route, 3 fields, 2 error rules",
			}},
		{name: "check nothing", args: []string{"check"}, code: 2, stderr: []string{"name at least one rule file"}},
		{name: "serve broken", args: []string{"serve", "--config", bad}, code: 2,
			stderr: []string{bad + ":5:5:", "refusing to start"}},
		{name: "serve without config", args: []string{"serve"}, code: 2, stderr: []string{"--config names the rule file"}},
		{name: "serve without upstream", args: []string{"serve", "--config", noUpstream, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, code: 2,
			stderr: []string{"no upstream: set upstream: in " + noUpstream + " or pass --upstream"}},
		{name: "serve bad upstream flag", args: []string{"serve", "--config", noUpstream, "--upstream", "localhost:8081"}, code: 2,
			stderr: []string{`--upstream "localhost:8081" is not an upstream base URL`}},
		{name: "serve bad listen flag", args: []string{"serve", "--config", noUpstream, "--listen", "8080"}, code: 2,
			stderr: []string{`--listen "8080" is not a listen address; must be host:port`}},
		{name: "serve bad log format", args: []string{"serve", "--config", noUpstream, "--log-format", "xml"}, code: 2,
			stderr: []string{`--log-format "xml": must be json or text`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d; want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if tc.emptyError && stderr != "" {
				t.Errorf("stderr not empty: %s", stderr)
			}
		})
	}
}

func TestDemo(t *testing.T) {
	code, stdout, stderr := run(t, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		`"error": "Invalid status"`, // the legacy answer
		`"error": "invalid_status"`, // the rewritten one
		`"received": "OPEN"`,        // the value echoed
		"26 bytes on the wire",      // the legacy body's size
		"129 bytes on the wire",     // the rewritten body's size
		"-> 200 OK",                 // the corrected call succeeds
		`signpost_rejections_total{code="invalid_status",field="status",route="update_ticket"} 1`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
}
