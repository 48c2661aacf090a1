package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// compileFileSchema compiles one of the JSON Schemas in this folder that
// editors validate rule files and catalogs with.
func compileFileSchema(tb testing.TB, file string) *jsonschema.Schema {
	tb.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(file)
	if err != nil {
		tb.Fatalf("compile %s: %v", file, err)
	}
	return s
}

// yamlInstance reads a YAML document as the JSON value an editor validates:
// merge keys expanded, mapping keys as strings.
func yamlInstance(tb testing.TB, data []byte) any {
	tb.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		tb.Fatalf("YAML: %v", err)
	}
	return jsonValue(v)
}

func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonValue(x)
		}
		return v
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonValue(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = jsonValue(x)
		}
		return v
	}
	return v
}

func TestRuleFileSchemaAcceptsShippedFiles(t *testing.T) {
	s := compileFileSchema(t, "rulefile.schema.json")
	var files []string
	for _, glob := range []string{"../configs/*.yaml", "testdata/*.good.yaml", "testdata/*.warn.yaml"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 8 {
		t.Fatalf("found only %d rule files: %v", len(files), files)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if _, err := Load(file); err != nil {
				t.Fatalf("the loader rejects it, so the schema test means nothing:\n%v", err)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(yamlInstance(t, data)); err != nil {
				t.Errorf("the loader accepts %s, the schema does not:\n%v", file, err)
			}
		})
	}
}

func TestCatalogSchemaAcceptsShippedCatalogs(t *testing.T) {
	s := compileFileSchema(t, "catalog.schema.json")
	files, _ := filepath.Glob("../configs/catalogs/*.yaml")
	files = append(files, "testdata/catalogs/colours.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(yamlInstance(t, data)); err != nil {
			t.Errorf("%s:\n%v", file, err)
		}
	}
	data, err := os.ReadFile("testdata/catalogs/broken.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(yamlInstance(t, data)); err == nil {
		t.Error("testdata/catalogs/broken.yaml (key alias, a value twice) passes the catalog schema")
	}
}

// TestRuleFileSchemaRejects checks mistakes the loader reports are flagged
// by the schema too, at the same place.
func TestRuleFileSchemaRejects(t *testing.T) {
	s := compileFileSchema(t, "rulefile.schema.json")
	const route = "routes:\n  update_ticket:\n    method: PATCH\n    path: /tickets/{ticket_id}\n"
	for _, tc := range []struct {
		name, yaml string
		at         string // the instance location the schema must name
	}{
		{"misspelt route key", route + "    feilds:\n      status: {enum: [open]}\n", "/routes/update_ticket"},
		{"lower-case method", "routes:\n  update_ticket:\n    method: patch\n    path: /tickets/{ticket_id}\n", "/routes/update_ticket/method"},
		{"a method that is no token", "routes:\n  update_ticket:\n    method: FETCH TICKET\n    path: /tickets/{ticket_id}\n", "/routes/update_ticket/method"},
		{"unknown format", route + "    fields:\n      due_at: {format: rfc3339z}\n", "/routes/update_ticket/fields/due_at/format"},
		{"misspelt top-level key", "upstrem: http://127.0.0.1:8081\n" + route, ""},
		{"route name not snake_case", "routes:\n  UpdateTicket:\n    method: PATCH\n    path: /t\n", "/routes"},
		{"status out of range", route + "    errors:\n      - match: {status: 302}\n        code: c\n        message: m\n", "/routes/update_ticket/errors/0/match/status"},
		{"answer status a success", route + "    errors:\n      - match: {status: 200, json: ok, equals: 'false'}\n        code: c\n        message: m\n        status: 200\n", "/routes/update_ticket/errors/0/status"},
		{"quoted status", route + "    errors:\n      - match: {status: '404'}\n        code: c\n        message: m\n", "/routes/update_ticket/errors/0/match/status"},
		{"rule with no field and no message", route + "    errors:\n      - match: {status: 409}\n        code: c\n", "/routes/update_ticket/errors/0"},
		{"equals without json", route + "    errors:\n      - match: {status: 400, equals: x}\n        code: c\n        message: m\n", "/routes/update_ticket/errors/0/match"},
		{"code not snake_case", route + "    errors:\n      - match: {status: 400}\n        code: InvalidStatus\n        message: m\n", "/routes/update_ticket/errors/0/code"},
		{"enum and pattern", route + "    fields:\n      s: {enum: [a], pattern: '^a$', example: a}\n", "/routes/update_ticket/fields/s"},
		{"pattern without example", route + "    fields:\n      s: {pattern: '^a$'}\n", "/routes/update_ticket/fields/s"},
		{"numeric enum value", route + "    fields:\n      s: {enum: [1, 2]}\n", "/routes/update_ticket/fields/s/enum/0"},
		{"hidden without a set", route + "    fields:\n      s: {hidden: [a]}\n", "/routes/update_ticket/fields/s"},
		{"rule on a format", route + "    fields:\n      s: {format: date, rule: a day}\n", "/routes/update_ticket/fields/s"},
		{"min without a numeric format", route + "    fields:\n      s: {format: date, min: 1}\n", "/routes/update_ticket/fields/s"},
		{"futile and retryable", route + "    errors:\n      - match: {status: 409}\n        code: c\n        message: m\n        futile: stop\n        retryable: true\n", "/routes/update_ticket/errors/0"},
		{"size too large", "limits: {error_body: 999999999}\n" + route, "/limits/error_body"},
		{"space in path", "routes:\n  label_values:\n    method: GET\n    path: /label/foo bar/values\n", "/routes/label_values/path"},
		{"bad location", route + "    fields:\n      s: {in: Body}\n", "/routes/update_ticket/fields/s/in"},
		{"no routes", "upstream: http://127.0.0.1:8081\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse("bad.yaml", []byte(tc.yaml)); err == nil {
				t.Fatalf("the loader accepts it, so the case tests nothing")
			}
			err := s.Validate(yamlInstance(t, []byte(tc.yaml)))
			var ve *jsonschema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("the schema accepts it; err = %v", err)
			}
			if !namesLocation(ve, tc.at) {
				t.Errorf("the schema's error does not point at %q:\n%v", tc.at, err)
			}
		})
	}
}

