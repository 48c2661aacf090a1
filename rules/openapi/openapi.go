// Package openapi writes starter rule files from OpenAPI 3.0 and 3.1
// documents and Swagger 2.0 ones: one route per operation, named by its
// operationId, under the path of the spec's server, with the fields its
// parameters and JSON request body declare, named as the API spells its
// keys. Error rules are left to the author, with the error responses the
// spec documents as hints.
package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/rules/rulefile"
)

// Rules is a rule file written from a spec.
type Rules struct {
	Text           []byte
	Routes, Fields int
}

// Import loads an OpenAPI 3.0 or 3.1 document, or a Swagger 2.0 one, which
// kin-openapi converts to OpenAPI 3.0 first, and writes a starter rule file
// for it. name is the spec as messages and the file's header name it.
func Import(name string, data []byte) (*Rules, error) {
	root, swagger, err := specVersion(name, data)
	if err != nil {
		return nil, err
	}
	var doc *openapi3.T
	kind := ""
	if swagger != nil {
		kind = "Swagger " + swagger.Value
		doc, err = loadSwagger(name, data, root, swagger)
	} else {
		loader := openapi3.NewLoader()
		loader.IncludeOrigin = true // positions: document order, and where a problem is
		doc, err = loader.LoadFromData(data)
		if err != nil {
			err = specLoadError(name, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if kind == "" {
		kind = "OpenAPI " + doc.OpenAPI
	}
	// Patterns are ECMA-262 in OpenAPI and RE2 in signpost: one RE2 cannot
	// compile is left out of the field with a comment, not an error. Examples
	// are checked against the fields they end up in.
	if err := doc.Validate(context.Background(), openapi3.DisableSchemaPatternValidation(), openapi3.DisableExamplesValidation()); err != nil {
		// A schema error goes on with the schema and value, over many lines.
		msg, _, _ := strings.Cut(err.Error(), "\nSchema:")
		msg, _, _ = strings.Cut(msg, "\nValue:")
		what := "OpenAPI document"
		if swagger != nil {
			what = "Swagger 2.0 document (as converted to OpenAPI 3.0)"
		}
		return nil, fmt.Errorf("%s%s: invalid %s: %s", name, specValidationPos(doc, err), what, flatten(msg))
	}
	ops := specOperations(doc)
	if len(ops) == 0 {
		return nil, fmt.Errorf("%s: the spec declares no operations (paths is empty), so there is nothing to import; add at least one, e.g. paths: {/pets: {get: ...}}", name)
	}
	w := &ruleWriter{}
	w.header(name, kind, swagger != nil, doc)
	names := map[string]bool{}
	for _, op := range ops {
		w.route(op, uniqueRouteName(importRouteName(op), names))
	}
	if w.routes == 0 {
		return nil, fmt.Errorf("%s: no operation of the spec can be a route, so there is nothing to import: %s", name, strings.Join(w.skipped, "; "))
	}
	return &Rules{Text: w.Bytes(), Routes: w.routes, Fields: w.fields}, nil
}

// specVersion reads the document's version key before kin-openapi does,
// which reads a Swagger 2.0 document as an OpenAPI 3 one missing every key.
// It returns the document as YAML read it and, for Swagger 2.0, its
// swagger key's value; root is nil for what YAML cannot read, whose
// problem kin-openapi's loader words with a position.
func specVersion(name string, data []byte) (root, swagger *yaml.Node, err error) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return nil, nil, nil
	}
	const accepted = "signpost imports OpenAPI 3.0 and 3.1 (openapi: 3.0.3) and Swagger 2.0 (swagger: \"2.0\")"
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		seen := "empty"
		if len(doc.Content) > 0 {
			seen = yamlNodeKind(doc.Content[0])
		}
		return nil, nil, fmt.Errorf("%s: not an OpenAPI document: its top level is %s, and must be a mapping of openapi (or swagger), info and paths; %s", name, seen, accepted)
	}
	var openapi *yaml.Node
	var keys []string
	for m, i := doc.Content[0], 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
		switch m.Content[i].Value {
		case "swagger":
			swagger = m.Content[i+1]
		case "openapi":
			openapi = m.Content[i+1]
		}
	}
	switch {
	case swagger != nil && openapi != nil:
		return nil, nil, fmt.Errorf("%s:%d:%d: the document has both swagger: %s and openapi: %s; keep the one key of the version it is written in", name, swagger.Line, swagger.Column, swagger.Value, openapi.Value)
	case swagger != nil && swagger.Value != "2.0":
		return nil, nil, fmt.Errorf("%s:%d:%d: swagger: %s is not supported; %s", name, swagger.Line, swagger.Column, swagger.Value, accepted)
	case swagger != nil:
		return &doc, swagger, nil
	case openapi == nil:
		if len(keys) > 6 {
			keys = append(keys[:6], "…")
		}
		return nil, nil, fmt.Errorf("%s: not an OpenAPI document: no openapi: or swagger: key names its version (its top-level keys: %s); %s", name, strings.Join(keys, ", "), accepted)
	case !strings.HasPrefix(openapi.Value, "3."):
		hint := ""
		if strings.HasPrefix(openapi.Value, "2") {
			hint = "; a 2.0 document names its version with swagger: \"2.0\""
		}
		return nil, nil, fmt.Errorf("%s:%d:%d: openapi: %s is not supported; %s%s", name, openapi.Line, openapi.Column, openapi.Value, accepted, hint)
	}
	return &doc, nil, nil
}

