package rewrite_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// FuzzRewrite renders every body signpost writes about a request: checked
// before the upstream (Before), a matched upstream error (SetMatch), or an
// unmatched one (Wrap), in both formats, from fuzzed request values and
// upstream answers on each route of testdata/rules.yaml. Every output must
// be valid UTF-8 JSON with no raw invisible code point or angle bracket,
// and an echoed string must stay within the bound.
func FuzzRewrite(f *testing.F) {
	cfg := loadRules(f)
	for _, s := range []struct {
		route                           uint8
		reqBody, query, header, pathVar string
		status                          int
		contentType, upBody             string
	}{
		{0, `{"status":"OPEN"}`, "", "", "T-1", 400, "application/json", `{"error":"Invalid status"}`},
		{0, `{"status":"a\"b\u2028\u202e<x>"}`, "", "", "T-1", 400, "application/json", `{"error":"Invalid status"}`},
		{0, `{"meta":{"k":["</tool_result>",1]},"labels":[1,2,3]}`, "", "", "T-1", 400, "application/json", `{"error":"Bad meta"}`},
		{0, `{"status":"OPEN","priority":9,"due_at":"soon","note":"` + strings.Repeat("x", 30) + `"}`, "", "", "T-1", 400, "application/json", `{"error":"Invalid status"}`},
		{0, `{}`, "", "", "T-\u202e1", 404, "application/json", `{"error":"No such ticket"}`},
		{0, `{}`, "", "", "T-1", 409, "application/json", `{"error":"Cannot close"}`},
		{0, `{}`, "", "", "T-1", 422, "text/html", `<p>value <b>Op"en\u2028</b> is not allowed</p>`},
		{0, `{}`, "", "", "T-1", 429, "application/json", `{"error":"Slow down"}`},
		{0, `{}`, "", "", "T-1", 403, "text/plain", "Tenant is suspended"},
		{0, `{}`, "", "", "T-1", 403, "application/json", `{"message":"connect to 10.0.0.1 refused"}`},
		{0, `{}`, "", "", "T-1", 503, "application/json", ``},
		{1, ``, "state=OPEN%E2%80%AE", "ACME\x7f", "", 400, "application/json", `{"error":"Invalid state"}`},
		{1, ``, "state=open", "</b>", "", 400, "application/json", `{"error":"Invalid tenant"}`},
		{2, `{"assignee":"\xff\xfe"}`, "", "", "T-1", 400, "application/json", `{"error":"Invalid assignee"}`},
	} {
		f.Add(s.route, []byte(s.reqBody), s.query, s.header, s.pathVar, s.status, s.contentType, []byte(s.upBody))
	}
	f.Fuzz(func(t *testing.T, routeIndex uint8, reqBody []byte, query, header, pathVar string, status int, contentType string, upBody []byte) {
		rt := cfg.Routes[int(routeIndex)%len(cfg.Routes)]
		status = 400 + (status%200+200)%200
		newRequest := func() *rewrite.Request {
			return &rewrite.Request{Vars: map[string]string{"ticket_id": pathVar}, RawQuery: query,
				Header: http.Header{"X-Tenant": {header}}, Body: reqBody}
		}
		if e := rewrite.Before(rt, newRequest(), cfg.Limits); e != nil {
			checkBody(t, "Before", e, cfg.Limits.Received)
		}
		up := &rewrite.Upstream{Status: status, Header: http.Header{"Content-Type": {contentType}}, Body: &rules.Body{Raw: upBody}}
		var e *rewrite.Error
		what := "Wrap"
		if rule := rt.MatchError(status, up.Body); rule != nil {
			e, what = new(rewrite.Error).SetMatch(rt, rule, up, newRequest(), cfg.Limits), "SetMatch "+rule.Code
		} else {
			e = rewrite.Wrap(up, rt, newRequest())
		}
		checkBody(t, what, e, cfg.Limits.Received)
	})
}

// checkBody checks both renderings of e.
func checkBody(t *testing.T, what string, e *rewrite.Error, maxReceived int) {
	t.Helper()
	for _, body := range [][]byte{e.JSON(), e.ProblemJSON()} {
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("%s: not valid UTF-8 JSON: %q", what, body)
		}
		for _, r := range string(body) {
			if r == '<' || r == '>' || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector,
				unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point) {
				t.Fatalf("%s: raw %U in %q", what, r, body)
			}
		}
		var doc struct {
			Error, Code string
			Received    json.RawMessage
			Errors      []struct{ Received json.RawMessage }
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.Error == "" && doc.Code == "" {
			t.Fatalf("%s: no code in %q (%v)", what, body, err)
		}
		received := []json.RawMessage{doc.Received}
		for _, en := range doc.Errors {
			received = append(received, en.Received)
		}
		for _, raw := range received {
			var s string
			if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
				if head, _, _ := strings.Cut(s, "…[+"); utf8.RuneCountInString(head) > maxReceived {
					t.Fatalf("%s: received %q is over %d characters", what, s, maxReceived)
				}
			}
		}
	}
}
