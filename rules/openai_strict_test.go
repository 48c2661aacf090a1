package rules_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// OpenAI's strict mode takes a subset of JSON Schema, documented under
// "Supported schemas" in the Structured Outputs guide
// (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas)
// and, for the function itself, in the Chat Completions reference
// (tools[].function: name, description, parameters, strict). checkStrict
// states each rule it checks with the words of those pages.

// strictKeywords are the keywords the guide names as supported: "type"
// with the types String, Number, Boolean, Integer, Object, Array, Enum and
// anyOf; for strings pattern and format; for numbers multipleOf, maximum,
// exclusiveMaximum, minimum and exclusiveMinimum; for arrays minItems and
// maxItems; objects with properties, required and additionalProperties;
// definitions ($defs, $ref); and description. Anything else, e.g.
// examples, maxLength or not, is refused: "If you turn on Structured
// Outputs by supplying strict: true and call the API with an unsupported
// JSON Schema, you will receive an error."
var strictKeywords = []string{"type", "description", "enum", "const", "anyOf", "properties", "required",
	"additionalProperties", "items", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
	"minimum", "exclusiveMinimum", "minItems", "maxItems", "$defs", "$ref"}

// strictFormats: "format — Predefined formats for strings. Currently
// supported: date-time, time, date, duration, email, hostname, ipv4, ipv6,
// uuid".
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

var strictTypes = []string{"string", "number", "boolean", "integer", "object", "array", "null"}

// functionName: "Must be a-z, A-Z, 0-9, or contain underscores and dashes,
// with a maximum length of 64."
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// strictTotals are what the limits of the guide count over one schema.
type strictTotals struct {
	properties, enumValues, stringLength int
}

// checkStrict returns what in an openai tools list strict mode refuses,
// one line per problem.
func checkStrict(doc []byte) []string {
	var tools []map[string]any
	if err := json.Unmarshal(doc, &tools); err != nil {
		return []string{"not a JSON list of tools: " + err.Error()}
	}
	var out []string
	for i, tool := range tools {
		fn, _ := tool["function"].(map[string]any)
		name, _ := fn["name"].(string)
		at := fmt.Sprintf("tools[%d] %s", i, name)
		if tool["type"] != "function" {
			out = append(out, at+`: type is not "function"`)
		}
		if !functionName.MatchString(name) {
			out = append(out, at+": the name is not 1 to 64 of a-z, A-Z, 0-9, _ and -")
		}
		// "Structured Outputs ... by supplying strict: true"
		if fn["strict"] != true {
			out = append(out, at+": no \"strict\": true")
		}
		params, _ := fn["parameters"].(map[string]any)
		// "the root level object of a schema must be an object, and not use anyOf"
		if params["type"] != "object" || params["anyOf"] != nil {
			out = append(out, at+": parameters: the root must be an object, not anyOf")
		}
		var totals strictTotals
		out = append(out, checkStrictSchema(at+": parameters", params, 1, &totals)...)
		// "A schema may have up to 5000 object properties total, with up
		// to 10 levels of nesting."
		if totals.properties > 5000 {
			out = append(out, fmt.Sprintf("%s: %d object properties, past 5000", at, totals.properties))
		}
		// "A schema may have up to 1000 enum values across all enum properties."
		if totals.enumValues > 1000 {
			out = append(out, fmt.Sprintf("%s: %d enum values, past 1000", at, totals.enumValues))
		}
		// "total string length of all property names, definition names,
		// enum values, and const values cannot exceed 120,000 characters"
		if totals.stringLength > 120000 {
			out = append(out, fmt.Sprintf("%s: %d characters of names and values, past 120,000", at, totals.stringLength))
		}
	}
	return out
}