// yamlNodeKind names what a YAML node holds: "a list", "text".
func yamlNodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	if k := yamlKinds[strings.TrimPrefix(n.Tag, "!!")]; k != "" {
		return k
	}
	return "text"
}

// specYAMLLine finds the position in a YAML parser's message, e.g.
// "yaml: line 10: did not find expected ',' or '}'".
var specYAMLLine = regexp.MustCompile(`\bline (\d+)(?:, column (\d+))?: `)

// yamlConstruct matches the YAML decoder's complaint about a value of the
// wrong kind, which names Go types: "cannot construct !!seq into
// openapi3.PathItem".
var yamlConstruct = regexp.MustCompile("cannot construct !!(\\w+)( `[^`]*`)? into ([\\w.\\[\\]*]+)(?: in (/\\S*))?")

var yamlKinds = map[string]string{"seq": "a list", "map": "a mapping", "str": "text", "int": "a number",
	"float": "a number", "bool": "a boolean", "null": "null", "timestamp": "a timestamp", "binary": "binary data"}

// goTypeNoun names the part of an OpenAPI document a Go type decodes:
// openapi3.PathItem is "a path item", openapi3.T "the document".
func goTypeNoun(t string) string {
	switch t = strings.TrimLeft(t, "*"); {
	case t == "openapi3.T" || t == "openapi2.T":
		return "the document"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "openapi3.") || strings.HasPrefix(t, "openapi2."):
		name := strings.TrimSuffix(t[len("openapi3."):], "Ref")
		switch name {
		case "Parameters", "SchemaRefs", "Types":
			return "a list"
		case "Schemas", "Responses", "Paths":
			return "a mapping"
		}
		return withArticle(strings.ReplaceAll(toSnake(name), "_", " "))
	}
	return "a number"
}

// specLoadError words what kin-openapi's loader reported, with the position
// its YAML parser gave.
func specLoadError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "failed to unmarshal data: ")
	if i := strings.Index(msg, "yaml error: "); i >= 0 {
		msg = msg[i+len("yaml error: "):] // JSON is YAML, and the YAML parser gives a line
	}
	pos := ""
	if m := specYAMLLine.FindStringSubmatchIndex(msg); m != nil {
		pos = ":" + msg[m[2]:m[3]]
		if m[4] >= 0 {
			pos += ":" + msg[m[4]:m[5]]
		}
		msg = msg[:m[0]] + msg[m[1]:]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "construct errors: ")
	msg = yamlConstruct.ReplaceAllStringFunc(msg, func(m string) string {
		sub := yamlConstruct.FindStringSubmatch(m)
		at := ""
		if sub[4] != "" {
			at = " at " + sub[4]
		}
		return "found " + yamlKinds[sub[1]] + sub[2] + " where " + goTypeNoun(sub[3]) + " belongs" + at
	})
	msg = wordJSONUnmarshal(msg)
	var ext *openapi3.DisallowedExternalRefError
	if errors.As(err, &ext) {
		msg += "; signpost import reads one file: bundle the referenced files into it first"
	}
	return fmt.Errorf("%s%s: cannot load the spec: %s", name, pos, flatten(msg))
}

// specValidationPos returns ":line:col" for the operation, path or component
// a validation error names, when the loader recorded where it is.
func specValidationPos(doc *openapi3.T, err error) string {
	var path, method string
	var pe *openapi3.PathValidationError
	var oe *openapi3.OperationValidationError
	var ppe *openapi3.PathParametersError
	var ce *openapi3.ComponentValidationError
	switch {
	case errors.As(err, &ppe):
		path, method = ppe.Path, ppe.Method
	case errors.As(err, &pe):
		path = pe.Path
		if errors.As(err, &oe) {
			method = oe.Method
		}
	}
	var at *openapi3.Location
	switch item := doc.Paths.Value(path); {
	case item != nil:
		at = originKey(item.Origin)
		if op := item.GetOperation(method); method != "" && op != nil && originKey(op.Origin) != nil {
			at = originKey(op.Origin)
		}
	case errors.As(err, &ce) && ce.Section == "schema" && doc.Components != nil && doc.Components.Schemas[ce.Name] != nil:
		if s := doc.Components.Schemas[ce.Name]; s.Value != nil {
			at = originKey(s.Value.Origin)
		}
	}
	if at == nil || at.Line == 0 {
		return ""
	}
	return fmt.Sprintf(":%d:%d", at.Line, at.Column)
}

func originKey(o *openapi3.Origin) *openapi3.Location {
	if o == nil {
		return nil
	}
	return o.Key
}

// specOp is one method of one path.
type specOp struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

// importMethods is the order a path's operations become routes in. Signpost
// routes the first seven; the rest are listed as comments.
var importMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"}

