package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Tool definitions: each route as an LLM tool whose input schema carries
// the constraints its fields declare, so that a model reads them before
// its first call instead of learning them from rejections.
//
// A field's schema states exactly what Field.Check accepts, with three
// deliberate exceptions, each stricter than the proxy and none more
// lenient:
//   - hidden values are accepted by the proxy but never exported;
//   - a query, path or header argument has its natural JSON type (integer
//     for format: integer), where the proxy takes the same value as text;
//   - a format's pattern leaves out what no regex of sensible size states:
//     an rfc3339 leap second at an offset other than zero, and an email
//     address at an IPv6 domain literal (see formatPatterns).
//
// An optional argument may be null, which the proxy reads as absent; a
// required one may not.
//
// Integers agree: format: integer takes 5.0 and 1e3 as "type": "integer"
// does. One gap remains that JSON Schema cannot state: an integer beyond
// 64 bits, or beyond 2^53 written with a fraction or exponent, passes
// "type": "integer" but not format: integer.

// JSONSchemaDraft is the dialect of the schemas InputSchema builds.
const JSONSchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// ToolFormats are the shapes MarshalTools writes, in the order usage lists
// them:
//   - jsonschema: an object mapping each tool name to its input schema,
//     each with $schema and the tool's description;
//   - openai: the Chat Completions tools list,
//     [{"type": "function", "function": {"name", "description", "parameters"}}];
//   - openai-strict: the same list for OpenAI's strict mode, "strict": true
//     (see Schema.strictMembers);
//   - anthropic: the Messages API tools list, [{"name", "description", "input_schema"}];
//   - mcp: an MCP tools/list result, {"tools": [{"name", "description", "inputSchema"}]}.
var ToolFormats = []string{"jsonschema", "openai", "openai-strict", "anthropic", "mcp"}

// Tool is a route as an LLM tool definition.
type Tool struct {
	// Name is the route's name.
	Name string
	// Description is the route's own description, when it has one, then
	// "METHOD path", then what a rule says must be called first, when one
	// names a next call.
	Description string
	Input       *Schema
}

// Schema is the JSON Schema (draft 2020-12) of one tool's arguments: an
// object with one property per argument, in declared order. It marshals
// deterministically, for golden files.
type Schema struct {
	Properties []*Property
	// Required names the required arguments, in declared order.
	Required []string
	// Closed says no other argument is taken: an XML body holds only the
	// declared elements.
	Closed bool
}

// Property is the JSON Schema of one argument. It marshals its members in
// the order they are declared here, zero-valued ones left out.
type Property struct {
	// Name is the argument's name: the field's name, wherever the value
	// lives (path, query, header or body).
	Name string
	// Type is string, integer, number or boolean; empty for a body field
	// with no constraint, which may hold any JSON value.
	Type string
	// Null says the argument may be null, as an optional one may: the
	// proxy reads null as absent. A typed argument then has the type
	// [Type, "null"], and null among its enum's values.
	Null bool
	// Description is the field's own description, when it has one, then
	// the field's rule as messages state it, e.g. "the ticket's new state;
	// allowed values: open, pending, closed".
	Description string
	// Enum lists the permitted values, hidden ones left out.
	Enum []string
	// Format is the name JSON Schema gives the field's format, which most
	// validators take as a hint only; Pattern states it for them all.
	Format    string
	Pattern   string
	MinLength int
	MaxLength int
	Minimum   *float64
	Maximum   *float64
	// Examples holds the field's example, typed as the argument is.
	Examples []any
	// Not is set on a required body field with no constraint, which may
	// hold any value but null: {"type": "null"}.
	Not *Property
}

