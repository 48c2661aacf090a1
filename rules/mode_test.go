package rules_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestMode checks which routes observe: the file's mode is each route's
// default, a route's own mode wins, and observing needs no route at all.
func TestMode(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		fileMode rules.Enforcement
		routes   map[string]rules.Enforcement
	}{
		{"enforce by default", `
routes:
  get_ticket: {method: GET, path: '/tickets/{id}'}
`, rules.Enforce, map[string]rules.Enforcement{"get_ticket": rules.Enforce}},
		{"the file observes", `
mode: observe
routes:
  get_ticket: {method: GET, path: '/tickets/{id}'}
  update_ticket: {method: PATCH, path: '/tickets/{id}', mode: enforce}
`, rules.Observe, map[string]rules.Enforcement{"get_ticket": rules.Observe, "update_ticket": rules.Enforce}},
		{"mode after routes still applies", `
routes:
  get_ticket: {method: GET, path: '/tickets/{id}'}
mode: observe
`, rules.Observe, map[string]rules.Enforcement{"get_ticket": rules.Observe}},
		{"a route observes", `
routes:
  get_ticket: {method: GET, path: '/tickets/{id}', mode: observe}
`, rules.Enforce, map[string]rules.Enforcement{"get_ticket": rules.Observe}},
		{"no routes", "mode: observe\n", rules.Observe, map[string]rules.Enforcement{}},
		{"empty routes", "mode: observe\nroutes: {}\n", rules.Observe, map[string]rules.Enforcement{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := rules.Parse("mode.yaml", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Mode != tt.fileMode {
				t.Errorf("file mode %q, want %q", cfg.Mode, tt.fileMode)
			}
			if len(cfg.Routes) != len(tt.routes) {
				t.Fatalf("%d routes, want %d", len(cfg.Routes), len(tt.routes))
			}
			for _, r := range cfg.Routes {
				if r.Mode != tt.routes[r.Name] {
					t.Errorf("route %s: mode %q, want %q", r.Name, r.Mode, tt.routes[r.Name])
				}
			}
		})
	}
}