// namesLocation reports whether the error, or one of its causes, is about
// the instance at the JSON pointer at.
func namesLocation(ve *jsonschema.ValidationError, at string) bool {
	if "/"+strings.Join(ve.InstanceLocation, "/") == at || len(ve.InstanceLocation) == 0 && at == "" {
		return true
	}
	for _, c := range ve.Causes {
		if namesLocation(c, at) {
			return true
		}
	}
	return false
}

// TestRuleFileSchemaRejectsBadTestdata checks the schema rejects the bad
// rule files whose mistakes are of shape rather than of meaning.
func TestRuleFileSchemaRejectsBadTestdata(t *testing.T) {
	s := compileFileSchema(t, "rulefile.schema.json")
	for _, name := range []string{"bounds", "calls", "catalog", "enum", "field", "match", "missing_routes",
		"path_chars", "root_list", "routes_empty", "routes_list", "settings", "settings2", "settings3", "sizes", "unknown_keys"} {
		file := filepath.Join("testdata", name+".bad.yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(yamlInstance(t, data)); err == nil {
			t.Errorf("%s passes the schema", file)
		}
	}
}

// TestRuleFileSchemaKnowsTheLoadersKeys keeps the schema and the loader
// from drifting apart: each mapping lists exactly the keys the loader
// takes, and each closed set exactly the loader's words, in its order (the
// order an editor offers them in).
func TestRuleFileSchemaKnowsTheLoadersKeys(t *testing.T) {
	rf := readSchemaDoc(t, "rulefile.schema.json")
	cat := readSchemaDoc(t, "catalog.schema.json")
	defs := rf["definitions"].(map[string]any)
	def := func(name string) map[string]any { return defs[name].(map[string]any) }
	for _, tc := range []struct {
		where string
		got   []string
		want  []string
	}{
		{"top-level properties (topKeys)", propertyNames(rf), topKeys},
		{"limits (limitKeys)", propertyNames(def("limits")), limitKeys},
		{"learn (learnKeys)", propertyNames(def("learn")), learnKeys},
		{"route (routeKeys)", propertyNames(def("route")), routeKeys},
		{"field (fieldKeys)", propertyNames(def("field")), fieldKeys},
		{"errorRule (ruleKeys)", propertyNames(def("errorRule")), ruleKeys},
		{"match (matchKeys)", propertyNames(def("match")), matchKeys},
		{"catalog (catalogKeys)", propertyNames(cat), catalogKeys},
		{"route.method (methods)", strs(def("route")["properties"].(map[string]any)["method"].(map[string]any)["examples"]), methods},
		{"field.in (locations)", enumOf(def("field"), "in"), locations},
		{"field.format (Formats)", enumOf(def("field"), "format"), formatNames()},
		{"route.validate (modeChoices)", enumOf(def("route"), "validate"), modeChoices},
		{"bodyFormat (formatChoices)", strs(def("bodyFormat")["enum"]), formatChoices},
		{"policy (policyChoices)", strs(def("policy")["enum"]), policyChoices},
		{"enforcement (enforcementChoices)", strs(def("enforcement")["enum"]), enforcementChoices},
	} {
		want := tc.want
		if !strings.Contains(tc.where, ".") && !strings.HasPrefix(tc.where, "bodyFormat") && !strings.HasPrefix(tc.where, "policy") && !strings.HasPrefix(tc.where, "enforcement") {
			want = slices.Sorted(slices.Values(want)) // keys of a mapping: a set
		}
		if !slices.Equal(tc.got, want) {
			t.Errorf("%s:\n schema: %v\n loader: %v", tc.where, tc.got, tc.want)
		}
	}
	// Every mapping the loader checks rejects unknown keys in the schema too.
	for _, name := range []string{"limits", "learn", "route", "field", "errorRule", "match"} {
		if def(name)["additionalProperties"] != false {
			t.Errorf("definitions.%s: additionalProperties must be false, as the loader rejects unknown keys", name)
		}
	}
	if rf["additionalProperties"] != false || cat["additionalProperties"] != false {
		t.Error("the top level must reject unknown keys, as the loader does")
	}
}

func readSchemaDoc(tb testing.TB, file string) map[string]any {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	return doc
}

// propertyNames lists a schema's properties, sorted.
func propertyNames(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

func enumOf(schema map[string]any, prop string) []string {
	p := schema["properties"].(map[string]any)[prop].(map[string]any)
	return strs(p["enum"])
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
