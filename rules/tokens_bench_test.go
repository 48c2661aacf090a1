package rules_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// BenchmarkTokens measures counting the tokens of one rewritten body, as
// the proxy does for signpost_error_body_tokens.
func BenchmarkTokens(b *testing.B) {
	body := `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`
	rules.Tokens(body) // build the vocabulary outside the timing
	b.ReportAllocs()
	for b.Loop() {
		rules.Tokens(body)
	}
}

// BenchmarkListingCost measures the load-time cost decision for the 249
// ISO 3166-1 codes.
func BenchmarkListingCost(b *testing.B) {
	cfg, err := rules.Load("../configs/addresses.yaml")
	if err != nil {
		b.Fatal(err)
	}
	values := cfg.Routes[0].Field("country_code").Enum
	text := "allowed values: "
	for i, v := range values {
		if i > 0 {
			text += ", "
		}
		text += v
	}
	b.ReportAllocs()
	for b.Loop() {
		rules.Tokens(text)
	}
}
