package mcp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/internal/jsontest"
)

// TestCallsBatchEveryFault: a tool call with many faults names every
// faulty argument in one result and states each rule once; a field no
// upstream rule names is still checked, before the upstream is called.
func TestCallsBatchEveryFault(t *testing.T) {
	s := serve(t, "testdata/batch.yaml")
	const rule = "is required; must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z"
	var entries, lines strings.Builder
	entries.WriteString(`{"field":"e01","code":"invalid_e01","message":"` + rule + `"}`)
	lines.WriteString("\n- e01: " + rule)
	for i := 2; i <= 10; i++ { // limits.errors: ten listed, the rest named
		n := fmt.Sprintf("e%02d", i)
		entries.WriteString(`,{"field":"` + n + `","code":"invalid_` + n + `","same_as":"e01"}`)
		lines.WriteString("\n- " + n + ": same rule as e01")
	}
	for _, tc := range []struct {
		name, tool, args string
		body, text       string
	}{
		{name: "twelve arguments missing, one rule", tool: "plan_event", args: `{}`,
			body: `{"error":"validation_failed","message":"12 fields are invalid, 10 listed here with their rules and 2 more named in unlisted; fix them all, then repeat the call.","errors":[` + entries.String() + `],"unlisted":["e11","e12"],"retryable":false}`,
			text: "Error validation_failed: 12 fields are invalid, 10 listed here with their rules and 2 more named in unlisted; fix them all, then repeat the call." + lines.String() + "\nAlso invalid: e11, e12\nRetryable: no."},
		{name: "a number for a uuid", tool: "create_user", args: `{"user_id":42,"role":"admin"}`,
			body: `{"error":"invalid_user_id","field":"user_id","message":"must be a JSON string, not a number; must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b","received":42,"retryable":false}`,
			text: "Error invalid_user_id in user_id: must be a JSON string, not a number; must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b (you sent 42)\nRetryable: no."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.api.n.Load()
			res := s.call(t, tc.tool, tc.args)
			text := textOf(t, res)
			if !res.IsError {
				t.Errorf("isError = false; text:\n%s", text)
			}
			if got := structured(t, res); !jsontest.Same(got, tc.body) {
				t.Errorf("structured content:\n got %s\nwant %s", got, tc.body)
			}
			if text != tc.text {
				t.Errorf("text:\n%s\nwant:\n%s", text, tc.text)
			}
			if n := s.api.n.Load() - before; n != 0 {
				t.Errorf("the upstream saw %d requests, want none", n)
			}
		})
	}
}
