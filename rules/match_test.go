package rules_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

func mustCompile(re string) *regexp.Regexp { return regexp.MustCompile(re) }

const matchRules = `
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    fields:
      status: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
      - match: {status: 400, json: error, contains: status}
        code: status_problem
        message: the status was refused
      - match: {status: [404, 410], json: error.code, regex: '^NOT_?FOUND$'}
        code: unknown_ticket
        message: no ticket has this id
      - match: {status: 422, json: error, regex: '^bad value (?P<received>\S+)'}
        code: bad_value
        message: a value was refused
      - match: {status: 4xx, json: detail}
        code: detailed
        message: the upstream gave details
      - match: {status: 5xx, body: '(?i)<title>\s*maintenance\s*</title>'}
        code: maintenance
        message: the upstream is down for maintenance
      - match: {status: 5xx, body: 'Invalid status(?:: (?P<received>\w+))?'}
        code: invalid_status_text
        field: status
      - match: {status: 503}
        code: unavailable
        message: the upstream is unavailable
      - match: {status: 409, json: error, equals: "409"}
        code: conflict
        message: the ticket changed meanwhile
      - match: {status: 200, json: result, not_equals: success}
        code: carried_result
        message: the upstream refused the call in a success
      - match: {status: 2xx, json: ok, equals: "false"}
        code: carried_ok
        message: the upstream refused the call in a success
      - match: {status: 207, body: '<d:status>HTTP/1.1 409 '}
        code: carried_multistatus
        message: the upstream refused a member of the call
`

func TestMatchError(t *testing.T) {
	route := mustParse(t, matchRules).Routes[0]
	tests := []struct {
		name   string
		status int
		body   string
		want   string // the code of the rule that matches, or ""
	}{
		{"equals", 400, `{"error":"Invalid status"}`, "invalid_status"},
		{"first match wins", 400, `{"error":"Invalid status","detail":"x"}`, "invalid_status"},
		{"contains", 400, `{"error":"Unknown status value"}`, "status_problem"},
		{"contains is case-sensitive", 400, `{"error":"STATUS"}`, ""},
		{"equals is exact", 400, `{"error":"Invalid status."}`, "status_problem"},
		{"regex on a nested path", 404, `{"error":{"code":"NOT_FOUND"}}`, "unknown_ticket"},
		{"status list", 410, `{"error":{"code":"NOTFOUND"}}`, "unknown_ticket"},
		{"regex must match", 404, `{"error":{"code":"GONE"}}`, ""},
		{"status outside the list", 400, `{"error":{"code":"NOT_FOUND"}}`, ""},
		{"path must exist", 422, `{"message":"bad value 7"}`, ""},
		{"json path exists", 401, `{"detail":null}`, "detailed"},
		{"status class", 499, `{"detail":"x"}`, "detailed"},
		{"equals a number as text", 409, `{"error":409}`, "conflict"},
		{"raw body on HTML", 502, `<html><title> Maintenance </title></html>`, "maintenance"},
		{"raw body on text", 500, `Invalid status: Opened`, "invalid_status_text"},
		{"status alone", 503, `<html>busy</html>`, "unavailable"},
		{"no rule for the status", 504, `gateway timeout`, ""},

		// JSON conditions never match a body that is not JSON, even where
		// gjson could dig a value out of it.
		{"html is not json", 400, `<p>{"error":"Invalid status"}</p>`, ""},
		{"truncated json", 400, `{"error":"Invalid status"`, ""},
		{"text is not json", 400, `error: Invalid status`, ""},
		{"empty body", 400, ``, ""},

		// A success is matched only by a rule for its status, and only by
		// what its body says.
		{"success with an error member", 200, `{"error":"Invalid status"}`, ""},
		{"success word", 200, `{"result":"success","arguments":{}}`, ""},
		{"not the success word", 200, `{"result":"method name not recognized"}`, "carried_result"},
		{"not_equals needs the member", 200, `{"arguments":{}}`, ""},
		{"not_equals on a success that is not json", 200, `result: failed`, ""},
		{"not_equals on another success status", 201, `{"result":"failed"}`, ""},
		{"ok false", 201, `{"ok":false,"error":"channel_not_found"}`, "carried_ok"},
		{"ok true", 200, `{"ok":true}`, ""},
		{"multistatus body", 207, `<d:response><d:status>HTTP/1.1 409 Conflict</d:status></d:response>`, "carried_multistatus"},
		{"multistatus body all well", 207, `<d:response><d:status>HTTP/1.1 200 OK</d:status></d:response>`, ""},

		// Redirects and statuses outside 200 to 599 are never matched.
		{"redirect", 302, ``, ""},
		{"below range", 399, `{"detail":"x"}`, ""},
		{"above range", 600, `Invalid status`, ""},
		{"negative", -1, ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := route.MatchError(tt.status, &rules.Body{Raw: []byte(tt.body)})
			var code string
			if got != nil {
				code = got.Code
			}
			if code != tt.want {
				t.Errorf("MatchError(%d, %s) = %q, want %q", tt.status, tt.body, code, tt.want)
			}
			if got != nil && route.Errors[got.Index] != got {
				t.Errorf("rule %q has Index %d, but the route holds another there", got.Code, got.Index)
			}
		})
	}
}

