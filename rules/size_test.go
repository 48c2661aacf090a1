package rules_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestParseSize: one grammar for every size, in rule files and on the
// command line, decimal and binary units alike.
func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  error
	}{
		{"65536", 65536, nil},
		{"0", 0, nil},
		{"64B", 64, nil},
		{"64KiB", 64 << 10, nil},
		{" 512 KiB ", 512 << 10, nil},
		{"1 MiB", 1 << 20, nil},
		{"2GiB", 2 << 30, nil},
		{"64KB", 64_000, nil},
		{"100MB", 100_000_000, nil},
		{"64GB", 64_000_000_000, nil},
		{"", 0, rules.ErrNotSize},
		{"MiB", 0, rules.ErrNotSize},
		{"-1MiB", 0, rules.ErrNotSize},
		{"+1MiB", 0, rules.ErrNotSize},
		{"1.5MiB", 0, rules.ErrNotSize},
		{"1_024", 0, rules.ErrNotSize},
		{"0x10", 0, rules.ErrNotSize},
		{"64mib", 0, rules.ErrNotSize},
		{"64K", 0, rules.ErrNotSize},
		{"64 KiB B", 0, rules.ErrNotSize},
		{"99999999999999999999", 0, rules.ErrSizeRange},
		{"9999999999GiB", 0, rules.ErrSizeRange},
		{"9223372036854775807B", 1<<63 - 1, nil},
	} {
		got, err := rules.ParseSize(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestSizeText: sizes in messages, in the largest binary unit that
// divides them; each but the bytes form reads back as the same size.
func TestSizeText(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0 bytes"},
		{1, "1 byte"},
		{200, "200 bytes"},
		{1000, "1000 bytes"},
		{1 << 10, "1 KiB"},
		{1536, "1536 bytes"},
		{64 << 10, "64 KiB"},
		{1 << 20, "1 MiB"},
		{1536 << 10, "1536 KiB"},
		{64 << 20, "64 MiB"},
		{2 << 30, "2 GiB"},
		{3 << 40, "3072 GiB"},
	} {
		got := rules.SizeText(tc.in)
		if got != tc.want {
			t.Errorf("SizeText(%d) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.HasSuffix(got, "iB") {
			if back, err := rules.ParseSize(got); back != tc.in || err != nil {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", got, back, err, tc.in)
			}
		}
	}
}

// TestLimitSizes: a rule file's limits take every unit ParseSize reads,
// and a size in a unit too large for the limit is out of range, naming
// the bounds.
func TestLimitSizes(t *testing.T) {
	const route = "\nroutes:\n  get_ticket:\n    method: GET\n    path: /tickets/{id}\n"
	for _, tc := range []struct {
		value string
		want  int64
		err   string
	}{
		{"65536", 65536, ""},
		{`"65536"`, 65536, ""},
		{"64KB", 64_000, ""},
		{"1MB", 1_000_000, ""},
		{"1 MiB", 1 << 20, ""},
		{"1GB", 0, "limits.error_body: 1GB is out of range; must be from 1 KiB to 16 MiB, e.g. 64KiB"},
		{"1GiB", 0, "limits.error_body: 1GiB is out of range; must be from 1 KiB to 16 MiB, e.g. 64KiB"},
		{"64 kb", 0, `limits.error_body: must be a size in bytes, e.g. 64KiB or 65536, with an optional unit B, KB, MB, GB, KiB, MiB or GiB; found "64 kb"`},
	} {
		cfg, err := rules.Parse("sizes.yaml", []byte("limits:\n  error_body: "+tc.value+route))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("error_body: %s: %v", tc.value, err)
		case tc.err == "" && cfg.Limits.ErrorBody != tc.want:
			t.Errorf("error_body: %s = %d, want %d", tc.value, cfg.Limits.ErrorBody, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("error_body: %s: %v; want %q", tc.value, err, tc.err)
		}
	}
}
