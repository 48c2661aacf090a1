package main

import (
	"flag"
	"slices"
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
		{"an allowed origin with a path", []string{"mcp", "--config", noUpstream, "--listen", "127.0.0.1:0", "--allow-origin", "https://agent.example.com/"},
			[]string{`signpost mcp: --allow-origin "https://agent.example.com/": must be scheme://host[:port], with nothing after the host and port: no path, query or trailing slash, e.g. --allow-origin https://agent.example.com`}},
		{"an allowed origin without its scheme", []string{"mcp", "--config", noUpstream, "--listen", "127.0.0.1:0", "--allow-origin", "agent.example.com:8443"},
			[]string{`signpost mcp: --allow-origin "agent.example.com:8443": must be scheme://host[:port], e.g. --allow-origin https://agent.example.com:8443`}},
		{"a wildcard origin", []string{"mcp", "--config", noUpstream, "--listen", "127.0.0.1:0", "--allow-origin", "*"},
			[]string{`signpost mcp: --allow-origin "*": signpost has no wildcard origin: name each origin whose pages may call the tools, e.g. --allow-origin https://agent.example.com`}},
		{"the opaque origin", []string{"mcp", "--config", noUpstream, "--listen", "127.0.0.1:0", "--allow-origin", "https://agent.example.com,null"},
			[]string{`signpost mcp: --allow-origin "null": "null" is the opaque origin of a file or sandboxed page, which names no site and cannot be allowed, e.g. --allow-origin https://agent.example.com`}},
		{"an empty origin in a list", []string{"mcp", "--config", noUpstream, "--listen", "127.0.0.1:0", "--allow-origin", "https://a.example,,https://b.example"},
			[]string{`signpost mcp: --allow-origin "": must be scheme://host[:port], e.g. --allow-origin https://agent.example.com`}},
		{"an allowed origin over stdio", []string{"mcp", "--config", noUpstream, "--allow-origin", "https://agent.example.com"},
			[]string{"signpost mcp: --allow-origin applies to streamable HTTP, and no Origin comes over standard input and output; pass --listen too, e.g. --listen 127.0.0.1:8090 --allow-origin https://agent.example.com"}},
		{"help", []string{"mcp", "-h"}, []string{"Usage: signpost mcp --config FILE [--listen ADDR] [flags]", "-listen", "-allow-origin", "-admin", "-watch", "-drain-timeout", "-buffer-budget"}},
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

// TestAllowOriginList: --allow-origin may be repeated, and each use may
// name several origins separated by commas, spaces around them ignored.
func TestAllowOriginList(t *testing.T) {
	var o originList
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.Var(&o, "allow-origin", "")
	if err := fs.Parse([]string{"--allow-origin", "https://a.example", "--allow-origin", "http://localhost:3000, https://b.example:8443"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"https://a.example", "http://localhost:3000", "https://b.example:8443"}
	if !slices.Equal(o, want) {
		t.Errorf("--allow-origin gave %q, want %q", o, want)
	}
	if p := o.check("127.0.0.1:8090"); p != "" {
		t.Errorf("check: %s; want no problem", p)
	}
}