func TestConcerns(t *testing.T) {
	route := mustParse(t, matchRules).Routes[0]
	for status, want := range map[int]bool{
		200: true, 201: true, 204: true, 207: true, 299: true, 199: false, 300: false, 302: false, 399: false,
		400: true, 404: true, 409: true, 410: true, 422: true, 499: true,
		500: true, 503: true, 599: true, 600: false,
	} {
		if got := route.Concerns(status); got != want {
			t.Errorf("Concerns(%d) = %t, want %t", status, got, want)
		}
	}

	tickets := mustLoad(t, "../configs/tickets.yaml")
	get := tickets.Routes[0]
	for status, want := range map[int]bool{400: false, 404: true, 500: false} {
		if got := get.Concerns(status); got != want {
			t.Errorf("get_ticket: Concerns(%d) = %t, want %t", status, got, want)
		}
	}
	for status, want := range map[int]bool{200: false, 201: false, 204: false} {
		if got := get.Concerns(status); got != want {
			t.Errorf("get_ticket: Concerns(%d) = %t, want %t: no rule reads its successes", status, got, want)
		}
	}
	none := mustParse(t, "routes:\n  ping: {method: GET, path: /ping}\n").Routes[0]
	if none.Concerns(500) || none.MatchError(500, &rules.Body{}) != nil {
		t.Error("a route without error rules concerns status 500")
	}
}

