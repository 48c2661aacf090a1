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
		{[]string{"--request-body-timeout", "0s"}, "--request-body-timeout 0s: must be a positive duration, e.g. --request-body-timeout 30s"},
		{[]string{"--max-header-bytes", "100"}, "--max-header-bytes 100: must be at least 4096, e.g. --max-header-bytes 1048576"},
		{[]string{"--buffer-budget", "1KiB"}, "--buffer-budget 1KiB: must be at least 64 KiB, the default limits.error_body, e.g. --buffer-budget 64MiB"},
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
	for _, flag := range []string{"-read-header-timeout", "-read-timeout", "-request-body-timeout", "-write-timeout", "-idle-timeout",
		"-max-header-bytes", "-upstream-dial-timeout", "-watch", "-buffer-budget"} {
		if !strings.Contains(stderr, flag) {
			t.Errorf("serve -h (exit %d) does not list %s:\n%s", code, flag, stderr)
		}
	}
}

// TestByteSize: --buffer-budget reads sizes as a rule file's limits do,
// and names a size as it was given.
func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"67108864", 64 << 20, ""},
		{"64MiB", 64 << 20, ""},
		{" 512 KiB ", 512 << 10, ""},
		{"100MB", 100_000_000, ""},
		{"2GB", 2_000_000_000, ""},
		{"lots", 0, "must be a size in bytes, e.g. 64MiB or 65536, with an optional unit B, KB, MB, GB, KiB, MiB or GiB"},
		{"1.5MiB", 0, "must be a size in bytes"},
		{"9999999999GiB", 0, "is larger than any size signpost counts, e.g. 64MiB"},
	} {
		var b byteSize
		err := b.Set(tc.in)
		switch {
		case tc.err == "" && (err != nil || b.n != tc.want || b.String() != tc.in):
			t.Errorf("Set(%q) = %d (%q), %v; want %d", tc.in, b.n, b.String(), err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Set(%q): %v; want %q", tc.in, err, tc.err)
		}
	}
	if b := (byteSize{n: 64 << 20}); b.String() != "64 MiB" {
		t.Errorf("the default's String() = %q, want 64 MiB", b.String())
	}
}
