package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/internal/jsontest"
)

// TestToolCallFieldFaults: over MCP as over HTTP, a value of the wrong
// JSON type is told its type, a timestamp's offset is named, and
// arguments that are not one object are named as such, never blamed on
// the fields they hold.
func TestToolCallFieldFaults(t *testing.T) {
	s := serve(t, "../configs/bookings.yaml")
	for _, tc := range []struct{ name, args, body string }{
		{"minutes as a string", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":"30"}`,
			`{"error":"invalid_minutes","field":"minutes","message":"must be a JSON number, not a string; must be an integer from 15 to 240, e.g. 15","received":"30","retryable":false}`},
		{"starts_at with +00:00", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00+00:00","minutes":30}`,
			`{"error":"invalid_starts_at","field":"starts_at","message":"must be an RFC 3339 timestamp in UTC, with the offset written Z, e.g. 2026-11-30T17:00:00Z","received":"2026-03-11T09:00:00+00:00","retryable":false}`},
		{"arguments that are an array", `["R-12",30]`,
			`{"error":"invalid_arguments","message":"the arguments must be one JSON object of named arguments: room_id, starts_at, minutes","received":["R-12",30],"retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.api.n.Load()
			res := s.call(t, "book_slot", tc.args)
			if !res.IsError {
				t.Errorf("isError = false; want true")
			}
			if got := structured(t, res); !jsontest.Same(got, tc.body) {
				t.Errorf("structured content:\n got %s\nwant %s", got, tc.body)
			}
			// The text a model reads carries the same message.
			var body struct{ Message string }
			json.Unmarshal([]byte(tc.body), &body)
			if text := textOf(t, res); !strings.Contains(text, ": "+body.Message+" (you sent ") {
				t.Errorf("the text lacks the message %q:\n%s", body.Message, text)
			}
			if n := s.api.n.Load() - before; n != 0 {
				t.Errorf("the upstream saw %d requests; book_slot validates before", n)
			}
		})
	}
}