// specOperations lists the document's operations: paths in document order (by
// the position kin-openapi's loader records; by name for a path it has no
// position for), then each path's methods in importMethods.
func specOperations(doc *openapi3.T) []specOp {
	if doc.Paths == nil {
		return nil
	}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(compareOrigin(pathOrigin(paths[a]), pathOrigin(paths[b])), strings.Compare(a, b))
	})
	var ops []specOp
	for _, p := range keys {
		item := paths[p]
		if item == nil {
			continue
		}
		for _, m := range importMethods {
			if op := item.GetOperation(m); op != nil {
				ops = append(ops, specOp{method: m, path: p, item: item, op: op})
			}
		}
	}
	return ops
}

func pathOrigin(item *openapi3.PathItem) *openapi3.Location {
	if item == nil {
		return nil
	}
	return originKey(item.Origin)
}

// compareOrigin orders two recorded positions; one without a position sorts
// after every one with.
func compareOrigin(a, b *openapi3.Location) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
}

// importRouteName is the operationId in snake_case, else the method and the
// path's words: GET /pets/{petId} is get_pets_pet_id.
func importRouteName(o specOp) string {
	if n := toSnake(o.op.OperationID); n != "" {
		if !isLowerASCII(n[0]) {
			n = strings.ToLower(o.method) + "_" + n // a route name starts with a letter
		}
		return n
	}
	return toSnake(strings.ToLower(o.method) + " " + o.path)
}

func isLowerASCII(c byte) bool { return 'a' <= c && c <= 'z' }

// uniqueRouteName returns name, or name_2, name_3... when taken, and takes it.
func uniqueRouteName(name string, taken map[string]bool) string {
	n := name
	for i := 2; taken[n]; i++ {
		n = name + "_" + strconv.Itoa(i)
	}
	taken[n] = true
	return n
}

// toSnake converts an identifier to snake_case: findPetsByStatus is
// find_pets_by_status, HTTPStatus is http_status, X-Api-Key is x_api_key.
// Anything but ASCII letters and digits separates words; "" when nothing
// is left.
func toSnake(s string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// aB starts a word, 2B too; in HTTPStatus the S does.
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return strings.Join(words, "_")
}

// importField is one field as the rule file will declare it.
type importField struct {
	name     string
	in       string // path, query, header or body
	key      string // where the value lives; the name when empty
	required bool
	enum     []string
	format   string
	min, max *float64
	pattern  string
	example  string
	maxLen   uint64
	// description is the spec's own, when short, for the tool's argument.
	description string
	// notes are comment lines written above the field.
	notes []string
	// what describes an unconstrained value, e.g. "an array", for the
	// description of a field with nothing to check.
	what string
	// wantPattern is a pattern the spec gives without an example that
	// matches it: written as a commented-out field for the author to finish.
	wantPattern string
}

// checks reports whether the field has anything for signpost to check.
// One that does not is declared with a description, so that its tool
// takes it and signpost check does not call it unused.
func (d *importField) checks() bool {
	return d.required || d.enum != nil || d.format != "" || d.pattern != "" || d.maxLen > 0
}

// importFields lists an operation's fields: its parameters (the path's first,
// an operation's own overriding one of the same name and location), then
// the JSON request body's properties in document order.
func importFields(o specOp) (fields []*importField, notes []string) {
	var params []*openapi3.Parameter
	for _, list := range []openapi3.Parameters{o.item.Parameters, o.op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			if i := slices.IndexFunc(params, func(q *openapi3.Parameter) bool { return q.Name == p.Name && q.In == p.In }); i >= 0 {
				params[i] = p
				continue
			}
			params = append(params, p)
		}
	}
	vars := specTemplateVars(o.path)
	for _, p := range params {
		switch {
		case p.In == "header" && slices.Contains([]string{"accept", "content-type", "authorization"}, strings.ToLower(p.Name)):
			continue // OpenAPI ignores these parameters
		case p.In == "cookie":
			notes = append(notes, fmt.Sprintf("cookie %s: signpost reads path, query, header and body values, not cookies", p.Name))
			continue
		case p.In == "path" && !slices.Contains(vars, p.Name):
			notes = append(notes, fmt.Sprintf("path parameter %s: the path %s has no {%s}", p.Name, o.path, p.Name))
			continue
		}
		d := &importField{name: p.Name, in: p.In, key: p.Name, required: p.Required || p.In == "path", description: shortText(p.Description)}
		schema := p.Schema
		if schema == nil {
			for _, mt := range specKeys(p.Content) {
				if p.Content[mt] != nil {
					schema = p.Content[mt].Schema
					break
				}
			}
		}
		var examples []any
		if p.Example != nil {
			examples = append(examples, p.Example)
		}
		for _, k := range specKeys(p.Examples) {
			if e := p.Examples[k]; e != nil && e.Value != nil {
				examples = append(examples, e.Value.Value)
			}
		}
		importConstrain(d, specSchema(schema), p.Name, examples)
		if s := specSchema(schema); d.description == "" && s != nil {
			d.description = shortText(s.Description)
		}
		fields = append(fields, d)
	}
	body, bodyNotes := importBodyFields(o)
	return append(fields, body...), append(notes, bodyNotes...)
}

