package rewrite_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// answer is what the proxy answers for req on rt: the before check, then
// the upstream's error up, matched by a rule, else explained by the
// declared checks, else wrapped.
func answer(rt *rules.Route, req *rewrite.Request, up *rewrite.Upstream, lim rules.Limits) *rewrite.Error {
	if rt.Validate == rules.ValidateBefore {
		if e := rewrite.Before(rt, req, lim); e != nil {
			return e
		}
	}
	if rule := rt.MatchError(up.Status, up.Body); rule != nil {
		return new(rewrite.Error).SetMatch(rt, rule, up, req, lim)
	}
	if e := rewrite.Unexplained(rt, up, req, lim); e != nil {
		return e
	}
	return rewrite.Wrap(up, rt, req)
}

const (
	eventRule = `is required; must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z`
	uuidRule  = `must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b`
)

// TestBatch answers the mistakes of several fields at once in both modes:
// a value that breaks its declared constraint gets the constraint fault
// whatever rule matched; an error no rule explains gets the declared
// fields' faults; a rule's own message is batched with the other faults;
// a batch names every faulty field and states each rule once.
func TestBatch(t *testing.T) {
	cfg, err := rules.Load("testdata/batch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// events lists the entries of e<first> to e<last> left out: the first
	// states the rule, the others refer to it.
	events := func(first, last int) string {
		var b strings.Builder
		for i := first; i <= last; i++ {
			n := fmt.Sprintf("e%02d", i)
			if i == first {
				b.WriteString(`{"field":"` + n + `","code":"invalid_` + n + `","message":"` + eventRule + `"}`)
				continue
			}
			b.WriteString(`,{"field":"` + n + `","code":"invalid_` + n + `","same_as":"` + fmt.Sprintf("e%02d", first) + `"}`)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name           string
		modes          []rules.Mode // after when empty
		errors         int          // limits.errors; zero for the default
		method, target string
		body           string
		status         int
		upstream       string
		wantStatus     int
		want           string
		// said is what the upstream said, kept beside the declared
		// fields' faults when they answer an error no rule explains
		// after the upstream: members written after message.
		said string
	}{
		// A declared constraint broken, whatever rule matched.
		{name: "malformed id against an existence rule", modes: []rules.Mode{rules.ValidateAfter},
			method: "PATCH", target: "/tickets/t-8841", body: `{"status":"open"}`, status: 404, upstream: `{"error":"No such ticket"}`, wantStatus: 404,
			want: `{"error":"invalid_ticket_id","field":"ticket_id","message":"must match the pattern ^T-[0-9]+$, e.g. T-8841","received":"t-8841","retryable":false}`},
		{name: "malformed id before the upstream", modes: []rules.Mode{rules.ValidateBefore},
			method: "PATCH", target: "/tickets/t-8841", body: `{"status":"open"}`, status: 404, upstream: `{"error":"No such ticket"}`, wantStatus: 400,
			want: `{"error":"invalid_ticket_id","field":"ticket_id","message":"must match the pattern ^T-[0-9]+$, e.g. T-8841","received":"t-8841","retryable":false}`},
		{name: "malformed lookup field keeps the lookup's call", modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/tickets", body: `{"title":"Export fails","status":"open","customer_id":"acme-corp"}`, status: 404, upstream: `{"error":"No such customer"}`, wantStatus: 404,
			want: `{"error":"invalid_customer_id","field":"customer_id","message":"must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query)","received":"acme-corp","next_call":{"call":"search_customers","arguments":{"query":"acme-corp"}},"retryable":false}`},
		{name: "malformed lookup field before the upstream", modes: []rules.Mode{rules.ValidateBefore},
			method: "POST", target: "/tickets", body: `{"title":"Export fails","status":"open","customer_id":"acme-corp"}`, status: 404, upstream: `{"error":"No such customer"}`, wantStatus: 400,
			want: `{"error":"invalid_customer_id","field":"customer_id","message":"must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query)","received":"acme-corp","next_call":{"call":"search_customers","arguments":{"query":"acme-corp"}},"retryable":false}`},
		{name: "a well-formed unknown id stays the rule's", method: "PATCH", target: "/tickets/T-9999", body: `{"status":"open"}`, status: 404, upstream: `{"error":"No such ticket"}`, wantStatus: 404,
			want: `{"error":"unknown_ticket","field":"ticket_id","message":"no ticket has this id","received":"T-9999","retryable":false}`},

		// A rule's own message, batched with the other faults.
		{name: "unknown id batched with the malformed fields", modes: []rules.Mode{rules.ValidateAfter},
			method: "PATCH", target: "/tickets/T-9999", body: `{"status":"ACTIVE","priority":7}`, status: 404, upstream: `{"error":"No such ticket"}`, wantStatus: 404,
			want: `{"error":"validation_failed","message":"3 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"ticket_id","code":"unknown_ticket","message":"no ticket has this id","received":"T-9999"},` +
				`{"field":"status","code":"invalid_status","message":"` + statusRule + `","received":"ACTIVE"},` +
				`{"field":"priority","code":"invalid_priority","message":"must be an integer from 1 to 3, e.g. 1","received":7}],"retryable":false}`},
		{name: "unknown customer batched, with the lookup's call", modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/tickets", body: `{"title":"Export fails on every large report","status":"open","customer_id":"C-9999"}`, status: 404, upstream: `{"error":"No such customer"}`, wantStatus: 404,
			want: `{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"title","code":"invalid_title","message":"must be a string of at most 20 characters","received":"Export fails on every large report"},` +
				`{"field":"customer_id","code":"unknown_customer","message":"no customer matches \"C-9999\"; resolve an id with search_customers(query)","received":"C-9999"}],` +
				`"next_call":{"call":"search_customers","arguments":{"query":"C-9999"}},"retryable":false}`},
		{name: "malformed fields never reach the upstream before", modes: []rules.Mode{rules.ValidateBefore},
			method: "PATCH", target: "/tickets/T-9999", body: `{"status":"ACTIVE","priority":7}`, status: 404, upstream: `{"error":"No such ticket"}`, wantStatus: 400,
			want: `{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"status","code":"invalid_status","message":"` + statusRule + `","received":"ACTIVE"},` +
				`{"field":"priority","code":"invalid_priority","message":"must be an integer from 1 to 3, e.g. 1","received":7}],"retryable":false}`},

		// An error no rule explains, on a route with declared fields.
		{name: "unexplained 400 with a field at fault", said: `"upstream_message":"bad request",`, method: "POST", target: "/users", body: `{"user_id":42,"role":"admin"}`, status: 400, upstream: `{"error":"bad request"}`, wantStatus: 400,
			want: `{"error":"invalid_user_id","field":"user_id","message":"must be a JSON string, not a number; ` + uuidRule + `","received":42,"retryable":false}`},
		{name: "unexplained 422 with two fields at fault", said: `"upstream_message":"bad request",`, modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/users", body: `{"user_id":42,"role":"owner"}`, status: 422, upstream: `{"error":"bad request"}`, wantStatus: 422,
			want: `{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"user_id","code":"invalid_user_id","message":"must be a JSON string, not a number; ` + uuidRule + `","received":42},` +
				`{"field":"role","code":"invalid_role","message":"allowed values: admin, member","received":"owner"}],"retryable":false}`},
		{name: "unexplained 400 with every field well formed", method: "POST", target: "/users", body: `{"user_id":"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b","role":"admin"}`, status: 400, upstream: `{"error":"bad request"}`, wantStatus: 400,
			want: `{"error":"upstream_rejected","message":"the upstream rejected the call (400 Bad Request) for a reason signpost has no rule for","upstream_message":"bad request","retryable":false}`},
		{name: "unexplained 500 stays wrapped", modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/users", body: `{"user_id":42}`, status: 500, upstream: `oops`, wantStatus: 500,
			want: `{"error":"upstream_failed","message":"the upstream failed (500 Internal Server Error); the call may or may not have taken effect, so check before repeating it","retryable":false}`},
		{name: "unexplained 429 stays wrapped", modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/users", body: `{"user_id":42}`, status: 429, upstream: `slow down`, wantStatus: 429,
			want: `{"error":"rate_limited","message":"the upstream is limiting the rate of calls (429 Too Many Requests); wait, then repeat the call","retryable":true}`},
		{name: "unexplained 401 stays wrapped", modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/users", body: `{"user_id":42}`, status: 401, upstream: `{}`, wantStatus: 401,
			want: `{"error":"upstream_rejected","message":"the upstream rejected the call (401 Unauthorized) for a reason signpost has no rule for","retryable":false}`},
		{name: "unexplained 400 on a body that is no object names it", modes: []rules.Mode{rules.ValidateAfter},
			method: "POST", target: "/users", body: `[42]`, status: 400, upstream: `{}`, wantStatus: 400,
			want: `{"error":"invalid_json_body","message":"the request body is a JSON array; send one JSON object with the fields user_id, role","retryable":false}`},

		// Every faulty field named, each rule stated once, at most
		// limits.errors entries listed (10 by default), the rest named.
		{name: "ten fields, one rule", said: `"upstream_message":"bad",`, method: "POST", target: "/events", body: `{"room":"R-1","e11":"2026-11-30T17:00:00Z","e12":"2026-11-30T17:00:00Z"}`, status: 400, upstream: `{"error":"bad"}`, wantStatus: 400,
			want: `{"error":"validation_failed","message":"10 fields are invalid; fix each one listed, then repeat the call.","errors":[` + events(1, 10) + `],"retryable":false}`},
		{name: "twelve fields, one rule, past the cap", said: `"upstream_message":"bad",`, method: "POST", target: "/events", body: `{"room":"R-1"}`, status: 400, upstream: `{"error":"bad"}`, wantStatus: 400,
			want: `{"error":"validation_failed","message":"12 fields are invalid, 10 listed here with their rules and 2 more named in unlisted; fix them all, then repeat the call.","errors":[` +
				events(1, 10) + `],"unlisted":["e11","e12"],"retryable":false}`},
		{name: "past a cap of 2, the rest named", said: `"upstream_message":"bad",`, errors: 2, method: "POST", target: "/events", body: `{"e01":"soon","room":"r12"}`, status: 400, upstream: `{"error":"bad"}`, wantStatus: 400,
			want: `{"error":"validation_failed","message":"13 fields are invalid, 2 listed here with their rules and 11 more named in unlisted; fix them all, then repeat the call.","errors":[` +
				`{"field":"e01","code":"invalid_e01","message":"must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z","received":"soon"},` +
				events(2, 2) +
				`],"unlisted":["e03","e04","e05","e06","e07","e08","e09","e10","e11","e12","room"],"retryable":false}`},
	} {
		modes := tc.modes
		if len(modes) == 0 {
			modes = []rules.Mode{rules.ValidateAfter, rules.ValidateBefore}
		}
		for _, mode := range modes {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				rt, req := route(t, cfg, tc.method, tc.target)
				saved := rt.Validate
				defer func() { rt.Validate = saved }()
				rt.Validate = mode
				req.Body = []byte(tc.body)
				lim := cfg.Limits
				lim.Errors = tc.errors
				up := &rewrite.Upstream{Status: tc.status, Header: http.Header{}, Body: &rules.Body{Raw: []byte(tc.upstream)}}
				want := tc.want
				if tc.said != "" && mode == rules.ValidateAfter {
					// After the upstream, its words are kept: they told
					// the caller something the bare API would have.
					at := strings.Index(want, `"message":"`) + len(`"message":"`)
					at += strings.Index(want[at:], `",`) + 2
					want = want[:at] + tc.said + want[at:]
				}
				e := answer(rt, req, up, lim)
				if e.Status != tc.wantStatus {
					t.Errorf("status %d; want %d", e.Status, tc.wantStatus)
				}
				if got := string(e.JSON()); got != want {
					t.Errorf("body\n got: %s\nwant: %s", got, want)
				}
				// Problem Details carries the same members after its own.
				head := `{"type":"about:blank","title":"` + http.StatusText(tc.wantStatus) + `","status":` + strconv.Itoa(tc.wantStatus) + `,"code":`
				wantProblem := head + strings.Replace(strings.TrimPrefix(want, `{"error":`), `,"message":`, `,"detail":`, 1)
				if got := string(e.ProblemJSON()); got != wantProblem {
					t.Errorf("problem+json\n got: %s\nwant: %s", got, wantProblem)
				}
			})
		}
	}
}
