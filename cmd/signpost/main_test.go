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
		{name: "unknown command", args: []string{"serv"}, code: 2, stderr: []string{`unknown command "serv"; did you mean "serve"? commands: serve, check, test, explain, schema, import, draft, aliases, demo, version`}},
		{name: "version", args: []string{"version"}, code: 0, stdout: []string{"signpost ", "go1."}},
		{name: "check clean", args: []string{"check", "../../configs/tickets.yaml"}, code: 0,
			stdout: []string{"../../configs/tickets.yaml: ok: 5 routes, 11 fields, 10 error rules"}, emptyError: true},
		{name: "check broken", args: []string{"check", bad}, code: 1,
			stdout: []string{bad + ": 2 problems"},
			stderr: []string{
				bad + `:3:13: routes.update_ticket.method: method "patch" must be upper case: PATCH`,
				bad + `:5:5: routes.update_ticket: unknown key "feilds"; did you mean "fields"?`,
			}},
		{name: "check a route no request reaches", args: []string{"check", "--strict", "../../rules/testdata/routes.warn.yaml"}, code: 1,
			stdout: []string{"../../rules/testdata/routes.warn.yaml: 2 warnings (--strict): 9 routes"},
			stderr: []string{"../../rules/testdata/routes.warn.yaml:21:3: warning: routes.event_by_id.path: can never be reached: " +
				"GET /events/{slug} (event_by_slug, line 18) takes every request for GET /events/{id:[0-9]+}; declare this route above that one, or narrow that one's path"}},
		{name: "check missing file", args: []string{"check", "nope.yaml"}, code: 1,
			stderr: []string{"nope.yaml: cannot read the rule file: no such file or directory"}},
		{name: "check both", args: []string{"check", "../../configs/tickets.yaml", bad}, code: 1,
			stdout: []string{"tickets.yaml: ok", "2 problems"}},
		{name: "check verbose", args: []string{"check", "-v", "../../configs/addresses.yaml"}, code: 0,
			stdout: []string{
				`../../configs/addresses.yaml:14:7: routes.create_address.fields.country_code: 249 values, listing costs 514 tokens against a budget of 60: messages state "must be an ISO 3166-1 alpha-2 country code, two letters" and did_you_mean proposes values`,
				"../../configs/addresses.yaml: ok: 1 route, 3 fields, 2 error rules",
			}},
		{name: "check warnings", args: []string{"check", "../../rules/testdata/shadowed.warn.yaml"}, code: 0,
			stdout: []string{"shadowed.warn.yaml: ok with 5 warnings: 1 route, 3 fields, 8 error rules"},
			stderr: []string{"shadowed.warn.yaml:22:9: warning: routes.update_ticket.errors[2]: can never match: errors[1] (line 19)"}},
		{name: "check strict", args: []string{"check", "--strict", "../../rules/testdata/shadowed.warn.yaml"}, code: 1,
			stdout: []string{"shadowed.warn.yaml: 5 warnings (--strict)"}},
		{name: "check json", args: []string{"check", "--format", "json", "../../rules/testdata/shadowed.warn.yaml", "../../rules/testdata/empty.bad.yaml"}, code: 1,
			stdout: []string{`"severity": "warning",`, `"line": 22,`, `"path": "routes.update_ticket.errors[2]",`, `"severity": "error",`, `"file": "../../rules/testdata/empty.bad.yaml",`}},
		{name: "check bad format", args: []string{"check", "--format", "xml", "x.yaml"}, code: 2, stderr: []string{`--format "xml": must be text or json`}},
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
		{name: "serve bad max concurrent", args: []string{"serve", "--config", noUpstream, "--upstream", "http://127.0.0.1:1", "--max-concurrent", "-1"}, code: 2,
			stderr: []string{`--max-concurrent -1: must be 0 (no bound) or more`}},
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
		`"error": "Invalid priority"`, // the legacy answer
		`"error": "invalid_priority"`, // the rewritten one
		`"received": "urgent"`,        // the value echoed
		"28 bytes on the wire",        // the legacy body's size
		"124 bytes on the wire",       // the rewritten body's size
		"-> 201 Created",              // the corrected call succeeds
		`signpost_rejections_total{code="invalid_priority",field="priority",route="create_ticket"} 1`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestAliasesFromLogs(t *testing.T) {
	obs := func(rejected, accepted string) string {
		return `{"time":"2026-11-30T04:00:00Z","level":"INFO","msg":"alias observed","route":"create_address","field":"country_code","rejected":"` + rejected + `","accepted":"` + accepted + `","count":1}` + "\n"
	}
	replicaA := obs("Grande Bretagne", "GB") + obs("Grande Bretagne", "GB") + obs("Allemagne", "DE") +
		"not json at all\n" + `{"msg":"rewrote upstream error","route":"create_address"}` + "\n" + obs("UK", "GB")
	// "no" for NO differs only in case: no alias, however often seen.
	replicaB := obs("Grande Bretagne", "GB") + obs("Allemagne", "DE") + obs("Allemagne", "DE") + obs("no", "NO") + obs("no", "NO") + obs("no", "NO") + obs("UK", "GB") + obs("UK", "GB")
	a, b := writeFile(t, "a.log", replicaA), writeFile(t, "b.log", replicaB)

	code, stdout, stderr := run(t, "aliases", "--from", a, "--from", b, "--config", "../../configs/addresses.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `# 12 alias observations in the logs; 2 pairs seen at least 3 times (1 already declared, left out).
# Paste each alias under its field in the rule file.
routes:
  create_address:
    fields:
      country_code:
        aliases:
          Allemagne: DE  # seen 3 times
          "Grande Bretagne": GB  # seen 3 times
`
	if stdout != want {
		t.Errorf("got:\n%s\nwant:\n%s", stdout, want)
	}
	// The snippet is YAML that reads back as the same aliases.
	snippet := writeFile(t, "snippet.yaml", "routes:\n  create_address:\n    method: POST\n    path: /a\n    fields:\n      country_code:\n        enum: [GB, DE, \"NO\"]\n"+
		strings.SplitN(stdout, "      country_code:\n", 2)[1])
	if code, _, stderr := run(t, "check", snippet); code != 0 {
		t.Errorf("the proposed aliases do not load: %s", stderr)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"aliases"}, 2, "name the log to read"},
		{[]string{"aliases", "--from", "missing.log"}, 1, "cannot read the log: missing.log: no such file or directory"},
		{[]string{"aliases", "--from", a, "--min-count", "1"}, 0, "3 pairs seen at least 1 time."},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", tc.args, code, stdout+stderr, tc.code, tc.want)
		}
	}
}
