package openapi

import (
	"os"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"gopkg.in/yaml.v3"
)

func TestToSnake(t *testing.T) {
	for in, want := range map[string]string{
		"findPetsByStatus": "find_pets_by_status",
		"getHTTPStatus":    "get_http_status",
		"HTTPStatus":       "http_status",
		"petId":            "pet_id",
		"X-Api-Key":        "x_api_key",
		"get.Item":         "get_item",
		"listUsersV2":      "list_users_v2",
		"v2Users":          "v2_users",
		"already_snake":    "already_snake",
		"get /pet/{petId}": "get_pet_pet_id",
		"ID":               "id",
		"héllo wörld":      "h_llo_w_rld",
		"__":               "",
	} {
		if got := toSnake(in); got != want {
			t.Errorf("toSnake(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestYAMLScalars: whatever import writes as a scalar, YAML reads back as
// the same string.
func TestYAMLScalars(t *testing.T) {
	for _, s := range []string{"open", "yes", "No", "on", "true", "null", "~", "1", "1.5", "0x1f", "2026-03-11",
		"a,b", "a: b", "a #b", "it's", `say "hi"`, "[x]", "{x}", "-", "- x", "?", "&a", "*a", "!t", "%x", "@x", "`x",
		" lead", "trail ", "tab\there", "line\nbreak", "\u2028", "é", "a\\.b", "^[A-Z]+$", "/pet/{petId}", ""} {
		for _, tc := range []struct{ prefix, rendered, suffix string }{
			{"[", yamlFlow(s), "]"},
			{"k: ", yamlBlock(s), ""},
			{"[", yamlQuoted(s), "]"},
		} {
			var n yaml.Node
			doc := tc.prefix + tc.rendered + tc.suffix
			if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
				t.Errorf("%q renders as %s, which YAML does not read: %v", s, doc, err)
				continue
			}
			c := n.Content[0]
			if c.Kind == yaml.MappingNode {
				c = c.Content[1]
			} else {
				c = c.Content[0]
			}
			if c.Tag != "!!str" || c.Value != s {
				t.Errorf("%q renders as %s, which YAML reads as %s %q", s, doc, c.Tag, c.Value)
			}
		}
	}
}

// FuzzImportOpenAPI: whatever the spec, import does not panic, and a rule
// file it writes loads (go test -fuzz FuzzImport ./rules/openapi).
func FuzzImport(f *testing.F) {
	for _, spec := range []string{"../../cmd/signpost/testdata/petstore-3.0.yaml", "../../cmd/signpost/testdata/petstore-3.1.yaml", "../../cmd/signpost/testdata/edge.yaml"} {
		data, err := os.ReadFile(spec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {'/a/{b}': {parameters: [{name: b, in: path, required: true, schema: {type: string, enum: ['x y', 'on']}}], get: {responses: {'404': {description: gone}}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Import("fuzz.yaml", data)
		if err != nil {
			return
		}
		if _, err := rules.Parse("fuzz.rules.yaml", res.Text); err != nil {
			t.Fatalf("the imported rule file does not load:\n%v\n%s", err, res.Text)
		}
	})
}
