package rules_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestRouteGroups: the routes of one method and path form a group, those
// with when: first in file order and the one without last; a route alone
// on its path has none; a const field holds its one value.
func TestRouteGroups(t *testing.T) {
	cfg := mustParse(t, `
routes:
  rest:
    method: POST
    path: /rpc
  torrent_get:
    method: POST
    path: /rpc
    when: {json: method, equals: torrent-get}
    fields:
      method: {const: torrent-get}
  add:
    method: POST
    path: /rpc
    when: {form: action, equals: add}
  other:
    method: GET
    path: /rpc
`)
	want := []string{"torrent_get", "add", "rest"}
	for _, name := range want {
		g := cfg.Route(name).Group
		if len(g) != len(want) {
			t.Fatalf("%s: group of %d, want %d", name, len(g), len(want))
		}
		for i, r := range g {
			if r.Name != want[i] {
				t.Errorf("%s: group[%d] = %s, want %s", name, i, r.Name, want[i])
			}
		}
		if !cfg.Route(name).ReadsBody() {
			t.Errorf("%s: its body must be read to tell its requests apart", name)
		}
	}
	if g := cfg.Route("other").Group; g != nil {
		t.Errorf("a route alone on its method and path has a group of %d", len(g))
	}
	if w := cfg.Route("add").When; w.In != rules.InForm || w.Key != "action" || w.Equals != "add" || w.String() != "{form: action, equals: add}" {
		t.Errorf("when: %+v, %s", w, w)
	}
	f := cfg.Route("torrent_get").Field("method")
	if f.Const != "torrent-get" || f.Rule != "must be torrent-get" || !f.Check(rules.Text("torrent-get")) || f.Check(rules.Text("torrent-set")) {
		t.Errorf("const field: %q, rule %q", f.Const, f.Rule)
	}
}