func checkStrictSchema(at string, s map[string]any, depth int, totals *strictTotals) []string {
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(strictKeywords, k) {
			out = append(out, fmt.Sprintf("%s: keyword %q is not supported", at, k))
		}
	}
	if depth > 10 {
		out = append(out, at+": nested past 10 levels")
	}
	// Each schema says its type ("Supported types"), or is an anyOf
	// whose "nested schemas must each be a valid JSON Schema per this
	// subset", or a $ref to a definition.
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		// "emulate an optional parameter by using a union type with null"
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
		if len(types) != 2 || !slices.Contains(types, "null") {
			out = append(out, fmt.Sprintf("%s: type %v is a union other than one type with null", at, t))
		}
	case nil:
		if s["anyOf"] == nil && s["$ref"] == nil {
			out = append(out, at+": no type")
		}
	default:
		out = append(out, fmt.Sprintf("%s: type %v is neither a name nor a list", at, t))
	}
	for _, t := range types {
		if !slices.Contains(strictTypes, t) {
			out = append(out, fmt.Sprintf("%s: type %q is not supported", at, t))
		}
	}
	if f, ok := s["format"].(string); ok && !slices.Contains(strictFormats, f) {
		out = append(out, fmt.Sprintf("%s: format %q is not supported", at, f))
	}
	if enum, ok := s["enum"].([]any); ok {
		totals.enumValues += len(enum)
		n := 0
		for _, v := range enum {
			if v, ok := v.(string); ok {
				n += len(v)
			}
		}
		totals.stringLength += n
		// "For a single enum property with string values, the total
		// string length of all enum values cannot exceed 15,000
		// characters when there are more than 250 enum values."
		if len(enum) > 250 && n > 15000 {
			out = append(out, fmt.Sprintf("%s: %d enum values of %d characters, past 15,000", at, len(enum), n))
		}
	}
	if slices.Contains(types, "object") {
		// "additionalProperties: false must always be set in objects"
		if s["additionalProperties"] != false {
			out = append(out, at+": additionalProperties is not false")
		}
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		if list, ok := s["required"].([]any); ok {
			for _, r := range list {
				required[fmt.Sprint(r)] = true
			}
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			totals.properties++
			totals.stringLength += len(name)
			// "all fields or function parameters must be specified as required"
			if !required[name] {
				out = append(out, fmt.Sprintf("%s: property %s is not in required", at, name))
			}
			p, _ := props[name].(map[string]any)
			out = append(out, checkStrictSchema(at+"."+name, p, depth+1, totals)...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, checkStrictSchema(at+"[]", items, depth+1, totals)...)
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		for i, sub := range anyOf {
			sub, _ := sub.(map[string]any)
			out = append(out, checkStrictSchema(fmt.Sprintf("%s.anyOf[%d]", at, i), sub, depth, totals)...)
		}
	}
	return out
}

// admitsNull reports whether a strict property schema takes null: the
// type union with null, or an anyOf with a null member.
func admitsNull(p map[string]any) bool {
	if t, ok := p["type"].([]any); ok && slices.Contains(t, any("null")) {
		return true
	}
	if anyOf, ok := p["anyOf"].([]any); ok {
		for _, sub := range anyOf {
			if sub, ok := sub.(map[string]any); ok && sub["type"] == "null" {
				return true
			}
		}
	}
	return false
}

// anyValueFields declares body fields with no constraint, required and not,
// which the loose formats export with no type.
const anyValueFields = `routes:
  tag_item:
    method: POST
    path: /items/{item_id}/tags
    fields:
      label: {required: true}
      weight:
      note: {max_length: 20}
`

// TestOpenAIStrictSchema exports every shipped rule file as openai-strict
// and wants nothing strict mode refuses; the same checker finds the
// problems of the openai format, so that it is known to see them. Each
// argument the route does not require admits null, which the proxy reads as
// absent, and each one it requires does not.
func TestOpenAIStrictSchema(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	cfgs := map[string]*rules.Config{"any-value fields": mustParse(t, anyValueFields)}
	for _, file := range files {
		cfgs[filepath.Base(file)] = mustLoad(t, file)
	}
	loose := 0
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range cfgs {
			if !yield(k) {
				return
			}
		}
	}) {
		cfg := cfgs[name]
		t.Run(name, func(t *testing.T) {
			openai, err := cfg.MarshalTools("openai")
			if err != nil {
				t.Fatal(err)
			}
			loose += len(checkStrict(openai))
			doc, err := cfg.MarshalTools("openai-strict")
			if err != nil {
				t.Fatal(err)
			}
			if problems := checkStrict(doc); len(problems) > 0 {
				t.Errorf("strict mode refuses:\n%s", strings.Join(problems, "\n"))
			}
			schemas := toolSchemas(t, "openai-strict", doc)
			for i, r := range cfg.Routes {
				props, _ := schemas[i]["properties"].(map[string]any)
				in := r.InputSchema()
				if len(props) != len(in.Properties) {
					t.Errorf("%s: %d properties; the route has %d arguments", r.Name, len(props), len(in.Properties))
				}
				for _, p := range in.Properties {
					sp, ok := props[p.Name].(map[string]any)
					if !ok {
						t.Errorf("%s: argument %s is missing", r.Name, p.Name)
						continue
					}
					if want := !slices.Contains(in.Required, p.Name); admitsNull(sp) != want {
						t.Errorf("%s.%s: admits null: %t; want %t (optional: %t)", r.Name, p.Name, !want, want, want)
					}
				}
			}
		})
	}
	if loose == 0 {
		t.Error("the checker finds nothing wrong with the openai format, so it cannot tell strict output from loose")
	}
	t.Run("the openai format, for the record", func(t *testing.T) {
		doc, _ := cfgs["any-value fields"].MarshalTools("openai")
		want := []string{
			`tools[0] tag_item: no "strict": true`,
			`tools[0] tag_item: parameters.label: keyword "not" is not supported`,
			`tools[0] tag_item: parameters.label: no type`,
			`tools[0] tag_item: parameters.note: keyword "maxLength" is not supported`,
			`tools[0] tag_item: parameters.weight: no type`,
			`tools[0] tag_item: parameters: additionalProperties is not false`,
			`tools[0] tag_item: parameters: property note is not in required`,
			`tools[0] tag_item: parameters: property weight is not in required`,
		}
		got := checkStrict(doc)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("checkStrict(openai):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
