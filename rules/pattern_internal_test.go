package rules

import (
	"regexp"
	"testing"
)

func TestCompileSimple(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		simple  bool
	}{
		{`^T-[0-9]+$`, true},
		{`^C-[0-9]+$`, true},
		{`^[a-z]{2,3}-[0-9]{4,8}$`, true},
		{`^[A-Z]{3}$`, true},
		{`^a?b$`, true},
		{`^.+$`, true},
		{`^\d+\.\d{2}$`, true},
		{`\A[a-f0-9]{8}\z`, true},
		{`^$`, true},
		{`^żółw-[0-9]+$`, true},
		// Not of the kind: regexp matches them.
		{`^[a-z]+[a-z0-9]$`, false}, // the run could give a rune back
		{`^.*x$`, false},
		{`^[0-9]+?x$`, false}, // non-greedy
		{`^a[0-9]*[0-9]?$`, false},
		{`^(ab|cd)$`, false},
		{`T-[0-9]+`, false}, // unanchored
		{`^T-[0-9]+`, false},
		{`(?i)^abc$`, false},
		{`^(?:[a-z]+)-x$`, true}, // a group that is not a capture is no group
		{`^([a-z]+)$`, false},
		{`^[^\x00-\x{10FFFF}]$`, false}, // matches nothing
	} {
		got := compileSimple(regexp.MustCompile(tc.pattern)) != nil
		if got != tc.simple {
			t.Errorf("compileSimple(%q) simple = %v; want %v", tc.pattern, got, tc.simple)
		}
	}
}

func TestSimplePatternMatchesAsRegexp(t *testing.T) {
	inputs := []string{"", "T-", "T-1", "T-8841", "T-88a", "t-1", "T-1\n", "xT-1", "T--1",
		"ab-1234", "abc-12345678", "abcd-1234", "ab-123", "ab-123456789", "żółw-1", "żółw-", "\xff", "\xff\xff-1",
		"12.50", "1.5", "b", "ab", "aab", "a\nb", "deadbeef", "DEADBEEF"}
	for _, pattern := range []string{`^T-[0-9]+$`, `^[a-z]{2,3}-[0-9]{4,8}$`, `^a?b$`, `^.+$`, `^\d+\.\d{2}$`,
		`\A[a-f0-9]{8}\z`, `^$`, `^żółw-[0-9]+$`, `^[^-]+-[0-9]$`, `^(?s).{2}$`, `^\x{FFFD}+-1$`} {
		re := regexp.MustCompile(pattern)
		p := compileSimple(re)
		if p == nil {
			t.Fatalf("%q: not compiled", pattern)
		}
		for _, in := range inputs {
			if got, want := p.MatchString(in), re.MatchString(in); got != want {
				t.Errorf("%q on %q: %v; regexp says %v", pattern, in, got, want)
			}
		}
	}
}

// FuzzSimplePattern checks the one-pass matcher against regexp on every
// pattern it takes on.
func FuzzSimplePattern(f *testing.F) {
	for _, seed := range [][2]string{
		{`^T-[0-9]+$`, "T-8841"}, {`^[a-z]{2,3}-[0-9]{4,8}$`, "abc-1234"}, {`^a?b$`, "b"},
		{`^.+$`, "x\ny"}, {`^[^-]+-[0-9]{1,3}$`, "żółw-12"}, {`^\x{FFFD}+$`, "\xff\xfe"},
		{`^[0-9]{0,2}x$`, "123x"}, {`^\pL+-\d$`, "Ab-1"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, in string) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Skip()
		}
		p := compileSimple(re)
		if p == nil {
			t.Skip()
		}
		if got, want := p.MatchString(in), re.MatchString(in); got != want {
			t.Errorf("%q on %q: %v; regexp says %v", pattern, in, got, want)
		}
	})
}

// TestCheckFollowsThePattern has Check match by the one-pass form only
// while it was compiled from the field's pattern as it stands.
func TestCheckFollowsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^T-[0-9]+$`)
	f := &Field{Name: "ticket_id", In: InPath, Pattern: re, simple: compileSimple(re)}
	if !f.Check(Text("T-1")) || f.Check(Text("T-x")) {
		t.Fatalf("Check with %s: T-1 must pass, T-x must not", re)
	}
	f.Pattern = regexp.MustCompile(`^T-[a-z]+$`)
	if f.Check(Text("T-1")) || !f.Check(Text("T-x")) {
		t.Errorf("Check after the pattern became %s: T-x must pass, T-1 must not", f.Pattern)
	}
}
