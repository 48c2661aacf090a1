package rules_test

import (
	"regexp"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// TestFormatRFC3339 pins format rfc3339 to RFC 3339's date-time, which
// OpenAPI's and JSON Schema's date-time name: any offset, T and Z in
// either case, fractional seconds, and a leap second at 23:59 UTC only.
func TestFormatRFC3339(t *testing.T) {
	cfg := mustParse(t, "routes:\n  r:\n    method: POST\n    path: /r\n    fields:\n      at: {format: rfc3339, required: true}\n")
	f := cfg.Routes[0].Field("at")
	for v, want := range map[string]bool{
		`"2026-03-11T09:14:02Z"`:          true,
		`"2026-03-11T10:14:02+01:00"`:     true,
		`"2026-03-11T09:14:02+00:00"`:     true,
		`"2026-03-11T04:14:02.250-05:00"`: true,
		`"2026-03-11t09:14:02z"`:          true,
		`"2016-12-31T23:59:60Z"`:          true,
		`"2016-12-31T15:59:60-08:00"`:     true,
		`"2026-03-11T12:59:60Z"`:          false, // a leap second ends a UTC day
		`"2026-03-11T09:14:02"`:           false, // no offset
		`"2026-03-11T09:14:02+0100"`:      false,
		`"2026-03-11T09:14:02+24:00"`:     false,
		`"2026-03-11 09:14:02Z"`:          false,
		`"2026-03-11T9:14:02Z"`:           false,
		`"2026-03-11T09:14:02,5Z"`:        false,
		`"2026-02-30T09:14:02Z"`:          false,
		`"2026-03-11"`:                    false,
		`20260311`:                        false,
	} {
		if got := f.Check(gjson.Parse(v)); got != want {
			t.Errorf("Check(%s) = %t; want %t", v, got, want)
		}
	}
	if f.Rule != "must be an RFC 3339 timestamp with its offset, e.g. 2026-03-11T10:14:02+01:00" {
		t.Errorf("Rule = %q", f.Rule)
	}
	if p := cfg.Routes[0].InputSchema().Properties[0]; p.Format != "date-time" || !regexp.MustCompile(p.Pattern).MatchString(f.Example) {
		t.Errorf("schema: format %q, pattern %q; want date-time, which is RFC 3339 with any offset, and a pattern that takes %s", p.Format, p.Pattern, f.Example)
	}
	if rules.FormatNamed("rfc3339") == nil {
		t.Error("no format rfc3339")
	}
}
