package rewrite_test

import (
	"net/url"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// patternRuleFile has a pattern field whose rule: words the regex for agents.
const patternRuleFile = `routes:
  query_range:
    method: GET
    path: /api/v1/query_range
    fields:
      step: {in: query, required: true, example: 30s, rule: 'must be a duration such as 15s, 1m or 1h',
        pattern: '^([0-9]+(\.[0-9]+)?|([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$'}
    errors:
      - match: {status: 400, json: error, contains: step}
        field: step
        code: invalid_step
`

// TestPatternRuleInMessages: a pattern field with rule: states the rule and
// the example, never the regex, before the upstream and after it, in
// signpost's format and as Problem Details.
func TestPatternRuleInMessages(t *testing.T) {
	cfg, err := rules.Parse("prom.yaml", []byte(patternRuleFile))
	if err != nil {
		t.Fatal(err)
	}
	rt := cfg.Routes[0]
	const msg = "must be a duration such as 15s, 1m or 1h, e.g. 30s"
	up := &rewrite.Upstream{Status: 400, Body: &rules.Body{Raw: []byte(`{"error":"invalid parameter \"step\""}`)}}
	rule := rt.MatchError(400, up.Body)
	if rule == nil {
		t.Fatal("no rule matches the upstream's 400")
	}
	for _, tc := range []struct {
		mode string
		e    func(*rewrite.Request) *rewrite.Error
	}{
		{"before", func(req *rewrite.Request) *rewrite.Error { return rewrite.Before(rt, req, cfg.Limits) }},
		{"after", func(req *rewrite.Request) *rewrite.Error {
			return new(rewrite.Error).SetMatch(rt, rule, up, req, cfg.Limits)
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			e := tc.e(&rewrite.Request{Query: url.Values{"step": {"5 minutes"}}})
			if e == nil {
				t.Fatal("no error for step=5 minutes")
			}
			want := `{"error":"invalid_step","field":"step","message":"` + msg + `","received":"5 minutes","retryable":false}`
			if got := string(e.JSON()); got != want {
				t.Errorf("JSON:\n got: %s\nwant: %s", got, want)
			}
			wantProblem := `{"type":"about:blank","title":"Bad Request","status":400,"code":"invalid_step","field":"step","detail":"` + msg + `","received":"5 minutes","retryable":false}`
			if got := string(e.ProblemJSON()); got != wantProblem {
				t.Errorf("ProblemJSON:\n got: %s\nwant: %s", got, wantProblem)
			}
		})
	}
}