func TestCaptured(t *testing.T) {
	route := mustParse(t, matchRules).Routes[0]
	rule := func(code string) *rules.ErrorRule {
		t.Helper()
		for _, e := range route.Errors {
			if e.Code == code {
				return e
			}
		}
		t.Fatalf("no rule %q", code)
		return nil
	}
	tests := []struct {
		name   string
		rule   string
		body   string
		want   string
		wantOK bool
	}{
		{"raw body group", "invalid_status_text", `Invalid status: Opened`, "Opened", true},
		{"raw body group in HTML", "invalid_status_text", `<p>Invalid status: closd</p>`, "closd", true},
		{"group did not take part", "invalid_status_text", `Invalid status`, "", false},
		{"body does not match", "invalid_status_text", `all fine`, "", false},
		{"json value group", "bad_value", `{"error":"bad value 42x"}`, "42x", true},
		{"json value does not match", "bad_value", `{"error":"fine"}`, "", false},
		{"json group on a body that is not json", "bad_value", `bad value 42x`, "", false},
		{"no group", "unknown_ticket", `{"error":{"code":"NOT_FOUND"}}`, "", false},
		{"no regex", "invalid_status", `{"error":"Invalid status"}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rule(tt.rule).Captured(&rules.Body{Raw: []byte(tt.body)})
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Captured(%s) = %q, %t; want %q, %t", tt.body, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	cfg := mustParse(t, `
routes:
  r:
    method: GET
    path: /r
    errors:
      - {match: {status: 503}, code: busy, message: try later}
      - {match: {status: 409}, code: conflict, message: refetch first, retryable: true}
      - {match: {status: 429}, code: quota, message: quota spent for today, retryable: false}
`)
	busy, conflict, quota := cfg.Routes[0].Errors[0], cfg.Routes[0].Errors[1], cfg.Routes[0].Errors[2]
	tests := []struct {
		rule       *rules.ErrorRule
		status     int
		idempotent bool
		want       bool
	}{
		{busy, 503, true, true}, {busy, 502, true, true}, {busy, 504, true, true}, {busy, 429, true, true},
		{busy, 500, true, false}, {busy, 400, true, false},
		// A 5xx on a call that is not idempotent may have taken effect.
		{busy, 503, false, false}, {busy, 502, false, false}, {busy, 504, false, false}, {busy, 429, false, true},
		{conflict, 409, false, true},
		{quota, 429, true, false},
	}
	for _, tt := range tests {
		if got := tt.rule.IsRetryable(tt.status, tt.idempotent); got != tt.want {
			t.Errorf("%s.IsRetryable(%d, %t) = %t, want %t", tt.rule.Code, tt.status, tt.idempotent, got, tt.want)
		}
	}
}

func TestIsJSONBoundsNesting(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"object", `{"a":[1,{"b":"]]]]"}]}`, true},
		{"brackets in strings", `"` + strings.Repeat("[", 1000) + `"`, true},
		{"escaped quote", `{"a":"\"[[["}`, true},
		{"at the bound", strings.Repeat("[", rules.MaxJSONDepth) + strings.Repeat("]", rules.MaxJSONDepth), true},
		{"past the bound", strings.Repeat("[", rules.MaxJSONDepth+1) + strings.Repeat("]", rules.MaxJSONDepth+1), false},
		{"unclosed flood", strings.Repeat("[", 1<<20), false},
		{"invalid", `{"a":}`, false},
	} {
		if got := rules.IsJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: IsJSON = %v; want %v", tc.name, got, tc.want)
		}
	}
}

func TestWhy(t *testing.T) {
	cfg, err := rules.Parse("why.yaml", []byte(`
routes:
  r:
    method: POST
    path: /r
    errors:
      - {match: {status: 409}, code: a, message: a}
      - {match: {status: 400, json: error, equals: Invalid status}, code: b, message: b}
      - {match: {status: 400, json: error, contains: prio}, code: c, message: c}
      - {match: {status: 400, json: error, regex: '^Bad'}, code: d, message: d}
      - {match: {status: 400, json: detail}, code: e, message: e}
      - {match: {status: 4xx, body: 'Oops'}, code: f, message: f}
`))
	if err != nil {
		t.Fatal(err)
	}
	errs := cfg.Routes[0].Errors
	body := &rules.Body{Raw: []byte(`{"error":"Invalid state"}`)}
	want := []string{
		`status 400 is not 409`,
		`the value at "error" is "Invalid state", not equal to "Invalid status"`,
		`the value at "error" is "Invalid state", which does not contain "prio"`,
		`the value at "error" is "Invalid state", which does not match regex "^Bad"`,
		`the body has no value at json "detail"`,
		`the body does not match body "Oops"`,
	}
	for i, e := range errs {
		if got := e.Match.Why(400, body); got != want[i] {
			t.Errorf("errors[%d]: Why = %q; want %q", i, got, want[i])
		}
	}
	if got := errs[1].Match.Why(400, &rules.Body{Raw: []byte(`<html>`)}); got != `the body is not JSON, and the rule reads json "error"` {
		t.Errorf("non-JSON body: %q", got)
	}
	if got := errs[1].Match.Why(400, &rules.Body{Raw: []byte(`{"error":"Invalid status"}`)}); got != "" {
		t.Errorf("a match explains itself as %q; want empty", got)
	}
}

// TestBodyValuesOutliveItsBytes: a body is read in place, and its bytes
// may be given back and written over once its error is answered; what was
// found in it must not change with them.
func TestBodyValuesOutliveItsBytes(t *testing.T) {
	route := mustParse(t, matchRules).Routes[0]
	raw := []byte(`{"error":"bad value 42x"}`)
	body := &rules.Body{Raw: raw}
	rule := route.MatchError(422, body)
	if rule == nil || rule.Code != "bad_value" {
		t.Fatalf("matched %v; want bad_value", rule)
	}
	for i := range raw {
		raw[i] = 'z'
	}
	if got, ok := rule.Captured(body); got != "42x" || !ok {
		t.Errorf("captured %q, %t once the body's bytes were written over; want \"42x\", true", got, ok)
	}
}

func TestAnswerStatus(t *testing.T) {
	route := mustParse(t, `
routes:
  rpc:
    method: POST
    path: /rpc
    errors:
      - match: {status: 200, json: result, equals: no such method}
        code: unknown_method
        message: the method is not one the API has
      - match: {status: 200, json: result, equals: no such torrent}
        code: unknown_torrent
        message: no torrent has this id
        status: 404
      - match: {status: 500, json: error, equals: bad id}
        code: bad_id
        message: the id is malformed
        status: 400
      - match: {status: 4xx}
        code: refused
        message: the call was refused
`).Routes[0]
	tests := []struct {
		rule, upstream, want int
	}{
		{0, 200, 400}, // carried in a success: an error status of its own
		{1, 200, 404}, // the rule's
		{2, 500, 400}, // the rule's over the upstream's
		{3, 409, 409}, // the upstream's
	}
	for _, tt := range tests {
		e := route.Errors[tt.rule]
		if got := e.AnswerStatus(tt.upstream); got != tt.want {
			t.Errorf("%s.AnswerStatus(%d) = %d, want %d", e.Code, tt.upstream, got, tt.want)
		}
	}
}
