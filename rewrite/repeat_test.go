package rewrite_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// TestStop writes the stop body: the code kept, the count in words and in
// "repeated", what to do instead, never retryable, nothing of the
// upstream's words, in few tokens.
func TestStop(t *testing.T) {
	next := &rewrite.Call{Name: "list_slots", Arguments: []rewrite.Argument{{"room_id", []byte(`"r1"`)}}}
	for _, tc := range []struct {
		name        string
		e           *rewrite.Error
		n           int
		futile      string
		fromAddress bool
		want        string
		tokens      int
	}{
		{"an upstream failure", &rewrite.Error{Status: 500, Code: "upstream_failed", Message: "the upstream is unavailable", UpstreamMessage: "at Export.run(Export.java:41)", Retryable: true, RetryAfter: 1}, 2, "", false,
			`{"error":"upstream_failed","message":"this call failed the same way 2 times in a row; repeating it will not succeed now: stop, and tell the user","repeated":2,"retryable":false}`, 60},
		{"a rule's futile", &rewrite.Error{Status: 409, Code: "slot_taken", Message: "the slot is booked", NextCall: next}, 3, "choose another slot with list_slots(room_id, date)", false,
			`{"error":"slot_taken","message":"this call failed the same way 3 times in a row; repeating it will not succeed now; choose another slot with list_slots(room_id, date)","next_call":{"call":"list_slots","arguments":{"room_id":"r1"}},"repeated":3,"retryable":false}`, 80},
		{"a next call", &rewrite.Error{Status: 409, Code: "ticket_unassigned", Message: "assign it first", NextCall: next}, 2, "", false,
			`{"error":"ticket_unassigned","message":"this call failed the same way 2 times in a row; repeating it will not succeed now; make next_call first","next_call":{"call":"list_slots","arguments":{"room_id":"r1"}},"repeated":2,"retryable":false}`, 80},
		{"a failure that may have taken effect", &rewrite.Error{Status: 504, Code: "upstream_timeout", Message: "the upstream service did not answer in time; the call may or may not have taken effect, check before retrying", Retryable: true, Uncertain: true}, 2, "", false,
			`{"error":"upstream_timeout","message":"this call failed the same way 2 times in a row; repeating it will not succeed now; each call may or may not have taken effect: check that first, then stop, and tell the user","repeated":2,"retryable":false}`, 72},
		{"a rule's futile, and a call that may have taken effect", &rewrite.Error{Status: 503, Code: "notes_busy", Message: "busy", Uncertain: true}, 2, "write to the other region", false,
			`{"error":"notes_busy","message":"this call failed the same way 2 times in a row; repeating it will not succeed now; each call may or may not have taken effect: check that first, then write to the other region","repeated":2,"retryable":false}`, 72},
		{"counted over an address", &rewrite.Error{Status: 500, Code: "upstream_failed", Message: "the upstream is unavailable"}, 2, "", true,
			`{"error":"upstream_failed","message":"this call failed the same way 2 times in a row from this address; repeating it will not succeed now: stop, and tell the user","repeated":2,"retryable":false}`, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rewrite.Stop(tc.e, tc.n, tc.futile, tc.fromAddress)
			if b := string(got.JSON()); b != tc.want {
				t.Errorf("body:\n got %s\nwant %s", b, tc.want)
			}
			if n := rules.Tokens(string(got.JSON())); n >= tc.tokens {
				t.Errorf("%d tokens; want under %d", n, tc.tokens)
			}
			if got.Status != tc.e.Status {
				t.Errorf("status %d, want %d", got.Status, tc.e.Status)
			}
			var p map[string]any
			if err := json.Unmarshal(got.ProblemJSON(), &p); err != nil || p["repeated"] != float64(tc.n) || p["code"] != tc.e.Code {
				t.Errorf("problem+json: %v %v", p, err)
			}
		})
	}
}

func TestAlreadyRejected(t *testing.T) {
	for _, tc := range []struct {
		fromAddress bool
		want        string
	}{
		{false, `{"error":"invalid_status","field":"status","message":"this value was already rejected; send another: status must be one of open, pending, closed","received":"done","did_you_mean":["closed"],"repeated":2,"retryable":false}`},
		{true, `{"error":"invalid_status","field":"status","message":"this value was already rejected from this address; send another: status must be one of open, pending, closed","received":"done","did_you_mean":["closed"],"repeated":2,"retryable":false}`},
	} {
		e := &rewrite.Error{Status: 422, Code: "invalid_status", Field: "status", Message: "status must be one of open, pending, closed",
			Received: []byte(`"done"`), DidYouMean: []string{"closed"}}
		rewrite.AlreadyRejected(e, 2, tc.fromAddress)
		if b := string(e.JSON()); b != tc.want {
			t.Errorf("body:\n got %s\nwant %s", b, tc.want)
		}
		if strings.Contains(e.Message, "will not succeed") {
			t.Error("a field fault got the stop wording")
		}
	}
}
