package httpwire

import (
	"net/http"
	"slices"
	"testing"
)

// TestTokens: comma-separated lists read as RFC 9110 reads them, and the
// looser reading net/http's server gives Connection.
func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		values []string
		tokens []string
		close  bool // HasToken(values, "close")
	}{
		{nil, nil, false},
		{[]string{"close"}, []string{"close"}, true},
		{[]string{" Keep-Alive , CLOSE "}, []string{"Keep-Alive", "CLOSE"}, true},
		{[]string{"keep-alive close"}, []string{"keep-alive close"}, true},
		{[]string{",,a,, b ,"}, []string{"a", "b"}, false},
		{[]string{"x-a", "close"}, []string{"x-a", "close"}, false},
		{[]string{"closed"}, []string{"closed"}, false},
	} {
		if got := slices.Collect(Tokens(tc.values)); !slices.Equal(got, tc.tokens) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.values, got, tc.tokens)
		}
		if got := Listed(tc.values, "close"); got != slices.ContainsFunc(tc.tokens, func(s string) bool { return s == "close" || s == "CLOSE" }) {
			t.Errorf("Listed(%q, close) = %v", tc.values, got)
		}
		if got := HasToken(tc.values, "close"); got != tc.close {
			t.Errorf("HasToken(%q, close) = %v, want %v", tc.values, got, tc.close)
		}
	}
	h := http.Header{"X-A": {"1"}, "X-B": {"2"}, "Keep": {"3"}}
	RemoveConnectionHeaders(h, []string{"x-a, X-B", ""})
	if len(h) != 1 || h.Get("Keep") != "3" {
		t.Errorf("after RemoveConnectionHeaders: %v, want Keep alone", h)
	}
}