// importBodyFields lists the top-level properties of a JSON request body, and
// those of an object property one level down, keyed by gjson path.
func importBodyFields(o specOp) ([]*importField, []string) {
	if o.op.RequestBody == nil || o.op.RequestBody.Value == nil || len(o.op.RequestBody.Value.Content) == 0 {
		return nil, nil
	}
	content := o.op.RequestBody.Value.Content
	mt := ""
	for _, k := range specKeys(content) {
		base, _, _ := strings.Cut(k, ";")
		base = strings.ToLower(strings.TrimSpace(base))
		if base == "application/json" {
			mt = k
			break
		}
		if mt == "" && strings.HasSuffix(base, "+json") {
			mt = k
		}
	}
	var notes []string
	if mt == "" {
		// Any media type, as a Swagger 2.0 document that names none in
		// consumes gets: a JSON body is one of them.
		for _, k := range []string{"*/*", "application/*"} {
			if content[k] != nil {
				mt = k
				notes = append(notes, fmt.Sprintf("body: the spec's media type is %s; its properties are declared as a JSON body's", k))
				break
			}
		}
	}
	if mt == "" {
		return nil, []string{fmt.Sprintf("body: %s is not JSON; signpost reads JSON request bodies only", strings.Join(specKeys(content), ", "))}
	}
	if content[mt] == nil {
		return nil, notes
	}
	s := specSchema(content[mt].Schema)
	if s == nil {
		return nil, notes
	}
	if t := specType(s); t != "object" && t != "" {
		return nil, append(notes, fmt.Sprintf("body: %s is %s, not an object; signpost import maps an object's properties", mt, withArticle(t)))
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		return nil, append(notes, fmt.Sprintf("body: %s is one of several schemas (oneOf/anyOf); declare the fields it needs by hand", mt))
	}
	var out []*importField
	for _, p := range specProperties(s) {
		if p.schema.ReadOnly {
			continue // a server-set property the caller does not send
		}
		if p.name == "" {
			notes = append(notes, "body: a property named \"\" is left out: a field's key cannot address it")
			continue
		}
		if sub := p.schema; specType(sub) == "object" && len(specProperties(sub)) > 0 {
			for _, c := range specProperties(sub) {
				if c.schema.ReadOnly {
					continue
				}
				if c.name == "" {
					notes = append(notes, fmt.Sprintf("%s: a property named \"\" is left out: a field's key cannot address it", p.name))
					continue
				}
				if specType(c.schema) == "object" && len(specProperties(c.schema)) > 0 {
					eg := bodyField(p.name, c.name, specProperties(c.schema)[0].name)
					notes = append(notes, fmt.Sprintf("%s.%s: an object nested two levels deep; signpost import maps one level, so declare what it needs by hand, e.g. %s: %s", p.name, c.name, rulefile.Scalar(eg.name), eg.flow()))
					continue
				}
				d := bodyField(p.name, c.name)
				d.required, d.description = p.required && c.required, shortText(c.schema.Description)
				importConstrain(d, c.schema, p.name+"."+c.name, nil)
				out = append(out, d)
			}
			continue
		}
		d := bodyField(p.name)
		d.required, d.description = p.required, shortText(p.schema.Description)
		importConstrain(d, p.schema, p.name, nil)
		out = append(out, d)
	}
	return out, notes
}

// bodyField is the field of a body property, reached from the top through
// the properties named by keys. Its name is the keys as the API spells
// them, joined by dots; its key is the gjson path to the value, written
// only where it differs from the name: when a property name holds a dot or
// another character gjson reads as syntax.
func bodyField(keys ...string) *importField {
	escaped := make([]string, len(keys))
	for i, k := range keys {
		escaped[i] = gjsonEscape(k)
	}
	return &importField{name: strings.Join(keys, "."), in: "body", key: strings.Join(escaped, ".")}
}

// specProperty is one property of an object schema.
type specProperty struct {
	name     string
	schema   *openapi3.Schema
	required bool
	at       *openapi3.Location
}

// specProperties lists an object schema's properties with those of its allOf
// members, each schema's in document order (by the position of the
// property's key, recorded by kin-openapi's loader; by name where it
// recorded none, as for a JSON document with duplicate keys). The first
// declaration of a name wins; required lists add up.
func specProperties(s *openapi3.Schema) []specProperty {
	var out []specProperty
	required := map[string]bool{}
	var walk func(s *openapi3.Schema, depth int)
	walk = func(s *openapi3.Schema, depth int) {
		if s == nil || depth > 8 {
			return
		}
		for _, r := range s.Required {
			required[r] = true
		}
		var own []specProperty
		for name, ref := range s.Properties {
			if ref == nil || ref.Value == nil || slices.ContainsFunc(out, func(p specProperty) bool { return p.name == name }) {
				continue
			}
			at := originKey(ref.Origin)
			if at == nil {
				at = originKey(ref.Value.Origin)
			}
			own = append(own, specProperty{name: name, schema: ref.Value, at: at})
		}
		slices.SortFunc(own, func(a, b specProperty) int {
			return cmp.Or(compareOrigin(a.at, b.at), strings.Compare(a.name, b.name))
		})
		out = append(out, own...)
		for _, m := range s.AllOf {
			walk(specSchema(m), depth+1)
		}
	}
	walk(s, 0)
	for i := range out {
		out[i].required = required[out[i].name]
	}
	return out
}