// MarshalJSON writes the property as a JSON Schema: "type", "description",
// "enum", "format", "pattern", "minLength", "maxLength", "minimum",
// "maximum", "examples" and "not", each when set.
func (p Property) MarshalJSON() ([]byte, error) {
	var o object
	switch {
	case p.Type != "" && p.Null:
		o = append(o, member{"type", []string{p.Type, "null"}})
	case p.Type != "":
		o = append(o, member{"type", p.Type})
	}
	if p.Description != "" {
		o = append(o, member{"description", p.Description})
	}
	if p.Enum != nil {
		enum := make([]any, len(p.Enum), len(p.Enum)+1)
		for i, v := range p.Enum {
			enum[i] = v
		}
		if p.Null {
			enum = append(enum, nil)
		}
		o = append(o, member{"enum", enum})
	}
	if p.Format != "" {
		o = append(o, member{"format", p.Format})
	}
	if p.Pattern != "" {
		o = append(o, member{"pattern", p.Pattern})
	}
	if p.MinLength != 0 {
		o = append(o, member{"minLength", p.MinLength})
	}
	if p.MaxLength != 0 {
		o = append(o, member{"maxLength", p.MaxLength})
	}
	if p.Minimum != nil {
		o = append(o, member{"minimum", *p.Minimum})
	}
	if p.Maximum != nil {
		o = append(o, member{"maximum", *p.Maximum})
	}
	if len(p.Examples) > 0 {
		o = append(o, member{"examples", p.Examples})
	}
	if p.Not != nil {
		o = append(o, member{"not", p.Not})
	}
	return o.MarshalJSON()
}

// Tools returns the file's routes as tool definitions, in file order.
func (c *Config) Tools() []Tool {
	tools := make([]Tool, len(c.Routes))
	for i, r := range c.Routes {
		tools[i] = r.Tool()
	}
	return tools
}

// Tool returns the route as a tool definition.
func (r *Route) Tool() Tool {
	return Tool{Name: r.Name, Description: r.toolDescription(), Input: r.InputSchema()}
}

// toolDescription states what the route does, when the file says, its
// method and path, then each call a rule names as the one to make first,
// in the rule's own words when they quote nothing from the failed request.
func (r *Route) toolDescription() string {
	var parts []string
	if r.Description != "" {
		parts = append(parts, strings.TrimRight(r.Description, "."))
	}
	parts = append(parts, r.Method+" "+plainTemplate(r.written()))
	for _, e := range r.Errors {
		if e.NextCall == nil || e.Futile != "" {
			continue
		}
		s := "May need " + e.NextCall.Signature() + " first"
		if e.Message != "" && !e.HasPlaceholders() {
			first, size := utf8.DecodeRuneInString(e.Message)
			s = string(unicode.ToUpper(first)) + e.Message[size:]
		}
		if !contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, ". ") + "."
}

