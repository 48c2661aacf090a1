package draft

import (
	"os"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestOntoKeepsTheBase: a draft added to a hand-written base keeps the
// base's routes, names, fields and rules as written, adds the routes the
// base lacks and the rules and fields its routes lack, names the base's
// routes and variables in the drafted calls, and loads.
func TestOntoKeepsTheBase(t *testing.T) {
	base, err := os.ReadFile("testdata/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	drafted, err := os.ReadFile("testdata/tickets.rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, added, cfg := onto(t, base, drafted)
	text := string(out)
	for _, want := range []string{
		"# Rules for the ticket API, written by hand",
		"# Editing a ticket: the status is a closed set",
		"message: the status is one of open, pending, closed",
		"next_call: assign(id)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the merged file lacks %q:\n%s", want, text)
		}
	}
	edit := cfg.Route("edit_ticket")
	if edit == nil || edit.Path != "/tickets/{id}" || edit.Field("status") == nil || len(edit.Field("status").Enum) != 3 {
		t.Fatalf("the base's edit_ticket is not kept as written:\n%s", text)
	}
	if cfg.Route("update_ticket") != nil || cfg.Route("assign_ticket") != nil {
		t.Errorf("a drafted route the base has under another name was added again:\n%s", text)
	}
	var codes []string
	for _, e := range edit.Errors {
		codes = append(codes, e.Code)
	}
	if strings.Count(strings.Join(codes, " "), "invalid_status") != 1 || len(codes) < 2 {
		t.Errorf("edit_ticket's rules are %q: want the base's invalid_status once, and the draft's others", codes)
	}
	for _, name := range []string{"list_tickets", "create_ticket", "get_ticket"} {
		if cfg.Route(name) == nil {
			t.Errorf("the drafted route %s, which the base lacks, is not added", name)
		}
	}
	if added.Routes != 3 || added.Errors == 0 {
		t.Errorf("added %+v: want 3 routes and the draft's rules", added)
	}
}

// TestOntoRefusesWhatIsNoRuleFile: a base that is not a mapping is named.
func TestOntoRefusesWhatIsNoRuleFile(t *testing.T) {
	for _, base := range []string{"- a\n- b\n", "routes: [a]\n", "a: [\n"} {
		if _, _, err := Onto([]byte(base), []byte("routes: {}\n")); err == nil {
			t.Errorf("Onto(%q) = nil error", base)
		}
	}
}

// TestOntoTellsRoutesApartByWhen: on a base whose one endpoint is split
// into routes by a body member, a drafted route for one of its methods
// adds to that method's route, not to the last of the endpoint's, and
// one for a method the base lacks is added as a route of its own.
func TestOntoTellsRoutesApartByWhen(t *testing.T) {
	base := []byte(`upstream: http://127.0.0.1:9091
routes:
  torrent_get:
    method: POST
    path: /rpc
    when: {json: method, equals: torrent-get}
    fields:
      method: {const: torrent-get}
  torrent_add:
    method: POST
    path: /rpc
    when: {json: method, equals: torrent-add}
    fields:
      method: {const: torrent-add}
`)
	drafted := []byte(`upstream: http://127.0.0.1:9091
routes:
  rpc_torrent_get:
    method: POST
    path: /rpc
    when: {equals: torrent-get, json: method}
    fields:
      method: {const: torrent-get}
      ids: {key: arguments.ids}
  rpc_session_get:
    method: POST
    path: /rpc
    when: {json: method, equals: session-get}
    fields:
      method: {const: session-get}
`)
	out, added, cfg := onto(t, base, drafted)
	if get := cfg.Route("torrent_get"); get == nil || get.Field("ids") == nil {
		t.Errorf("torrent_get did not gain the drafted field ids:\n%s", out)
	}
	if add := cfg.Route("torrent_add"); add == nil || add.Field("ids") != nil {
		t.Errorf("torrent_add gained torrent-get's field:\n%s", out)
	}
	if cfg.Route("rpc_session_get") == nil || added.Routes != 1 || added.Renamed["rpc_torrent_get"] != "torrent_get" {
		t.Errorf("added %+v; want rpc_session_get added, rpc_torrent_get named torrent_get:\n%s", added, out)
	}
}

// onto adds drafted onto base, and loads the result, which must load.
func onto(t *testing.T, base, drafted []byte) ([]byte, Added, *rules.Config) {
	t.Helper()
	out, added, err := Onto(base, drafted)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse("merged.yaml", out)
	if err != nil {
		t.Fatalf("the merged file does not load: %v\n%s", err, out)
	}
	return out, added, cfg
}