func specSchema(r *openapi3.SchemaRef) *openapi3.Schema {
	if r == nil {
		return nil
	}
	return r.Value
}

// specType is a schema's one type besides null ("string" for 3.1's
// [string, "null"]), else "" when it has none or several.
func specType(s *openapi3.Schema) string {
	if s == nil {
		return ""
	}
	var types []string
	if s.Type != nil {
		for _, t := range *s.Type {
			if t != "null" {
				types = append(types, t)
			}
		}
	}
	switch {
	case len(types) == 1:
		return types[0]
	case len(types) == 0 && len(s.Properties) > 0:
		return "object"
	case len(types) == 0 && s.Items != nil:
		return "array"
	}
	return ""
}

func withArticle(t string) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}

// openapiFormats maps an OpenAPI string format to the signpost format that
// accepts what it allows: date-time is RFC 3339 with any offset.
var openapiFormats = map[string]string{"date-time": "rfc3339", "date": "date", "uuid": "uuid", "email": "email"}

// importConstrain fills d's constraint from schema s: an enum of strings, else a
// format, else a pattern with an example, and max_length for free text.
// Signpost takes one of enum, format and pattern per field; what cannot
// be carried over is written as a note. label names the value in notes;
// examples are the parameter's own, tried before the schema's.
func importConstrain(d *importField, s *openapi3.Schema, label string, examples []any) {
	if s == nil {
		d.what = "no schema"
		return
	}
	t := specType(s)
	enum := s.Enum
	if s.Const != nil {
		enum = []any{s.Const}
	}
	if len(enum) > 0 {
		values, ok := specStringEnum(enum)
		if ok {
			d.enum = values
			return
		}
		d.notes = append(d.notes, fmt.Sprintf("%s: enum %s is not all text; signpost's enums are strings, so it is left out", label, jsonInline(enum)))
	}
	switch {
	case t == "integer" || t == "number":
		d.format = t
		d.min, d.max = importBounds(d, s, label, t == "integer")
		return
	case t == "boolean":
		d.format = "boolean"
		return
	case t == "string" && s.Format != "":
		if f, ok := openapiFormats[s.Format]; ok {
			d.format = f
			if s.Pattern != "" {
				d.notes = append(d.notes, fmt.Sprintf("%s: pattern %s left out: a field takes one of enum, format and pattern", label, jsonInline(s.Pattern)))
			}
			return
		}
		d.notes = append(d.notes, fmt.Sprintf("%s: format %s has no signpost equivalent and is not checked", label, s.Format))
	case t == "array" || t == "object":
		d.what = withArticle(t)
		return
	case t == "":
		d.what = "no single type"
		if s.Pattern == "" && s.MaxLength == nil {
			return
		}
	}
	if s.MaxLength != nil && *s.MaxLength > 0 && *s.MaxLength <= 1<<20 {
		d.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		importPattern(d, s, label, examples)
	}
}

