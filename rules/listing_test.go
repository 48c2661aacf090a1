package rules_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestListingDecidedByTokens checks that a permitted set is listed in
// messages only when its real token cost fits the budget.
func TestListingDecidedByTokens(t *testing.T) {
	cfg := mustLoad(t, "../configs/addresses.yaml")
	country := cfg.Routes[0].Field("country_code")
	if country.Listed || country.ListCost < 400 || country.ListCost > 700 {
		t.Errorf("249 codes: listed=%v cost=%d; want not listed at a cost of several hundred tokens", country.Listed, country.ListCost)
	}
	if want := "must be an ISO 3166-1 alpha-2 country code, two letters"; country.Rule != want {
		t.Errorf("rule %q; want %q", country.Rule, want)
	}
	if !country.Check(rules.Text("GB")) || !country.Check(rules.Text("XK")) || country.Check(rules.Text("UK")) {
		t.Error("GB and hidden XK must be accepted, UK rejected")
	}
	if got := country.Suggest.Suggest("XK"); got != nil {
		t.Errorf("a hidden value is suggested: %v", got)
	}

	for _, tc := range []struct {
		name   string
		field  string
		listed bool
		rule   string
	}{
		{"cheap enum", `{enum: [open, pending, closed]}`, true, "allowed values: open, pending, closed"},
		{"budget zero", `{enum: [open, pending, closed], list_tokens: 0}`, false, "must be one of 3 permitted values"},
		{"own words", `{enum: [open, pending, closed], list_tokens: 5, rule: must be a ticket state}`, false, "must be a ticket state"},
		{"raised budget", `{catalog: ../configs/catalogs/iso3166-alpha2.yaml, list_tokens: 1000}`, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := rules.Parse("inline.yaml", []byte("routes:\n  r:\n    method: GET\n    path: /r\n    fields:\n      f: "+tc.field+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			f := cfg.Routes[0].Field("f")
			if f.Listed != tc.listed || tc.rule != "" && f.Rule != tc.rule {
				t.Errorf("listed=%v rule=%q cost=%d; want listed=%v rule=%q", f.Listed, f.Rule, f.ListCost, tc.listed, tc.rule)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"allowed values: open, pending, closed", 8},
	} {
		if got := rules.Tokens(tc.s); got != tc.want {
			t.Errorf("Tokens(%q) = %d; want %d", tc.s, got, tc.want)
		}
	}
}
