package mcp_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/internal/jsontest"
)

// TestToolCallSafety: a tool call goes through the same pipeline as an
// HTTP call, so its result never tells the model to repeat a call that
// may have taken effect, nor shows it a credential it sent.
func TestToolCallSafety(t *testing.T) {
	s := serveWith(t, "../proxy/testdata/safety.yaml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/notes":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"error":"bad gateway"}`)
		case "/before/notes":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"unauthorized"}`)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	for _, tc := range []struct{ name, tool, args, body string }{
		{"502 on a POST may have taken effect", "create_note", `{"title":"Groceries","kind":"plain","token":"Bearer abc"}`,
			`{"error":"upstream_failed","message":"the upstream failed (502 Bad Gateway); the call may or may not have taken effect, so check before repeating it","retryable":false}`},
		{"502 on a GET is repeated", "get_note", `{"note_id":"N-1"}`,
			`{"error":"upstream_failed","message":"the upstream is unavailable for now (502 Bad Gateway); repeat the call shortly","retryable":true}`},
		{"a malformed token is masked", "create_note_before", `{"title":"Groceries","token":"Bearer sk_live_51HxQkLm0123456789abcdef"}`,
			`{"type":"about:blank","title":"Bad Request","status":400,"code":"bad_token","field":"token","detail":"must match the pattern ^Bearer [a-z]+$, e.g. Bearer abc","received":"Bearer [masked]","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.call(t, tc.tool, tc.args)
			if !res.IsError {
				t.Errorf("isError = false; text:\n%s", textOf(t, res))
			}
			if got := structured(t, res); !jsontest.Same(got, tc.body) {
				t.Errorf("structured content:\n got %s\nwant %s", got, tc.body)
			}
		})
	}
}