// specStringEnum returns an enum's values when every one is a non-empty
// string; null, which a nullable 3.1 enum lists, is dropped.
func specStringEnum(enum []any) ([]string, bool) {
	var out []string
	for _, v := range enum {
		switch v := v.(type) {
		case nil:
		case string:
			if v == "" {
				return nil, false
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

// importBounds carries minimum and maximum over as min and max, which signpost
// treats as inclusive. An exclusive bound on an integer moves to the next
// integer inside; on a number it is left out with a note.
func importBounds(d *importField, s *openapi3.Schema, label string, integer bool) (lo, hi *float64) {
	lo, hi = s.Min, s.Max
	loEx, hiEx := s.ExclusiveMin.IsTrue(), s.ExclusiveMax.IsTrue()
	if v := s.ExclusiveMin.Value; v != nil { // 3.1: the bound itself
		lo, loEx = v, true
	}
	if v := s.ExclusiveMax.Value; v != nil {
		hi, hiEx = v, true
	}
	if lo != nil {
		switch v := *lo; {
		case integer && loEx:
			lo = float64Ptr(math.Floor(v) + 1)
		case integer:
			lo = float64Ptr(math.Ceil(v))
		case loEx:
			d.notes = append(d.notes, fmt.Sprintf("%s: the minimum %s is exclusive and signpost's min inclusive, so it is left out", label, numText(v)))
			lo = nil
		}
	}
	if hi != nil {
		switch v := *hi; {
		case integer && hiEx:
			hi = float64Ptr(math.Ceil(v) - 1)
		case integer:
			hi = float64Ptr(math.Floor(v))
		case hiEx:
			d.notes = append(d.notes, fmt.Sprintf("%s: the maximum %s is exclusive and signpost's max inclusive, so it is left out", label, numText(v)))
			hi = nil
		}
	}
	if lo != nil && hi != nil && *lo > *hi {
		d.notes = append(d.notes, fmt.Sprintf("%s: no value lies between the minimum and the maximum; the bounds are left out", label))
		return nil, nil
	}
	return lo, hi
}

func float64Ptr(f float64) *float64 { return &f }

func numText(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// importPattern carries a schema's pattern over when RE2 compiles it and the spec
// gives an example that matches: signpost shows the example beside the
// rule, and check refuses a pattern without one. Otherwise the pattern is
// a note saying what it needs.
func importPattern(d *importField, s *openapi3.Schema, label string, examples []any) {
	re, err := regexp.Compile(s.Pattern)
	if err != nil {
		d.notes = append(d.notes, fmt.Sprintf("%s: pattern %s is not RE2 (%s), so it is left out; rewrite it in RE2 with an example to check it", label, jsonInline(s.Pattern), strings.TrimPrefix(err.Error(), "error parsing regexp: ")))
		return
	}
	candidates := append(slices.Clip(examples), s.Example)
	candidates = append(candidates, s.Examples...)
	sawString := false
	for _, c := range candidates {
		e, ok := c.(string)
		if !ok || e == "" {
			continue
		}
		sawString = true
		if re.MatchString(e) && (d.maxLen == 0 || uint64(utf8.RuneCountInString(e)) <= d.maxLen) {
			d.pattern, d.example = s.Pattern, e
			return
		}
	}
	why := "the spec gives none"
	if sawString {
		why = "none the spec gives matches it"
	}
	d.notes = append(d.notes, fmt.Sprintf("%s: pattern %s needs an example, and %s; with one that matches, the field reads:", label, jsonInline(s.Pattern), why))
	d.wantPattern = s.Pattern
}

// gjsonEscape escapes a property name for a field's key, a gjson path
// that signpost reads with gjson and writes with sjson: every ASCII
// punctuation character but _ and - is escaped, so that a dot, a wildcard,
// a modifier's @, a leading : (sjson's numeric key) or a bracket that opens
// a multipath is read as part of the one name.
func gjsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)) && r != '_' && r != '-' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// specTemplateVars returns the variable names of a path template: {petId} is
// petId, and the {name:regex} of a mux template is name.
func specTemplateVars(tpl string) []string {
	var vars []string
	for rest := tpl; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return vars
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return vars
		}
		name, _, _ := strings.Cut(rest[i+1:i+j], ":")
		vars = append(vars, name)
		rest = rest[i+j+1:]
	}
}

// plainVarName is a path variable name a rule file's template takes.
var plainVarName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// ruleWriter accumulates the rule file.
type ruleWriter struct {
	rulefile.Writer
	routes, fields int
	first          bool     // no route written yet
	skipped        []string // operations left out, and why
	// base is the path of the spec's first server, which requests carry
	// before each operation's path: "" or "/v2". origin is its scheme and
	// host, the upstream; "" when it names none.
	base, origin string
}

// gap separates one route from the next with a blank line.
func (w *ruleWriter) gap() {
	if !w.first {
		w.Blank()
	}
	w.first = false
}

// comment writes text as one comment line at indent.
func (w *ruleWriter) comment(indent int, text string) {
	w.Comment(indent, flatten(text))
}

// header writes the file's opening comment and its upstream: the origin
// of the spec's first server, whose path the routes carry. swagger says the
// servers were made from a Swagger 2.0 document's host and basePath.
func (w *ruleWriter) header(name, kind string, swagger bool, doc *openapi3.T) {
	title, version := "an untitled API", ""
	if doc.Info != nil {
		title = cmp.Or(commentText(doc.Info.Title), title)
		version = commentText(doc.Info.Version)
	}
	w.comment(0, fmt.Sprintf("Starter rules for %s %s (%s), written by signpost import openapi", title, version, kind))
	w.comment(0, "from "+commentText(name)+".")
	w.Comment(0, "")
	w.comment(0, "One route per operation, with the fields its parameters and JSON body declare.")
	w.comment(0, "Error rules are left to you: under each route, a comment lists the error")
	w.comment(0, "responses the spec documents. Check the file with signpost check.")
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		w.Note(0, "upstream: the spec names no server; give the API's base URL here, e.g. upstream: https://api.example.com, or pass --upstream to signpost serve.")
	} else {
		srv := readServer(doc.Servers[0])
		w.base, w.origin = srv.base, srv.origin
		carry := ""
		if srv.base != "" {
			carry = fmt.Sprintf(" Requests carry its path, %s, and so do the routes below.", srv.base)
		}
		from, server := "the spec's first server", fmt.Sprintf("the spec's first server, %s,", jsonInline(doc.Servers[0].URL))
		if swagger {
			// openapi2conv made the servers of host, basePath and schemes.
			from, server = "the spec's host and basePath", fmt.Sprintf("the spec's basePath, %s,", jsonInline(doc.Servers[0].URL))
		}
		switch {
		case srv.origin != "" && srv.base != "":
			w.Note(0, fmt.Sprintf("The API is at %s (%s).%s The upstream is its origin alone: signpost puts an upstream's own path in front of every request's.", srv.url, from, carry))
			w.Line(0, "upstream: "+rulefile.BlockScalar(srv.origin))
		case srv.origin != "":
			w.Line(0, "upstream: "+rulefile.BlockScalar(srv.origin))
		default:
			eg := "https://api.example.com"
			if srv.host != "" {
				eg = "https://" + srv.host
			}
			w.Note(0, fmt.Sprintf("upstream: %s names no http(s) origin; give the API's here, e.g. upstream: %s, or pass --upstream to signpost serve.%s", server, eg, carry))
		}
		for _, n := range serversNotes(doc.Servers) {
			w.Note(0, n)
		}
	}
	w.Blank()
	w.Line(0, "routes:")
	w.first = true
}