// InputSchema returns the JSON Schema of the route's arguments: a property
// per declared field, named by the field's name, and one per path variable
// no field declares. Undeclared arguments are allowed, since the upstream
// may take more than the file declares.
func (r *Route) InputSchema() *Schema {
	s := &Schema{Closed: r.Body == EncodingXML}
	declared := map[string]bool{}
	for _, f := range r.Fields {
		if f.In == InPath {
			declared[f.Key] = true
		}
	}
	vars := templatePatterns(r.Path)
	for _, v := range vars {
		if declared[v.name] || r.Field(v.name) != nil {
			continue
		}
		s.Properties = append(s.Properties, &Property{Name: v.name, Type: "string", Pattern: v.pattern})
		s.Required = append(s.Required, v.name)
	}
	for _, f := range r.Fields {
		p := f.property()
		if f.In == InPath && p.Type == "string" && p.Pattern == "" && p.Enum == nil && p.Format == "" {
			for _, v := range vars {
				if v.name == f.Key {
					p.Pattern = v.pattern
				}
			}
		}
		p.Null = !f.Required
		s.Properties = append(s.Properties, p)
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

// jsonFormats maps the named formats that JSON Schema also names.
var jsonFormats = map[string]string{"rfc3339-utc": "date-time", "rfc3339": "date-time", "date": "date", "uuid": "uuid", "email": "email"}

// formatPatterns state each string format as a pattern, exported beside
// "format", which JSON Schema makes an annotation that most validators do
// not check: with the pattern, any validator refuses what the proxy
// refuses. Each accepts exactly what the format's check accepts but for
// the two exceptions noted, where it is stricter; "date-time" alone would
// also take an offset for rfc3339-utc.
//
// JSON Schema reads a pattern as ECMA-262, the proxy's checks are Go's:
// the patterns keep to what both read alike (literals, classes of
// literals and \xHH, plain groups, counted repeats, ^ and $), never \d,
// \s, \w, . or flags.
var formatPatterns = map[string]string{
	"rfc3339-utc": `^` + datePattern + `T` + timePattern + `Z$`,
	// A leap second must end a UTC day, which at an offset other than zero
	// ties the time written to the offset, past what a regex can state in
	// a sensible size: the pattern takes one at offset zero only.
	"rfc3339": `^` + datePattern + `[Tt](` + timePattern + `([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])|23:59:60(\.[0-9]+)?([Zz]|[+-]00:00))$`,
	"date":    `^` + datePattern + `$`,
	"uuid":    `^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$`,
	// net/mail also takes an IPv6 domain literal, written bare ([::1])
	// where RFC 5321 writes [IPv6:::1]; the pattern takes IPv4 ones only.
	"email": `^` + dotAtom + `@(` + dotAtom + `|\[` + octet + `(\.` + octet + `){3}\])$`,
}

const (
	// datePattern is a calendar date, YYYY-MM-DD, as time.Parse takes it:
	// 29 February in leap years only, those divisible by 4 and not by 100
	// unless by 400 (0000 among them).
	datePattern = `([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))` +
		`|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)`
	// timePattern is a time of day with any fraction of a second.
	timePattern = `([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?`
	// dotAtom is an RFC 5322 dot-atom as net/mail reads it: runs of
	// printable ASCII but the specials, or of any character past ASCII,
	// joined by single dots.
	dotAtom = `[^\x00-\x20\x7F()<>\[\]:;@\\,".]+(\.[^\x00-\x20\x7F()<>\[\]:;@\\,".]+)*`
	// octet is an IPv4 address's decimal octet, without a leading zero, as
	// net.ParseIP takes it.
	octet = `(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])`
)

// property is the field's schema. An enum or catalog is exported whole,
// however costly it is to list in a message: a schema is read once per
// session, not once per error.
func (f *Field) property() *Property {
	p := &Property{Name: f.Name}
	switch {
	case f.Enum != nil || f.Format != nil || f.Pattern != nil || f.MaxLength > 0 || f.MinLength > 0:
		p.Description = f.Rule
	case f.Lookup != nil:
		p.Description = lookupHint(f)
	}
	if f.Description != "" && p.Description != "" {
		p.Description = strings.TrimRight(f.Description, ".") + "; " + p.Description
	} else if f.Description != "" {
		p.Description = f.Description
	}
	switch {
	case f.Enum != nil:
		p.Type = "string"
		p.Enum = f.Enum
	case f.Format != nil:
		switch f.Format.Kind {
		case gjson.True:
			p.Type = "boolean"
		case gjson.Number:
			p.Type = f.Format.Name
			p.Minimum, p.Maximum = f.Min, f.Max
			if n, err := strconv.ParseFloat(f.Example, 64); err == nil {
				if f.Format.Name == "integer" && n == float64(int64(n)) {
					p.Examples = []any{int64(n)}
				} else {
					p.Examples = []any{n}
				}
			}
		default:
			p.Type = "string"
			p.Format = jsonFormats[f.Format.Name]
			p.Pattern = formatPatterns[f.Format.Name]
			p.Examples = []any{f.Example}
		}
	case f.Pattern != nil:
		p.Type = "string"
		p.Pattern = f.Pattern.String()
		p.Examples = []any{f.Example}
	case f.MaxLength > 0 || f.MinLength > 0 || f.In != InBody:
		p.Type = "string" // free text, or any value that arrives as text
	case f.Required:
		p.Not = &Property{Type: "null"}
	}
	if f.Format == nil {
		p.MinLength, p.MaxLength = f.MinLength, f.MaxLength
	}
	return p
}

// plainTemplate drops the regexes of a template's variables, which the
// arguments' patterns state: /events/{event_id:[0-9]+} becomes
// /events/{event_id}.
func plainTemplate(tpl string) string {
	return fillTemplate(tpl, func(name, _ string) string { return "{" + name + "}" })
}

// fillTemplate replaces each variable of a mux path template with what
// fill returns for its name and pattern ("" when it has none).
func fillTemplate(tpl string, fill func(name, pattern string) string) string {
	var b strings.Builder
	depth, start := 0, 0
	for i := 0; i < len(tpl); i++ {
		switch c := tpl[i]; {
		case c == '{':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case c == '}':
			if depth--; depth == 0 {
				name, pattern, _ := strings.Cut(tpl[start:i], ":")
				b.WriteString(fill(strings.TrimSpace(name), pattern))
			}
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// PathVariable is a variable of a route's path template.
type PathVariable struct {
	Name string
	// Pattern is the variable's regex, anchored as mux matches it, or ""
	// when the template gives none and mux takes one or more characters
	// other than a slash.
	Pattern string
}

// PathVariables returns the variables of the route's path template, in
// the order the template names them.
func (r *Route) PathVariables() []PathVariable {
	vars := templatePatterns(r.Path)
	out := make([]PathVariable, len(vars))
	for i, v := range vars {
		out[i] = PathVariable{Name: v.name, Pattern: v.pattern}
	}
	return out
}

// ExpandPath fills the route's path template, as the file writes it, with
// values, each already escaped for a URL path: /tickets/{ticket_id} with
// ticket_id T-8841 is /tickets/T-8841, and /label/foo%20bar/{id} keeps its
// %20. A variable values lacks is left empty.
func (r *Route) ExpandPath(values map[string]string) string {
	return fillTemplate(r.written(), func(name, _ string) string { return values[name] })
}

// templateVar is a variable of a path template: its name, trimmed, as
// written (raw), and its pattern.
type templateVar struct{ name, raw, pattern string }

// templatePatterns returns the variables of a mux path template, each with
// its regex anchored as mux matches it, or "" when it has none.
func templatePatterns(tpl string) []templateVar {
	var vars []templateVar
	depth, start := 0, 0
	for i := 0; i < len(tpl); i++ {
		switch tpl[i] {
		case '{':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case '}':
			depth--
			if depth == 0 {
				name, re, ok := strings.Cut(tpl[start:i], ":")
				v := templateVar{name: strings.TrimSpace(name), raw: name}
				if ok {
					v.pattern = "^(?:" + re + ")$"
				}
				vars = append(vars, v)
			}
		}
	}
	return vars
}

// MarshalJSON writes the schema as {"type": "object", "properties",
// "required", "additionalProperties"}: true, but for a closed one.
func (s *Schema) MarshalJSON() ([]byte, error) { return marshal(s.members()) }

func (s *Schema) members() object {
	props := make(object, len(s.Properties))
	for i, p := range s.Properties {
		props[i] = member{p.Name, p}
	}
	o := object{{"type", "object"}, {"properties", props}}
	if len(s.Required) > 0 {
		o = append(o, member{"required", s.Required})
	}
	return append(o, member{"additionalProperties", !s.Closed})
}

// strictMembers writes the schema in the subset of JSON Schema OpenAI's
// strict mode takes (the Structured Outputs guide, "Supported schemas"):
// every argument is listed in required, an optional one as a union with
// null, which the proxy reads as absent; no undeclared argument is allowed;
// every property has a type, a body field with no constraint a string,
// number or boolean; and keywords strict mode does not support (examples,
// maxLength, not) are left out, the description stating their rule.
func (s *Schema) strictMembers() object {
	props := make(object, len(s.Properties))
	names := make([]string, len(s.Properties))
	for i, p := range s.Properties {
		props[i] = member{p.Name, p.strictMembers(contains(s.Required, p.Name))}
		names[i] = p.Name
	}
	return object{{"type", "object"}, {"properties", props}, {"required", names}, {"additionalProperties", false}}
}

// strictMembers writes the property for strict mode; see
// Schema.strictMembers.
func (p *Property) strictMembers(required bool) object {
	var o object
	switch {
	case p.Type != "" && required:
		o = append(o, member{"type", p.Type})
	case p.Type != "":
		o = append(o, member{"type", []string{p.Type, "null"}})
	default:
		// Any value: strict mode cannot state an object or array of
		// unknown members, so the schema is stricter than the proxy.
		anyOf := []object{{{"type", "string"}}, {{"type", "number"}}, {{"type", "boolean"}}}
		if !required {
			anyOf = append(anyOf, object{{"type", "null"}})
		}
		o = append(o, member{"anyOf", anyOf})
	}
	if p.Description != "" {
		o = append(o, member{"description", p.Description})
	}
	if p.Enum != nil {
		enum := make([]any, len(p.Enum), len(p.Enum)+1)
		for i, v := range p.Enum {
			enum[i] = v
		}
		if !required {
			enum = append(enum, nil)
		}
		o = append(o, member{"enum", enum})
	}
	if p.Format != "" {
		o = append(o, member{"format", p.Format})
	}
	if p.Pattern != "" {
		o = append(o, member{"pattern", p.Pattern})
	}
	if p.Minimum != nil {
		o = append(o, member{"minimum", *p.Minimum})
	}
	if p.Maximum != nil {
		o = append(o, member{"maximum", *p.Maximum})
	}
	return o
}

// strictLimits reports a tool past the limits OpenAI's strict mode sets on
// one schema: 5000 properties, 1000 enum values, 120,000 characters of
// property names and enum values, and 15,000 characters for an enum of
// more than 250 values.
func (t Tool) strictLimits() error {
	values, chars := 0, 0
	for _, p := range t.Input.Properties {
		chars += len(p.Name)
		n := 0
		for _, v := range p.Enum {
			n += len(v)
		}
		if len(p.Enum) > 250 && n > 15000 {
			return fmt.Errorf("tool %s: argument %s lists %d values of %d characters, past the 15,000 OpenAI's strict mode takes for an enum of more than 250; use --format openai", t.Name, p.Name, len(p.Enum), n)
		}
		values += len(p.Enum)
		chars += n
	}
	switch {
	case len(t.Input.Properties) > 5000:
		return fmt.Errorf("tool %s: %d arguments, past the 5000 properties OpenAI's strict mode takes; use --format openai", t.Name, len(t.Input.Properties))
	case values > 1000:
		return fmt.Errorf("tool %s: %d enum values, past the 1000 OpenAI's strict mode takes in one schema; use --format openai", t.Name, values)
	case chars > 120000:
		return fmt.Errorf("tool %s: %d characters of argument names and enum values, past the 120,000 OpenAI's strict mode takes; use --format openai", t.Name, chars)
	}
	return nil
}

// MarshalTools writes the file's tools, indented, in one of ToolFormats.
func (c *Config) MarshalTools(format string) ([]byte, error) {
	tools := c.Tools()
	var doc any
	switch format {
	case "jsonschema":
		o := make(object, len(tools))
		for i, t := range tools {
			head := object{{"$schema", JSONSchemaDraft}, {"description", t.Description}}
			o[i] = member{t.Name, append(head, t.Input.members()...)}
		}
		doc = o
	case "openai":
		list := make([]object, len(tools))
		for i, t := range tools {
			list[i] = object{{"type", "function"},
				{"function", object{{"name", t.Name}, {"description", t.Description}, {"parameters", t.Input}}}}
		}
		doc = list
	case "openai-strict":
		list := make([]object, len(tools))
		for i, t := range tools {
			if err := t.strictLimits(); err != nil {
				return nil, err
			}
			list[i] = object{{"type", "function"}, {"function", object{{"name", t.Name}, {"description", t.Description},
				{"strict", true}, {"parameters", t.Input.strictMembers()}}}}
		}
		doc = list
	case "anthropic":
		list := make([]object, len(tools))
		for i, t := range tools {
			list[i] = object{{"name", t.Name}, {"description", t.Description}, {"input_schema", t.Input}}
		}
		doc = list
	case "mcp":
		list := make([]object, len(tools))
		for i, t := range tools {
			list[i] = object{{"name", t.Name}, {"description", t.Description}, {"inputSchema", t.Input}}
		}
		doc = object{{"tools", list}}
	default:
		return nil, fmt.Errorf("unknown tool format %q; formats: %s", format, strings.Join(ToolFormats, ", "))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so that a pattern's < and
// > stay legible.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
