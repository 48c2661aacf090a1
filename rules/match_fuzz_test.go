package rules_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// fuzzRules has one error rule of every kind of match: status alone, a
// class, json with equals, contains and regex, a raw-body regex, and
// captures of the received value from both.
const fuzzRules = `
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
      - match: {status: [400, 422], json: errors.0.detail, contains: status}
        code: status_detail
        field: status
      - match: {status: 422, json: error, regex: '^value (?P<received>\S+) is not allowed$'}
        code: captured_json
        field: status
      - match: {status: 409, body: 'value <b>(?P<received>[^<]*)</b>'}
        code: captured_body
        field: status
      - match: {status: 404, json: 'error|@reverse', equals: x}
        code: modifier
        message: a gjson modifier in the path
      - match: {status: 4xx, json: message}
        code: any_message
        message: the upstream said something
      - match: {status: [502, 503]}
        code: busy
        message: busy
`

// FuzzMatchError feeds upstream statuses and bodies to the body matcher.
// It must never panic; the rule it picks must be the first one that
// explain (Match.Why) says matches, so that what signpost does and what
// explain says agree; and a captured value must come from the body.
func FuzzMatchError(f *testing.F) {
	cfg, err := rules.Parse("fuzz.yaml", []byte(fuzzRules))
	if err != nil {
		f.Fatal(err)
	}
	route := cfg.Routes[0]
	for _, seed := range []struct {
		status int
		body   string
	}{
		{400, `{"error":"Invalid status"}`},
		{422, `{"errors":[{"detail":"bad status"}]}`},
		{422, `{"error":"value OPEN is not allowed"}`},
		{409, `<p>value <b>Opened</b> is not allowed</p>`},
		{404, `{"error":"x"}`},
		{418, `{"message":"teapot"}`},
		{503, ``},
		{400, `{"error":"Invalid status","error":"Invalid status"}`},
		{400, strings.Repeat("[", 200) + strings.Repeat("]", 200)},
		{400, "{\"error\":\"Invalid status\xff\"}"},
		{700, `{}`},
		{-1, `{}`},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, raw []byte) {
		body := &rules.Body{Raw: raw}
		got := route.MatchError(status, body)
		var want *rules.ErrorRule
		if route.Concerns(status) {
			for _, e := range route.Errors {
				if e.Match.Why(status, &rules.Body{Raw: raw}) == "" {
					want = e
					break
				}
			}
		}
		if got != want {
			t.Fatalf("status %d, body %q: MatchError picked %v, explain says %v", status, raw, code(got), code(want))
		}
		if got == nil {
			return
		}
		if s, ok := got.Captured(body); ok {
			from := raw
			if got.Match.JSON != "" {
				from = []byte(gjson.GetBytes(raw, got.Match.JSON).String())
			}
			if !bytes.Contains(from, []byte(s)) {
				t.Fatalf("rule %s captured %q, which is not in %q", got.Code, s, from)
			}
		}
	})
}

func code(e *rules.ErrorRule) string {
	if e == nil {
		return "none"
	}
	return e.Code
}
