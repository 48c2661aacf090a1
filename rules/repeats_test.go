package rules_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestRepeats reads limits.repeats and a route's repeats: off into the
// counts in force for a failure, transient or not.
func TestRepeats(t *testing.T) {
	for _, tc := range []struct {
		name, limits, route string
		failures, transient int
		fileOff, routeOff   bool
	}{
		{name: "defaults", failures: 2, transient: 3},
		{name: "both set", limits: "{failures: 4, transient: 6}", failures: 4, transient: 6},
		{name: "one set", limits: "{transient: 5}", failures: 2, transient: 5},
		{name: "off for the file", limits: "off", failures: 2, transient: 3, fileOff: true},
		{name: "off for a route", route: "off", failures: 2, transient: 3, routeOff: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "routes:\n  export:\n    method: GET\n    path: /export\n"
			if tc.route != "" {
				src += "    repeats: " + tc.route + "\n"
			}
			if tc.limits != "" {
				src = "limits:\n  repeats: " + tc.limits + "\n" + src
			}
			cfg, err := rules.Parse("repeats.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			r := cfg.Limits.Repeats
			if got := r.Of(false); got != tc.failures {
				t.Errorf("failures: %d, want %d", got, tc.failures)
			}
			if got := r.Of(true); got != tc.transient {
				t.Errorf("transient: %d, want %d", got, tc.transient)
			}
			if r.Off != tc.fileOff || cfg.Routes[0].RepeatsOff != tc.routeOff {
				t.Errorf("off: file %v, route %v; want %v, %v", r.Off, cfg.Routes[0].RepeatsOff, tc.fileOff, tc.routeOff)
			}
		})
	}
}
