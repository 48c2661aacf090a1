package openapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/signpost-proxy/signpost/rules"
)

// TestImportFieldNames: a field is named as the API spells its key where a
// tool's argument may be so named (letters, digits, _ . -; else the other
// characters become underscores), and its key, where the name alone would
// not find the value, still does: signpost
// reads a body field's value at its key with rules.Lookup, and the MCP
// front door writes an argument there with sjson.
func TestImportFieldNames(t *testing.T) {
	cfg := importFile(t, "names.yaml")
	for _, tc := range []struct {
		route, name string
		in          rules.Location
		key         string   // the key the rule file gives, the name when empty
		path        []string // for a body field, the members from the top to the value
	}{
		{route: "list_users", name: "filter_status", in: rules.InQuery, key: "filter[status]"},
		{route: "list_users", name: "page.size", in: rules.InQuery},
		{route: "list_users", name: "pageToken", in: rules.InQuery},
		{route: "list_users", name: "X-Request-Id", in: rules.InHeader},
		{route: "get_user", name: "userId", in: rules.InPath},
		{route: "create_user", name: "id", in: rules.InQuery},
		{route: "create_user", name: "createdBy", in: rules.InBody, path: []string{"createdBy"}},
		// One key in two places: the body's gives way, and says so.
		{route: "create_user", name: "body_id", in: rules.InBody, key: "id", path: []string{"id"}},
		{route: "create_user", name: "a.b", in: rules.InBody, key: `a\.b`, path: []string{"a.b"}},
		{route: "create_user", name: "type", in: rules.InBody, key: `\$type`, path: []string{"$type"}},
		{route: "create_user", name: "body_id_2", in: rules.InBody, key: `\@id`, path: []string{"@id"}},
		{route: "create_user", name: "x", in: rules.InBody, key: `\:x`, path: []string{":x"}},
		{route: "create_user", name: "0", in: rules.InBody, key: `\[0\]`, path: []string{"[0]"}},
		{route: "create_user", name: "x_y", in: rules.InBody, key: `x\*y\?`, path: []string{"x*y?"}},
		{route: "create_user", name: "on", in: rules.InBody, path: []string{"on"}},
		{route: "create_user", name: "owner.firstName", in: rules.InBody, path: []string{"owner", "firstName"}},
		{route: "create_user", name: "owner.last.name", in: rules.InBody, key: `owner.last\.name`, path: []string{"owner", "last.name"}},
	} {
		t.Run(tc.route+"."+tc.name, func(t *testing.T) {
			r := cfg.Route(tc.route)
			if r == nil {
				t.Fatalf("no route %s", tc.route)
			}
			f := r.Field(tc.name)
			if f == nil {
				var names []string
				for _, f := range r.Fields {
					names = append(names, f.Name)
				}
				t.Fatalf("no field %q; the route declares %q", tc.name, names)
			}
			want := tc.key
			if want == "" {
				want = tc.name
			}
			if f.In != tc.in || f.Key != want {
				t.Errorf("in %s, key %q; want in %s, key %q", f.In, f.Key, tc.in, want)
			}
			if tc.in != rules.InBody {
				return
			}
			// A body holding the value where the API puts it, beside a
			// decoy where a key read as gjson syntax would look.
			var value any = "v"
			for i := len(tc.path) - 1; i >= 0; i-- {
				value = map[string]any{tc.path[i]: value}
			}
			body := value.(map[string]any)
			body["a"] = map[string]any{"b": "decoy"}
			text, _ := json.Marshal(body)
			if got := rules.Lookup(string(text), f.Key, true); got.String() != "v" {
				t.Errorf("key %q reads %q from %s; want the value at %s", f.Key, got.Raw, text, strings.Join(tc.path, " > "))
			}
			written, err := sjson.SetRawBytes([]byte("{}"), f.Key, []byte(`"v"`))
			if err != nil {
				t.Fatalf("sjson cannot write key %q: %v", f.Key, err)
			}
			var got any
			_ = json.Unmarshal(written, &got)
			delete(body, "a")
			if !reflect.DeepEqual(got, any(body)) {
				t.Errorf("sjson writes key %q as %s; want %s", f.Key, written, mustJSON(body))
			}
		})
	}
	text := importText(t, "names.yaml")
	if !strings.Contains(text, "# body id is named body_id: another field of the route has the name id\n") {
		t.Errorf("the renamed body id is not explained:\n%s", text)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
