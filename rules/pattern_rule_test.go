package rules_test

import (
	"testing"
)

// promStep is the step pattern of Prometheus's range queries: a float of
// seconds, or a duration such as 15s, 1m30s or 1h.
const promStep = `^([0-9]+(\.[0-9]+)?|([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$`

// TestPatternFieldRule: a pattern field's rule: words what messages and the
// tool schema tell agents, in place of the regex, which still checks the
// value; the example follows unless the words name it already.
func TestPatternFieldRule(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		rule        string // the field's Rule, as messages state it
		description string // the tool schema's description
	}{
		{"rule and example",
			`{in: query, required: true, pattern: '` + promStep + `', example: 30s, rule: 'must be a duration such as 15s, 1m or 1h'}`,
			"must be a duration such as 15s, 1m or 1h, e.g. 30s", "must be a duration such as 15s, 1m or 1h, e.g. 30s"},
		{"rule naming the example",
			`{in: query, pattern: '` + promStep + `', example: 15s, rule: 'must be a duration such as 15s, 1m or 1h'}`,
			"must be a duration such as 15s, 1m or 1h", "must be a duration such as 15s, 1m or 1h"},
		{"rule, max_length and a description",
			`{in: query, pattern: '^[a-z]+$', max_length: 8, example: abc, rule: must be lower-case letters, description: the job}`,
			"must be lower-case letters in at most 8 characters, e.g. abc", "the job; must be lower-case letters in at most 8 characters, e.g. abc"},
		{"no rule: the pattern as before",
			`{in: query, pattern: '^[a-z]+$', example: abc}`,
			"must match the pattern ^[a-z]+$, e.g. abc", "must match the pattern ^[a-z]+$, e.g. abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, "routes:\n  query_range:\n    method: GET\n    path: /q\n    fields:\n      step: "+tc.field+"\n")
			r := cfg.Routes[0]
			f := r.Field("step")
			if f.Rule != tc.rule {
				t.Errorf("Rule = %q; want %q", f.Rule, tc.rule)
			}
			if f.Pattern == nil {
				t.Fatal("the pattern is gone; it must still check the value")
			}
			p := r.InputSchema().Properties[0]
			if p.Description != tc.description {
				t.Errorf("schema description = %q; want %q", p.Description, tc.description)
			}
			if p.Pattern != f.Pattern.String() {
				t.Errorf("schema pattern = %q; want the field's %q", p.Pattern, f.Pattern.String())
			}
		})
	}
}
