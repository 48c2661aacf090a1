package rules_test

import "testing"

// TestConfigRoute finds routes by the names the rule file gives them, and
// nothing for a name it does not.
func TestConfigRoute(t *testing.T) {
	cfg := mustLoad(t, "../configs/tickets.yaml")
	for _, tc := range []struct{ name, path string }{
		{"get_ticket", "/tickets/{ticket_id}"},
		{"update_ticket", "/tickets/{ticket_id}"},
		{"search_customers", "/customers"},
		{"delete_ticket", ""},
		{"", ""},
		{"GET_TICKET", ""},
	} {
		r := cfg.Route(tc.name)
		switch {
		case tc.path == "" && r != nil:
			t.Errorf("Route(%q) = %s, want none", tc.name, r.Name)
		case tc.path != "" && (r == nil || r.Name != tc.name || r.Path != tc.path):
			t.Errorf("Route(%q) = %+v, want the route at %s", tc.name, r, tc.path)
		}
	}
}
