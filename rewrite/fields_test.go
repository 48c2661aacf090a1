package rewrite_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// fieldCase is a request whose fields are at fault in a way the bare rule
// does not say, the upstream's answer (status 0: validated before any call),
// and the body signpost must write.
type fieldCase struct {
	name, target, body string
	status             int
	upstream, want     string
	// before is the body in before mode when it differs from want:
	// "valid" when the declared rule accepts what the upstream refused.
	before string
}

const ticketFields = "title, status, minutes, amount, urgent, due_at, note"

// fieldCases are run against /tickets (validated after the upstream) and,
// with status 0, against /checked/tickets (validated before it).
var fieldCases = []fieldCase{
	// A body that is not one JSON object is named as such, never blamed on the fields.
	{"form encoded", "/tickets", "title=Export&status=open", 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is form-encoded, not JSON; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"unquoted value", "/tickets", `{"title":"Export","status": open}`, 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is not JSON: text at byte 29 is not in double quotes; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"byte order mark", "/tickets", "\ufeff{\"title\":\"Export\",\"status\":\"open\"}", 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body starts with a byte order mark; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"single quotes", "/tickets", `{'title':'Export'}`, 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is not JSON: a string at byte 2 is in single quotes, where JSON takes double quotes; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"trailing comma", "/tickets", `{"title":"Export",}`, 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is not JSON: an unexpected character at byte 19; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"binary", "/tickets", "\x00\xff{}", 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is not JSON: it is not UTF-8 text; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"cut short", "/tickets", `{"title":"Exp`, 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is not JSON: it ends before the JSON value does; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"trailing text", "/tickets", `{"title":"Export","status":"open"} and more`, 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body has text after the JSON object; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"array", "/tickets", `[{"title":"Export","status":"open"}]`, 422, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is a JSON array; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"null", "/tickets", `null`, 400, `{"error":"status is required"}`,
		`{"error":"invalid_json_body","message":"the request body is JSON null; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},
	{"bare string", "/tickets", `"open"`, 400, `{"error":"Invalid status"}`,
		`{"error":"invalid_json_body","message":"the request body is a JSON string; send one JSON object with the fields ` + ticketFields + `","retryable":false}`, ""},

	// An empty or blank string is reported as such, with a rule it breaks.
	{"empty title", "/tickets", `{"title":"","status":"open","note":"n"}`, 400, `{"error":"Invalid title"}`,
		`{"error":"invalid_title","field":"title","message":"is empty; must be a non-empty string of at most 200 characters","received":"","retryable":false}`, "valid"},
	{"blank title", "/tickets", `{"title":"   ","status":"open","note":"n"}`, 400, `{"error":"Invalid title"}`,
		`{"error":"invalid_title","field":"title","message":"is blank; must be a non-blank string of at most 200 characters","received":"   ","retryable":false}`, "valid"},
	{"empty note", "/tickets", `{"title":"t","status":"open","note":""}`, 400, `{"error":"Invalid note"}`,
		`{"error":"invalid_note","field":"note","message":"is empty; must be a non-empty string of at most 20 characters","received":"","retryable":false}`, ""},

	// A value of the wrong JSON type is told its type.
	{"integer as string", "/tickets", `{"title":"t","status":"open","note":"n","minutes":"30"}`, 400, `{"error":"Invalid minutes"}`,
		`{"error":"invalid_minutes","field":"minutes","message":"must be a JSON number, not a string; must be an integer from 1 to 120, e.g. 1","received":"30","retryable":false}`, ""},
	{"number as string", "/tickets", `{"title":"t","status":"open","note":"n","amount":"12.50"}`, 400, `{"error":"Invalid amount"}`,
		`{"error":"invalid_amount","field":"amount","message":"must be a JSON number, not a string; must be a number of at least 0, e.g. 0","received":"12.50","retryable":false}`, ""},
	{"boolean as string", "/tickets", `{"title":"t","status":"open","note":"n","urgent":"true"}`, 400, `{"error":"Invalid urgent"}`,
		`{"error":"invalid_urgent","field":"urgent","message":"must be a JSON boolean, not a string; must be true or false","received":"true","retryable":false}`, ""},
	{"enum as number, which the enum says", "/tickets", `{"title":"t","status":1,"note":"n"}`, 400, `{"error":"Invalid status"}`,
		`{"error":"invalid_status","field":"status","message":"` + statusRule + `","received":1,"retryable":false}`, ""},

	// An offset other than Z is named.
	{"offset +00:00", "/tickets", `{"title":"t","status":"open","note":"n","due_at":"2026-03-11T09:14:02+00:00"}`, 400, `{"error":"Invalid due date"}`,
		`{"error":"invalid_due_at","field":"due_at","message":"must be an RFC 3339 timestamp in UTC, with the offset written Z, e.g. 2026-11-30T17:00:00Z","received":"2026-03-11T09:14:02+00:00","retryable":false}`, ""},
	{"offset +01:00", "/tickets", `{"title":"t","status":"open","note":"n","due_at":"2026-03-11T10:14:02+01:00"}`, 400, `{"error":"Invalid due date"}`,
		`{"error":"invalid_due_at","field":"due_at","message":"must be an RFC 3339 timestamp in UTC: convert the time to UTC and write the offset Z, e.g. 2026-11-30T17:00:00Z","received":"2026-03-11T10:14:02+01:00","retryable":false}`, ""},

	// A nested key says where the value lives.
	{"nested missing", "/events", `{"name":"launch"}`, 400, `{"error":"Invalid date"}`,
		`{"error":"invalid_date","field":"date","message":"is required at event.when.date; must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11","retryable":false}`, ""},
	{"nested sent flat", "/events", `{"name":"launch","date":"2026-03-11"}`, 400, `{"error":"Invalid date"}`,
		`{"error":"invalid_date","field":"date","message":"belongs at event.when.date, not at the top level; must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11","received":"2026-03-11","retryable":false}`, ""},
}

// afterOnly are cases only the upstream can produce: a value the declared
// rule accepts, refused, or a value captured from the upstream's text.
var afterOnly = []fieldCase{
	{"integer written 30.0", "/tickets", `{"title":"t","status":"open","note":"n","minutes":30.0}`, 400, `{"error":"Invalid minutes"}`,
		`{"error":"invalid_minutes","field":"minutes","message":"must be written without a fraction or exponent; must be an integer from 1 to 120, e.g. 1","received":30.0,"retryable":false}`, ""},
	{"captured number as sent", "/tickets", `{"title":"t","status":"open","note":"n","minutes":300}`, 422, `{"error":"minutes 300 is out of range"}`,
		`{"error":"invalid_minutes","field":"minutes","message":"must be an integer from 1 to 120, e.g. 1","received":300,"retryable":false}`, ""},
	{"captured string as sent", "/tickets", `{"title":"t","status":"open","note":"n","minutes":"300"}`, 422, `{"error":"minutes 300 is out of range"}`,
		`{"error":"invalid_minutes","field":"minutes","message":"must be a JSON number, not a string; must be an integer from 1 to 120, e.g. 1","received":"300","retryable":false}`, ""},
	{"captured number not sent", "/tickets", `{"title":"t","status":"open","note":"n"}`, 422, `{"error":"minutes 44 is out of range"}`,
		`{"error":"invalid_minutes","field":"minutes","message":"must be an integer from 1 to 120, e.g. 1","received":44,"retryable":false}`, ""},
	{"captured text stays text", "/tickets", `{"title":"t","status":"OPEN","note":"n"}`, 422, `{"error":"status OPEN is unknown"}`,
		`{"error":"invalid_status","field":"status","message":"` + statusRule + `","received":"OPEN","retryable":false}`, ""},
}

// beforeOnly are cases signpost answers itself without calling the upstream.
var beforeOnly = []fieldCase{
	{"integer written 30.0 is an integer", "/checked/tickets", `{"title":"t","status":"open","note":"n","minutes":30.0}`, 0, ``, `valid`, ""},
	{"empty body is absent fields", "/checked/events", ``, 0, ``,
		`{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[{"field":"name","code":"invalid_name","message":"is required; must be a string of at most 80 characters"},{"field":"date","code":"invalid_date","message":"is required at event.when.date; must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11"}],"retryable":false}`, ""},
}

func TestFieldFaults(t *testing.T) {
	cfg, err := rules.Load("testdata/fields/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, c fieldCase) {
		rt, req := route(t, cfg, "POST", c.target)
		if c.body != "" {
			req.Body = []byte(c.body)
		}
		var e *rewrite.Error
		if c.status == 0 {
			e = rewrite.Before(rt, req, cfg.Limits)
		} else {
			up := &rewrite.Upstream{Status: c.status, Header: http.Header{}, Body: &rules.Body{Raw: []byte(c.upstream)}}
			rule := rt.MatchError(c.status, up.Body)
			if rule == nil {
				t.Fatalf("no rule matches %d %s", c.status, c.upstream)
			}
			e = new(rewrite.Error).SetMatch(rt, rule, up, req, cfg.Limits)
		}
		if e == nil {
			if c.want != "valid" {
				t.Fatalf("valid; want %s", c.want)
			}
			return
		}
		if got := string(e.JSON()); got != c.want {
			t.Fatalf("body mismatch\n got: %s\nwant: %s", got, c.want)
		}
		wantStatus := c.status
		if wantStatus == 0 {
			wantStatus = 400
		}
		if e.Status != wantStatus {
			t.Errorf("status %d; want %d", e.Status, wantStatus)
		}
		// The problem+json rendering carries the same members.
		var plain, problem map[string]any
		if err := json.Unmarshal(e.JSON(), &plain); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(e.ProblemJSON(), &problem); err != nil {
			t.Fatal(err)
		}
		plain["code"], plain["detail"] = plain["error"], plain["message"]
		delete(plain, "error")
		delete(plain, "message")
		plain["type"], plain["title"], plain["status"] = "about:blank", http.StatusText(wantStatus), float64(wantStatus)
		if !maps.EqualFunc(plain, problem, func(a, b any) bool { x, _ := json.Marshal(a); y, _ := json.Marshal(b); return string(x) == string(y) }) {
			t.Errorf("problem+json differs:\n got: %s\nwant: %v", e.ProblemJSON(), plain)
		}
	}
	for _, c := range fieldCases {
		t.Run("after/"+c.name, func(t *testing.T) { run(t, c) })
		before := c
		before.target, before.status = "/checked"+c.target, 0
		if c.before != "" {
			before.want = c.before
		}
		t.Run("before/"+c.name, func(t *testing.T) { run(t, before) })
	}
	for _, c := range afterOnly {
		t.Run("after/"+c.name, func(t *testing.T) { run(t, c) })
	}
	for _, c := range beforeOnly {
		t.Run("before/"+c.name, func(t *testing.T) { run(t, c) })
	}
}

// TestInvalidCode: a field's own code is snake_case whatever the API calls
// the field, as docs/response-contract.md promises of every code.
func TestInvalidCode(t *testing.T) {
	for name, want := range map[string]string{
		"status":          "invalid_status",
		"customer_id":     "invalid_customer_id",
		"photoUrls":       "invalid_photo_urls",
		"createdBy":       "invalid_created_by",
		"X-Api-Key":       "invalid_x_api_key",
		"filter[status]":  "invalid_filter_status",
		"owner.firstName": "invalid_owner_first_name",
		"HTTPServer":      "invalid_http_server",
		"match[]":         "invalid_match",
		"2fa":             "invalid_2fa",
		"$type":           "invalid_type",
		"[]":              "invalid_value",
	} {
		if got := rewrite.InvalidCode(name); got != want {
			t.Errorf("InvalidCode(%q) = %q, want %q", name, got, want)
		}
	}
}