// route writes one operation as a route. A route that would not load as
// written (a path signpost's router refuses, say) is written as comments
// naming the problem, so that the file as a whole still loads.
func (w *ruleWriter) route(o specOp, name string) {
	if routed := importMethods[:len(importMethods)-1]; !slices.Contains(routed, o.method) {
		why := fmt.Sprintf("signpost routes %s only", strings.Join(routed, ", "))
		w.skipped = append(w.skipped, o.method+" "+o.path+": "+why)
		w.gap()
		w.comment(2, fmt.Sprintf("%s %s is left out: %s.", o.method, o.path, why))
		return
	}
	r := ruleWriter{base: w.base, origin: w.origin}
	r.routeBody(o, name)
	if _, err := rules.Parse("route", append([]byte("routes:\n"), r.Bytes()...)); err != nil {
		var whys []string
		var ps rules.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				whys = append(whys, strings.TrimPrefix(p.Path+": ", ": ")+p.Message)
			}
		}
		w.skipped = append(w.skipped, o.method+" "+o.path+": "+strings.Join(whys, "; "))
		w.gap()
		w.comment(2, fmt.Sprintf("%s %s is left out: as imported, signpost check reports:", o.method, o.path))
		for _, why := range whys {
			w.Note(2, why)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(r.Bytes()), "\n"), "\n") {
			w.Inactive(0, l)
		}
		return
	}
	w.gap()
	w.Append(r.Bytes())
	w.routes++
	w.fields += r.fields
}

func (w *ruleWriter) routeBody(o specOp, name string) {
	path, renamed := o.path, map[string]string{}
	for _, v := range specTemplateVars(o.path) {
		if !plainVarName.MatchString(v) {
			nv := cmp.Or(toSnake(v), "var")
			if !isLowerASCII(nv[0]) {
				nv = "v_" + nv
			}
			for i := 2; slices.Contains(specTemplateVars(path), nv) || slices.Contains(specTemplateVars(o.path), nv); i++ {
				nv = cmp.Or(toSnake(v), "var") + "_" + strconv.Itoa(i)
			}
			path = strings.Replace(path, "{"+v+"}", "{"+nv+"}", 1)
			renamed[v] = nv
		}
	}
	// Requests carry the server's path before the operation's.
	base, serverNote := w.base, ""
	if servers := opServers(o); servers != nil && servers[0] != nil {
		srv := readServer(servers[0])
		base = srv.base
		if srv.origin != "" && srv.origin != w.origin {
			serverNote = fmt.Sprintf("servers: this operation is served at %s, not at the upstream; signpost forwards every route to the one upstream", srv.url)
		}
	}
	w.Line(2, name+":")
	w.Line(4, "method: "+o.method)
	w.Line(4, "path: "+rulefile.BlockScalar(base+path))
	if d := routeDescription(o.op); d != "" {
		w.Line(4, "description: "+rulefile.BlockScalar(d))
	}
	fields, notes := importFields(o)
	for v, nv := range renamed {
		notes = append(notes, fmt.Sprintf("path variable {%s} is written {%s}: signpost's variables are plain names; the route matches the same requests", v, nv))
	}
	slices.Sort(notes[len(notes)-len(renamed):])
	if serverNote != "" {
		notes = append([]string{serverNote}, notes...)
	}
	taken := map[string]bool{}
	var lines rulefile.Writer // the fields, at their indent
	for _, d := range fields {
		if nv, ok := renamed[d.key]; ok && d.in == "path" {
			d.key, d.name = nv, nv
		}
		if arg := argumentName(d.name); arg != d.name {
			// A field is a tool's argument, and model APIs take argument
			// names of letters, digits, _ . - only: the key keeps the
			// API's spelling.
			d.notes = append(d.notes, fmt.Sprintf("%s %s is named %s: a tool's argument names hold letters, digits and _ . - only", d.in, d.name, arg))
			d.name = arg
		}
		if taken[d.name] {
			// Field names are one per route; the API may use one key in
			// two places, a query parameter and a body property, say.
			was := d.name
			d.name = uniqueRouteName(d.in+"_"+d.name, taken)
			d.notes = append(d.notes, fmt.Sprintf("%s %s is named %s: another field of the route has the name %s", d.in, was, d.name, was))
		}
		taken[d.name] = true
		for _, n := range d.notes {
			lines.Note(6, n)
		}
		if d.wantPattern != "" {
			want := *d
			want.pattern, want.example = d.wantPattern, "<a value that matches>"
			lines.Inactive(6, rulefile.Scalar(d.name)+": "+want.flow())
		}
		if !d.checks() && d.description == "" {
			// Declared for the tool, which would otherwise lack it; the
			// description keeps signpost check from calling it unused.
			d.description = d.kind()
		}
		lines.Line(6, rulefile.Scalar(d.name)+": "+d.flow())
		w.fields++
	}
	for _, n := range notes {
		w.Note(4, n)
	}
	if w.fields > 0 {
		w.Line(4, "fields:")
	} else if lines.Len() > 0 {
		w.comment(4, "fields:")
	}
	w.Append(lines.Bytes())
	w.comment(4, "errors: add a rule per bare error this operation returns; see signpost explain.")
	errs := specErrorResponses(o.op)
	if len(errs) == 0 {
		w.comment(4, "The spec documents no error responses.")
		return
	}
	w.comment(4, "The spec documents:")
	for _, e := range errs {
		w.Comment(4, "  "+flatten(e))
	}
}

