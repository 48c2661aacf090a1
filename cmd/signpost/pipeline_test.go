package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// TestSharedFlags: serve and mcp refuse the same bad values of the flags
// they share with the same message, each under its own name, before they
// read the rule file.
func TestSharedFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--upstream-dial-timeout", "0s"}, "--upstream-dial-timeout 0s: must be a positive duration, e.g. --upstream-dial-timeout 5s"},
		{[]string{"--max-concurrent", "-1"}, "--max-concurrent -1: must be 0 (no bound) or more, e.g. 512"},
		{[]string{"--buffer-budget", "64KB"}, "--buffer-budget 64KB: must be at least 64 KiB, the default limits.error_body, e.g. --buffer-budget 64MiB"},
		{[]string{"--listen", "8080"}, `--listen "8080" is not a listen address; must be host:port, e.g. 127.0.0.1:8080 or :8080`},
		{[]string{"--admin", ":99999"}, `--admin ":99999" is not a listen address`},
		{[]string{"--upstream", "ftp://127.0.0.1:21"}, `--upstream "ftp://127.0.0.1:21" is not an upstream base URL`},
		{[]string{"--log-format", "xml"}, `--log-format "xml": must be json or text`},
		{[]string{"--log-level", "loud"}, `--log-level "loud": must be one of debug, info, warn, error`},
		{[]string{"--log-flush-interval", "0s"}, "--log-flush-interval 0s: must be a positive duration, e.g. --log-flush-interval 1s"},
	} {
		for _, cmd := range []string{"serve", "mcp"} {
			t.Run(cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
				code, stdout, stderr := run(t, append([]string{cmd, "--config", "missing.yaml"}, tc.args...)...)
				if want := "signpost " + cmd + ": " + tc.want; code != exitUsage || !strings.Contains(stderr, want) {
					t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, want)
				}
				if stdout != "" || strings.Contains(stderr, "missing.yaml") {
					t.Errorf("read the rule file or wrote to standard output: %q %q", stdout, stderr)
				}
			})
		}
	}
}

// TestSharedFlagDefaults: every flag mcp takes, but those of its own,
// serve takes too, with the same default; the help may word what it bounds
// for each.
func TestSharedFlagDefaults(t *testing.T) {
	serveFS, mcpFS := flagsOf(t, "serve"), flagsOf(t, "mcp")
	mcpOnly := map[string]bool{"allow-origin": true} // for streamable HTTP alone
	n := 0
	mcpFS.VisitAll(func(m *flag.Flag) {
		if mcpOnly[m.Name] {
			return
		}
		n++
		s := serveFS.Lookup(m.Name)
		switch {
		case s == nil:
			t.Errorf("serve lacks --%s", m.Name)
		case s.DefValue != m.DefValue:
			t.Errorf("--%s defaults to %q for serve, %q for mcp", m.Name, s.DefValue, m.DefValue)
		}
	})
	if n != 14 {
		t.Errorf("mcp takes %d flags, want the 14 shared ones", n)
	}
}

// flagsOf is the flag set of the command called name, nothing parsed.
func flagsOf(t *testing.T, name string) *flag.FlagSet {
	t.Helper()
	for i := range commands {
		if commands[i].name == name {
			fs, _ := commands[i].flagSet(io.Discard)
			return fs
		}
	}
	t.Fatalf("no command %s", name)
	return nil
}
