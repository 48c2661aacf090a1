package proxy

import (
	"strings"
	"testing"
)

func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		name, given string
		kept        bool
	}{
		{"a token is kept", "trace-7", true},
		{"the token characters", "a-Z_0.9:/+=", true},
		{"empty", "", false},
		{"a space", "trace 7", false},
		{"a quote", `trace"7`, false},
		{"over 128 bytes", strings.Repeat("a", 129), false},
		{"128 bytes", strings.Repeat("a", 128), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := requestID(tc.given)
			if len(got) != 1 {
				t.Fatalf("requestID(%q) = %q, want one value", tc.given, got)
			}
			if tc.kept {
				if got[0] != tc.given {
					t.Errorf("requestID(%q) = %q, want the caller's id kept", tc.given, got[0])
				}
				return
			}
			if !strings.HasPrefix(got[0], idPrefix+"-") || !validRequestID(got[0]) {
				t.Errorf("requestID(%q) = %q, want a new id %s-<counter>", tc.given, got[0], idPrefix)
			}
		})
	}
}

// New ids differ, and each keeps its bytes once the next is made: the id
// and its header value share one allocation.
func TestNewRequestIDsDiffer(t *testing.T) {
	seen := map[string]bool{}
	var ids [][]string
	for range 1000 {
		v := newRequestID()
		ids = append(ids, v)
		if seen[v[0]] {
			t.Fatalf("id %q made twice", v[0])
		}
		seen[v[0]] = true
	}
	for _, v := range ids {
		if !seen[v[0]] || !validRequestID(v[0]) {
			t.Fatalf("id %q changed after it was made", v[0])
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = newRequestID() }); allocs != 1 {
		t.Errorf("a new id takes %.1f allocations, want 1", allocs)
	}
}