// flow renders the field's mapping in flow style, keys in a fixed order.
func (d *importField) flow() string {
	parts := []string{"in: " + d.in}
	if d.key != "" && d.key != d.name {
		parts = append(parts, "key: "+rulefile.Scalar(d.key))
	}
	if d.required && d.in != "path" { // a path variable is always required
		parts = append(parts, "required: true")
	}
	if d.enum != nil {
		vs := make([]string, len(d.enum))
		for i, v := range d.enum {
			vs[i] = rulefile.Scalar(v)
		}
		parts = append(parts, "enum: ["+strings.Join(vs, ", ")+"]")
	}
	if d.format != "" {
		parts = append(parts, "format: "+d.format)
	}
	if d.min != nil {
		parts = append(parts, "min: "+numText(*d.min))
	}
	if d.max != nil {
		parts = append(parts, "max: "+numText(*d.max))
	}
	if d.pattern != "" {
		parts = append(parts, "pattern: "+rulefile.Quoted(d.pattern), "example: "+rulefile.Scalar(d.example))
	}
	if d.maxLen > 0 {
		parts = append(parts, "max_length: "+strconv.FormatUint(d.maxLen, 10))
	}
	if d.description != "" {
		parts = append(parts, "description: "+rulefile.Scalar(d.description))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// kind says what value a field with nothing to check takes, for its
// description: "an array", "text", "any value".
func (d *importField) kind() string {
	switch {
	case strings.HasPrefix(d.what, "a"):
		return d.what
	case d.what != "":
		return "any value"
	}
	return "text"
}

// routeDescription is what the route's tool says it does: the operation's
// summary, then its description when short; else the first sentence of a
// long description, when short.
func routeDescription(op *openapi3.Operation) string {
	summary, desc := shortText(op.Summary), shortText(op.Description)
	if summary == "" && op.Summary != "" {
		summary = commentText(op.Summary) // cut, with an ellipsis
	}
	var parts []string
	for _, s := range []string{summary, desc} {
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		if first, _, ok := strings.Cut(flatten(op.Description), ". "); ok {
			parts = append(parts, shortText(first+"."))
		}
	}
	text := strings.Join(parts, " ")
	if len(parts) == 2 && !strings.HasSuffix(summary, ".") {
		text = summary + ". " + desc
	}
	if op.Deprecated {
		text = strings.TrimSpace("(deprecated) " + text)
	}
	return text
}

// shortText is s flattened to one line when it is short enough for a
// description (200 characters), else "".
func shortText(s string) string {
	s = flatten(s)
	if utf8.RuneCountInString(s) > 200 {
		return ""
	}
	return s
}

// specErrorResponses lists the documented error responses of an operation as
// "404: Pet not found": statuses from 400, the 4XX and 5XX ranges, and
// default, in that order.
func specErrorResponses(op *openapi3.Operation) []string {
	if op.Responses == nil {
		return nil
	}
	m := op.Responses.Map()
	var codes []string
	for code := range m {
		c := strings.ToUpper(code)
		if c == "DEFAULT" || c == "4XX" || c == "5XX" {
			codes = append(codes, code)
			continue
		}
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
			codes = append(codes, code)
		}
	}
	rank := func(c string) string {
		if strings.EqualFold(c, "default") {
			return "9"
		}
		return strings.ToUpper(c)
	}
	slices.SortFunc(codes, func(a, b string) int { return strings.Compare(rank(a), rank(b)) })
	out := make([]string, len(codes))
	for i, c := range codes {
		desc := ""
		if r := m[c]; r != nil && r.Value != nil && r.Value.Description != nil {
			desc = commentText(*r.Value.Description)
		}
		out[i] = strings.TrimSuffix(c+": "+desc, ": ")
	}
	return out
}

// flatten collapses runs of spaces, line breaks and control characters
// into single spaces.
func flatten(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// commentText is text's first line, flattened and cut at 100 characters,
// for a comment.
func commentText(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = flatten(s)
	if utf8.RuneCountInString(s) > 100 {
		s = string([]rune(s)[:99]) + "…"
	}
	return s
}

func specKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonInline renders a value for a note.
func jsonInline(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// argumentName returns name as a tool's argument may be named: at most 64
// letters, digits, '_', '.' and '-' (the names Anthropic's and OpenAI's
// tool APIs accept), every other run of characters one underscore
// (filter[status]: filter_status, match[]: match).
func argumentName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-':
			b.WriteByte(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	out := strings.TrimRight(b.String(), "_")
	if len(out) > 64 {
		out = out[:64]
	}
	if out == "" {
		return "value"
	}
	return out
}
