package rules_test

import (
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// TestFieldFault: the message for a field at fault never states a rule the
// value meets, and says what the rule alone would not.
func TestFieldFault(t *testing.T) {
	cfg := mustParse(t, `routes:
  r:
    method: POST
    path: /r
    fields:
      title: {required: true, max_length: 200}
      note: {min_length: 1, max_length: 20}
      code: {min_length: 3}
      slug: {pattern: '^[0-9a-z]*$', example: ada}
      level: {enum: ["1", "2", "3"]}
      any: {required: true}
      minutes: {format: integer, min: 1, max: 120}
      amount: {format: number}
      urgent: {format: boolean}
      status: {enum: [open, closed]}
      due_at: {format: rfc3339-utc}
      date: {required: true, key: event.when.date, format: date}
      limit: {in: query, format: integer}
`)
	r := cfg.Route("r")
	for _, tc := range []struct{ field, value, want string }{
		{"title", absent, "is required; must be a string of at most 200 characters"},
		{"title", `"x"`, "must be a string of at most 200 characters"},
		{"title", `""`, "is empty; must be a non-empty string of at most 200 characters"},
		{"title", `" \t"`, "is blank; must be a non-blank string of at most 200 characters"},
		{"title", `42`, "must be a string of at most 200 characters"},
		{"note", `""`, "is empty; must be a non-empty string of at most 20 characters"},
		{"code", `""`, "is empty; must be a string of at least 3 characters"},
		{"code", `"  "`, "is blank; must be a non-blank string of at least 3 characters"},
		{"slug", `""`, "is empty; must match the pattern ^[0-9a-z]*$ in at least 1 character, e.g. ada"},
		{"slug", `" "`, "must match the pattern ^[0-9a-z]*$, e.g. ada"},
		{"any", absent, "is required"},
		{"any", `""`, "is empty; must be a non-empty string"},
		{"any", `[]`, "is required"},
		{"minutes", `"30"`, "must be a JSON number, not a string; must be an integer from 1 to 120, e.g. 1"},
		{"minutes", `30.0`, "must be written without a fraction or exponent; must be an integer from 1 to 120, e.g. 1"},
		{"minutes", `300.0`, "must be an integer from 1 to 120, e.g. 1"},
		{"minutes", `[30]`, "must be a JSON number, not an array; must be an integer from 1 to 120, e.g. 1"},
		{"minutes", `null`, "must be an integer from 1 to 120, e.g. 1"},
		{"amount", `"12.50"`, "must be a JSON number, not a string; must be a number, e.g. 3.5"},
		{"urgent", `"true"`, "must be a JSON boolean, not a string; must be true or false"},
		{"urgent", `1`, "must be a JSON boolean, not a number; must be true or false"},
		{"status", `true`, "allowed values: open, closed"},
		{"level", `1`, "must be a JSON string, not a number; allowed values: 1, 2, 3"},
		{"slug", `12`, "must be a JSON string, not a number; must match the pattern ^[0-9a-z]*$, e.g. ada"},
		{"status", `""`, "allowed values: open, closed"},
		{"due_at", `"2026-03-11T09:14:02+00:00"`, "must be an RFC 3339 timestamp in UTC, with the offset written Z, e.g. 2026-11-30T17:00:00Z"},
		{"due_at", `"2026-03-11T09:14:02-00:00"`, "must be an RFC 3339 timestamp in UTC, with the offset written Z, e.g. 2026-11-30T17:00:00Z"},
		{"due_at", `"2026-03-11T10:14:02.5+01:00"`, "must be an RFC 3339 timestamp in UTC: convert the time to UTC and write the offset Z, e.g. 2026-11-30T17:00:00Z"},
		{"due_at", `"next Friday"`, "must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z"},
		{"date", absent, "is required at event.when.date; must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11"},
		{"limit", `30.5`, "must be an integer, e.g. 42"},
		{"limit", `30.0`, "must be written without a fraction or exponent; must be an integer, e.g. 42"},
	} {
		f := r.Field(tc.field)
		if got := f.Fault(value(f, tc.value)); got != tc.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tc.field, tc.value, got, tc.want)
		}
	}
}

// TestMinLength: min_length counts characters, as JSON Schema's minLength
// does, and fits with max_length and free text only.
func TestMinLength(t *testing.T) {
	f := fld(rules.InBody, "", func(f *rules.Field) { f.MinLength, f.MaxLength = 2, 3 })
	for v, want := range map[string]bool{`""`: false, `"é"`: false, `"éé"`: true, `"  "`: true, `"abcd"`: false, `12`: false} {
		if got := f.Check(value(f, v)); got != want {
			t.Errorf("Check(%s) = %t, want %t", v, got, want)
		}
	}
	for _, tc := range []struct{ field, want string }{
		{"{enum: [a], min_length: 1}", "min_length 1 bounds free text, and the enum already fixes the value's form; drop min_length"},
		{"{format: date, min_length: 1}", "min_length 1 bounds free text, and the format date already fixes the value's form; drop min_length"},
		{"{min_length: 5, max_length: 3}", "min_length 5 is above max_length 3; a value's length runs from min_length up to max_length, e.g. {min_length: 1, max_length: 3}"},
		{"{min_length: 0}", "routes.r.fields.x.min_length"},
	} {
		_, err := rules.Parse("r.yaml", []byte("routes:\n  r:\n    method: POST\n    path: /r\n    fields:\n      x: "+tc.field+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want a problem containing %q", tc.field, err, tc.want)
		}
	}
}

// TestCapturedValue: a value captured from the upstream's text keeps the
// JSON type the request sent, or a numeric field's type.
func TestCapturedValue(t *testing.T) {
	cfg := mustParse(t, `routes:
  r:
    method: POST
    path: /r
    fields:
      minutes: {format: integer}
      urgent: {format: boolean}
      title: {max_length: 20}
`)
	r := cfg.Route("r")
	for _, tc := range []struct{ field, captured, sent, want string }{
		{"minutes", "44", `44`, `44`},
		{"minutes", "44", `"44"`, `"44"`},
		{"minutes", "44", absent, `44`},
		{"minutes", "44", `45`, `44`},
		{"minutes", "forty", absent, `"forty"`},
		{"minutes", " 44", absent, `" 44"`},
		{"urgent", "false", absent, `false`},
		{"title", "44", absent, `"44"`},
		{"title", "44", `44`, `44`},
		// An array or object keeps its type however the upstream printed it.
		{"title", "[GB]", `["GB"]`, `["GB"]`},
		{"title", `["GB", "US"]`, `["GB","US"]`, `["GB","US"]`},
		{"title", "GB,US", `["GB","US"]`, `["GB","US"]`},
		{"title", "map[a:1]", `{"a":1}`, `{"a":1}`},
		{"title", "XX", `["GB","XX"]`, `"XX"`}, // the element named
		{"title", "[GB FR]", `["GB","US"]`, `"[GB FR]"`},
		// A field not sent, that the upstream printed as nothing, was not received.
		{"title", "<nil>", absent, ``},
		{"title", "None", absent, ``},
		{"title", "<nil>", `"<nil>"`, `"<nil>"`}, // unless that was what was sent
	} {
		f := r.Field(tc.field)
		var sent gjson.Result
		if tc.sent != absent {
			sent = gjson.Parse(tc.sent)
		}
		if got := rules.CapturedValue(f, tc.captured, sent).Raw; got != tc.want {
			t.Errorf("%s captured %q, sent %s: got %s, want %s", tc.field, tc.captured, tc.sent, got, tc.want)
		}
	}
}
