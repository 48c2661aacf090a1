package main

import (
	"strings"
	"testing"
)

// TestMCPCommandLine: mcp refuses a bad command line or rule file before it
// serves anything, naming the flag or the problem and a way out, and
// writes nothing to standard output, which carries the protocol.
func TestMCPCommandLine(t *testing.T) {
	bad := writeFile(t, "bad.yaml", broken)
	noUpstream := writeFile(t, "no-upstream.yaml", "routes:\n  get_ticket:\n    method: GET\n    path: /tickets/{id}\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string // each must appear on standard error
	}{
		{"no rule file", []string{"mcp"}, []string{"signpost mcp: --config names the rule file whose routes become tools, e.g. signpost mcp --config configs/tickets.yaml"}},
		{"a stray argument", []string{"mcp", "--config", "x.yaml", "extra"}, []string{"--config names the rule file"}},
		{"a broken rule file", []string{"mcp", "--config", bad}, []string{
			bad + `:3:13: routes.update_ticket.method: method "patch" must be upper case: PATCH`,
			"signpost mcp: refusing to start: " + bad + " has problems"}},
		{"no upstream", []string{"mcp", "--config", noUpstream}, []string{"signpost mcp: no upstream: set upstream: in " + noUpstream + " or pass --upstream"}},
		{"a bad upstream", []string{"mcp", "--config", noUpstream, "--upstream", "127.0.0.1:8081"}, []string{"signpost mcp: --upstream "}},
		{"a bad listen address", []string{"mcp", "--config", noUpstream, "--listen", "8080"}, []string{"signpost mcp: --listen "}},
		{"a bad log format", []string{"mcp", "--config", noUpstream, "--log-format", "xml"}, []string{`--log-format "xml": must be json or text`}},
		{"a zero dial timeout", []string{"mcp", "--config", noUpstream, "--upstream-dial-timeout", "0s"},
			[]string{"--upstream-dial-timeout 0s: must be a positive duration, e.g. --upstream-dial-timeout 5s"}},
		{"a negative bound", []string{"mcp", "--config", noUpstream, "--max-concurrent", "-1"}, []string{"--max-concurrent -1: must be 0 (no bound) or more"}},
		{"a budget under one error body", []string{"mcp", "--config", noUpstream, "--buffer-budget", "1KiB"},
			[]string{"signpost mcp: --buffer-budget 1KiB: must be at least 64 KiB, the default limits.error_body, e.g. --buffer-budget 64MiB"}},
		{"a budget that is no size", []string{"mcp", "--config", noUpstream, "--buffer-budget", "lots"}, []string{`invalid value "lots" for flag -buffer-budget: must be a size in bytes, e.g. 64MiB`}},
		{"help", []string{"mcp", "-h"}, []string{"Usage: signpost mcp --config FILE [--listen ADDR] [flags]", "-listen", "-admin", "-watch", "-drain-timeout", "-buffer-budget"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if stdout != "" {
				t.Errorf("standard output, which carries the protocol, holds %q", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestUsageListsMCP(t *testing.T) {
	_, stdout, _ := run(t, "help")
	if !strings.Contains(stdout, "signpost mcp --config FILE") {
		t.Errorf("usage lacks the mcp command:\n%s", stdout)
	}
}
