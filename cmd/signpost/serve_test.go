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
		{[]string{"--buffer-budget", "1KiB"}, "--buffer-budget 1KiB: must be at least 64KiB, the default limits.error_body, e.g. --buffer-budget 64MiB"},
		{[]string{"--buffer-budget", "lots"}, `invalid value "lots" for flag -buffer-budget: must be a size in bytes, e.g. 64MiB`},
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
		"-max-header-bytes", "-upstream-dial-timeout", "-watch", "-buffer-budget"} {
		if !strings.Contains(stderr, flag) {
			t.Errorf("serve -h (exit %d) does not list %s:\n%s", code, flag, stderr)
		}
	}
}

// TestByteSize: --buffer-budget reads sizes as a rule file's limits do.
func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"67108864", 64 << 20, true},
		{"64MiB", 64 << 20, true},
		{" 512 KiB ", 512 << 10, true},
		{"2GiB", 2 << 30, true},
		{"100MB", 100_000_000, true},
		{"64B", 64, true},
		{"", 0, false},
		{"-1MiB", 0, false},
		{"1.5MiB", 0, false},
		{"64mib", 0, false},
		{"9999999999GiB", 0, false},
	} {
		var b byteSize
		err := b.Set(tc.in)
		if (err == nil) != tc.ok || tc.ok && int64(b) != tc.want {
			t.Errorf("Set(%q) = %d, %v; want %d, ok %v", tc.in, int64(b), err, tc.want, tc.ok)
		}
	}
	if b := byteSize(64 << 20); b.String() != "64MiB" {
		t.Errorf("String() = %q, want 64MiB", b.String())
	}
}
