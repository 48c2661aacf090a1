package rewrite_test

import (
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// TestCommonSlips: the mistakes agents make most with a value's form are
// each told what to change, not only the rule the value seems to meet: a
// number for a field of text, a timestamp's lower-case t or z, a header's
// value sent in the body.
func TestCommonSlips(t *testing.T) {
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const ticket = `"title":"Printer","status":"open","priority":"p1"`
	for _, tc := range []struct {
		name, route, body string
		header            http.Header
		want              string
	}{
		{"a number for a pattern", "create_ticket", `{` + ticket + `,"customer_id":1042}`, nil,
			`{"error":"invalid_customer_id","field":"customer_id","message":"must be a JSON string, not a number; must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query)","received":1042,"next_call":{"call":"search_customers","arguments":{"query":1042}},"retryable":false}`},
		{"a lower-case z", "create_ticket", `{` + ticket + `,"customer_id":"C-1","due_at":"2024-05-01T10:00:00z"}`, nil,
			`{"error":"invalid_due_at","field":"due_at","message":"must be an RFC 3339 timestamp in UTC, with T and Z written in upper case, e.g. 2026-11-30T17:00:00Z","received":"2024-05-01T10:00:00z","retryable":false}`},
		{"a lower-case t", "create_ticket", `{` + ticket + `,"customer_id":"C-1","due_at":"2024-05-01t10:00:00Z"}`, nil,
			`{"error":"invalid_due_at","field":"due_at","message":"must be an RFC 3339 timestamp in UTC, with T and Z written in upper case, e.g. 2026-11-30T17:00:00Z","received":"2024-05-01t10:00:00Z","retryable":false}`},
		{"a header's value in the body", "read_profile", `{"authorization":"Bearer abc"}`, nil,
			`{"error":"invalid_token","field":"token","message":"belongs in the Authorization header, not in the body; must match the pattern ^Bearer [a-z]+$, e.g. Bearer abc","received":"Bearer [masked]","retryable":false}`},
		{"the header sent where it belongs", "read_profile", `{}`, http.Header{"Authorization": {"Bearer abc"}}, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cfg.Route(tc.route)
			req := &rewrite.Request{Method: r.Method, Path: r.Path, Body: []byte(tc.body), Header: tc.header}
			got := ""
			if e := rewrite.Before(r, req, cfg.Limits); e != nil {
				got = string(e.JSON())
			}
			if got != tc.want {
				t.Errorf("\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}
