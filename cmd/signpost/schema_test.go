package main

import (
	"os"
	"strings"
	"testing"
)

// TestSchemaCommand drives signpost schema through Main. Its output is
// pinned by the golden files of package rules, which go test ./rules
// -update rewrites.
func TestSchemaCommand(t *testing.T) {
	bad := writeFile(t, "bad.yaml", broken)
	golden := func(name string) string {
		b, err := os.ReadFile("../../rules/testdata/schema/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string   // the whole of it, when set
		stderr []string // each must appear
	}{
		{name: "openai, flag after the file", args: []string{"schema", "../../configs/tickets.yaml", "--format", "openai"},
			stdout: golden("tickets.openai.json")},
		{name: "openai-strict", args: []string{"schema", "../../configs/tickets.yaml", "--format", "openai-strict"},
			stdout: golden("tickets.openai-strict.json")},
		{name: "mcp, flag before the file", args: []string{"schema", "--format=mcp", "../../configs/tickets.yaml"},
			stdout: golden("tickets.mcp.json")},
		{name: "jsonschema by default", args: []string{"schema", "../../configs/tickets.yaml"},
			stdout: golden("tickets.jsonschema.json")},
		{name: "anthropic, a catalog", args: []string{"schema", "../../configs/addresses.yaml", "-format", "anthropic"},
			stdout: golden("addresses.anthropic.json")},
		{name: "unknown format", args: []string{"schema", "../../configs/tickets.yaml", "--format", "opneai"}, code: 2,
			stderr: []string{`signpost schema: unknown --format "opneai"; did you mean "openai"? formats: jsonschema, openai, openai-strict, anthropic, mcp`}},
		{name: "unknown format, nothing close", args: []string{"schema", "../../configs/tickets.yaml", "--format", "yaml"}, code: 2,
			stderr: []string{`unknown --format "yaml"; formats: jsonschema, openai, openai-strict, anthropic, mcp`}},
		{name: "no file", args: []string{"schema", "--format", "openai"}, code: 2,
			stderr: []string{"name the rule file to export, e.g. signpost schema configs/tickets.yaml --format openai"}},
		{name: "two files", args: []string{"schema", "a.yaml", "b.yaml"}, code: 2,
			stderr: []string{"takes one rule file, got 2: a.yaml b.yaml"}},
		{name: "missing file", args: []string{"schema", "nope.yaml", "--format", "openai"}, code: 1,
			stderr: []string{"nope.yaml: cannot read the rule file: no such file or directory", "nope.yaml: 1 problem; no schema written"}},
		{name: "broken file", args: []string{"schema", bad}, code: 1,
			stderr: []string{
				bad + `:3:13: routes.update_ticket.method: method "patch" must be upper case: PATCH`,
				bad + `:5:5: routes.update_ticket: unknown key "feilds"; did you mean "fields"?`,
				bad + ": 2 problems; no schema written",
			}},
		{name: "help", args: []string{"schema", "-h"}, code: 2, stderr: []string{"Usage: signpost schema FILE [--format jsonschema|openai|openai-strict|anthropic|mcp]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			if tc.code == 0 && stdout != tc.stdout {
				t.Errorf("stdout differs from the golden file:\n%s", stdout)
			}
			if tc.code == 0 && stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
			if tc.code != 0 && stdout != "" {
				t.Errorf("stdout holds something after a failure: %s", stdout)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func TestUsageListsSchema(t *testing.T) {
	_, stdout, _ := run(t, "help")
	if !strings.Contains(stdout, "signpost schema FILE [--format F]") {
		t.Errorf("usage lacks the schema command:\n%s", stdout)
	}
}
