package main

import (
	"strings"
	"testing"
)

// TestServeLimitFlags: the server's limits refuse values that would turn
// a bound off by accident, and name the flag and a good value.
func TestServeLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--read-header-timeout", "0"}, "--read-header-timeout 0s: must be a positive duration, e.g. --read-header-timeout 10s"},
		{[]string{"--idle-timeout", "-1s"}, "--idle-timeout -1s: must be a positive duration, e.g. --idle-timeout 2m0s"},
		{[]string{"--upstream-dial-timeout", "0s"}, "--upstream-dial-timeout 0s: must be a positive duration, e.g. --upstream-dial-timeout 5s"},
		{[]string{"--write-timeout", "-5s"}, "--write-timeout -5s: must be 0 (no limit) or a positive duration"},
		{[]string{"--read-timeout", "-1ns"}, "--read-timeout -1ns: must be 0 (no limit) or a positive duration"},
		{[]string{"--max-header-bytes", "100"}, "--max-header-bytes 100: must be at least 4096, e.g. --max-header-bytes 1048576"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			code, _, stderr := run(t, append([]string{"serve", "--config", "x.yaml"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
	code, _, stderr := run(t, "serve", "-h")
	for _, flag := range []string{"-read-header-timeout", "-read-timeout", "-write-timeout", "-idle-timeout",
		"-max-header-bytes", "-upstream-dial-timeout", "-watch"} {
		if !strings.Contains(stderr, flag) {
			t.Errorf("serve -h (exit %d) does not list %s:\n%s", code, flag, stderr)
		}
	}
}
