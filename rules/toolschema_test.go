package rules_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ instead of comparing with them")

// toolFiles are the rule files whose tool definitions are pinned by golden
// files in testdata/schema, with the formats pinned for each.
var toolFiles = []struct {
	file    string
	formats []string
}{
	{"../configs/tickets.yaml", rules.ToolFormats},
	{"../configs/addresses.yaml", rules.ToolFormats}, // a catalog of 249 values, one hidden
	{"testdata/formats.good.yaml", []string{"jsonschema"}},
	{"testdata/descriptions.good.yaml", []string{"mcp"}},
}

func TestToolsGolden(t *testing.T) {
	for _, tf := range toolFiles {
		cfg := mustLoad(t, tf.file)
		for _, format := range tf.formats {
			golden := filepath.Join("testdata", "schema", strings.TrimSuffix(filepath.Base(tf.file), ".yaml")+"."+format+".json")
			t.Run(filepath.Base(golden), func(t *testing.T) {
				got, err := cfg.MarshalTools(format)
				if err != nil {
					t.Fatal(err)
				}
				if again, _ := cfg.MarshalTools(format); !bytes.Equal(got, again) {
					t.Fatal("two marshals of the same rules differ")
				}
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./rules -run TestToolsGolden -update to write it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from MarshalTools(%q) (run with -update to accept):\n%s", golden, format, got)
				}
			})
		}
	}
}

func TestMarshalToolsUnknownFormat(t *testing.T) {
	cfg := mustLoad(t, "../configs/tickets.yaml")
	_, err := cfg.MarshalTools("gemini")
	if err == nil || !strings.Contains(err.Error(), `unknown tool format "gemini"; formats: jsonschema, openai, openai-strict, anthropic, mcp`) {
		t.Errorf("err = %v", err)
	}
}

// compileSchema compiles a JSON Schema given as Go data or JSON text, as
// draft 2020-12 with formats asserted.
func compileSchema(tb testing.TB, name string, schema any) *jsonschema.Schema {
	tb.Helper()
	raw, ok := schema.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(schema); err != nil {
			tb.Fatal(err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(name+".json", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile(name + ".json")
	if err != nil {
		tb.Fatalf("%s does not compile: %v\n%s", name, err, raw)
	}
	return s
}

func instance(tb testing.TB, text string) any {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		tb.Fatalf("%s: %v", text, err)
	}
	return v
}

// TestToolSchemasCompile reads every format's output back, finds each
// tool's input schema where that format keeps it, and compiles it; and
// checks each property's examples satisfy the property.
func TestToolSchemasCompile(t *testing.T) {
	files := []string{"../configs/tickets.yaml", "../configs/addresses.yaml", "../configs/bookings.yaml",
		"../configs/payments.yaml", "../configs/search.yaml", "testdata/formats.good.yaml", "testdata/merge.good.yaml"}
	for _, file := range files {
		cfg := mustLoad(t, file)
		for _, format := range rules.ToolFormats {
			out, err := cfg.MarshalTools(format)
			if err != nil {
				t.Fatal(err)
			}
			schemas := toolSchemas(t, format, out)
			if len(schemas) != len(cfg.Routes) {
				t.Fatalf("%s %s: %d schemas for %d routes", file, format, len(schemas), len(cfg.Routes))
			}
			for i, r := range cfg.Routes {
				name := filepath.Base(file) + "/" + format + "/" + r.Name
				s := schemas[i]
				if format == "jsonschema" && s["$schema"] != rules.JSONSchemaDraft {
					t.Errorf("%s: $schema = %v", name, s["$schema"])
				}
				// OpenAI's strict mode allows no undeclared argument.
				if s["type"] != "object" || s["additionalProperties"] != (format != "openai-strict") {
					t.Errorf("%s: want an object schema that allows undeclared arguments, except in openai-strict; got %v", name, s)
				}
				compileSchema(t, name, s)
			}
		}
		for _, r := range cfg.Routes {
			for _, p := range r.InputSchema().Properties {
				if len(p.Examples) == 0 {
					continue
				}
				ps := compileSchema(t, r.Name+"."+p.Name, p)
				for _, ex := range p.Examples {
					raw, _ := json.Marshal(ex)
					if err := ps.Validate(instance(t, string(raw))); err != nil {
						t.Errorf("%s: routes.%s.fields.%s: example %s fails its own schema: %v", file, r.Name, p.Name, raw, err)
					}
				}
			}
		}
	}
}

// toolSchemas returns the input schemas of a MarshalTools document, in
// tool order.
func toolSchemas(t *testing.T, format string, text []byte) []map[string]any {
	t.Helper()
	var doc any
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatalf("%s: not JSON: %v", format, err)
	}
	var out []map[string]any
	switch format {
	case "jsonschema":
		// A map forgets the order of the members; read it from the text.
		m := doc.(map[string]any)
		for _, name := range orderOfKeys(t, text) {
			out = append(out, m[name].(map[string]any))
		}
	case "openai", "openai-strict":
		for _, tool := range doc.([]any) {
			tool := tool.(map[string]any)
			if tool["type"] != "function" {
				t.Errorf("openai tool type = %v", tool["type"])
			}
			out = append(out, tool["function"].(map[string]any)["parameters"].(map[string]any))
		}
	case "anthropic":
		for _, tool := range doc.([]any) {
			out = append(out, tool.(map[string]any)["input_schema"].(map[string]any))
		}
	case "mcp":
		for _, tool := range doc.(map[string]any)["tools"].([]any) {
			out = append(out, tool.(map[string]any)["inputSchema"].(map[string]any))
		}
	}
	return out
}

// orderOfKeys reads the member names of a JSON object in order.
func orderOfKeys(t *testing.T, text []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(text))
	var keys []string
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	return keys
}

// proxyVerdict is what the proxy's field checks say of a call with these
// arguments, passed as a tool passes them: by field name, body fields as
// JSON values, the others as the text they become on the wire. It returns
// the first field at fault, or "".
func proxyVerdict(t *testing.T, r *rules.Route, args string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	for _, f := range r.Fields {
		var v gjson.Result
		if raw, ok := m[f.Name]; ok {
			v = onTheWire(f, gjson.ParseBytes(raw))
		}
		if !f.Check(v) {
			return f.Name
		}
	}
	return ""
}

// onTheWire is v as the proxy reads it for field f: a value outside the
// JSON body becomes text.
func onTheWire(f *rules.Field, v gjson.Result) gjson.Result {
	switch {
	case f.In == rules.InBody || v.Type == gjson.Null:
		return v
	case v.Type == gjson.String:
		return rules.Text(v.Str)
	}
	return rules.Text(v.Raw)
}

// TestToolSchemaAgreesWithProxy sends the same arguments to a route's
// exported schema and to the proxy's own checks, and wants the same
// verdict. Where the schema is stricter by design, the case says why.
func TestToolSchemaAgreesWithProxy(t *testing.T) {
	const ticket = `"title":"Export fails","status":"open","priority":"p1","customer_id":"C-1042"`
	long := strings.Repeat("x", 201)
	for _, tc := range []struct {
		file, route, name, args string
		accept                  bool   // the proxy's verdict
		stricter                string // why the schema rejects what the proxy accepts
	}{
		{"tickets", "create_ticket", "valid", `{` + ticket + `,"due_at":"2026-03-11T09:14:02Z"}`, true, ""},
		{"tickets", "create_ticket", "optional left out", `{` + ticket + `}`, true, ""},
		{"tickets", "create_ticket", "undeclared argument", `{` + ticket + `,"note":"from the agent"}`, true, ""},
		{"tickets", "create_ticket", "fractional seconds", `{` + ticket + `,"due_at":"2026-03-11T09:14:02.250Z"}`, true, ""},
		{"tickets", "create_ticket", "status OPEN", `{"title":"t","status":"OPEN","priority":"p1","customer_id":"C-1042"}`, false, ""},
		{"tickets", "create_ticket", "priority high", `{"title":"t","status":"open","priority":"high","customer_id":"C-1042"}`, false, ""},
		{"tickets", "create_ticket", "due_at next Friday", `{` + ticket + `,"due_at":"next Friday"}`, false, ""},
		{"tickets", "create_ticket", "due_at with an offset", `{` + ticket + `,"due_at":"2026-03-11T09:14:02+01:00"}`, false, ""},
		{"tickets", "create_ticket", "due_at February 30", `{` + ticket + `,"due_at":"2026-02-30T09:14:02Z"}`, false, ""},
		{"tickets", "create_ticket", "due_at a date", `{` + ticket + `,"due_at":"2026-03-11"}`, false, ""},
		{"tickets", "create_ticket", "customer_id acme", `{"title":"t","status":"open","priority":"p1","customer_id":"acme"}`, false, ""},
		{"tickets", "create_ticket", "missing title", `{"status":"open","priority":"p1","customer_id":"C-1042"}`, false, ""},
		{"tickets", "create_ticket", "title too long", `{"title":"` + long + `","status":"open","priority":"p1","customer_id":"C-1042"}`, false, ""},
		{"tickets", "create_ticket", "title a number", `{"title":42,"status":"open","priority":"p1","customer_id":"C-1042"}`, false, ""},
		{"tickets", "create_ticket", "status null", `{"title":"t","status":null,"priority":"p1","customer_id":"C-1042"}`, false, ""},
		{"tickets", "create_ticket", "due_at null", `{` + ticket + `,"due_at":null}`, true, ""},
		{"tickets", "create_ticket", "due_at lower-case z", `{` + ticket + `,"due_at":"2026-03-11T09:14:02z"}`, false, ""},
		{"tickets", "update_ticket", "status null", `{"ticket_id":"T-8841","status":null}`, true, ""},
		{"tickets", "update_ticket", "ticket_id null", `{"ticket_id":null,"status":"closed"}`, false, ""},
		{"tickets", "update_ticket", "valid", `{"ticket_id":"T-8841","status":"closed"}`, true, ""},
		{"tickets", "update_ticket", "path only", `{"ticket_id":"T-8841"}`, true, ""},
		{"tickets", "update_ticket", "ticket_id without prefix", `{"ticket_id":"8841","status":"closed"}`, false, ""},
		{"tickets", "update_ticket", "ticket_id missing", `{"status":"closed"}`, false, ""},
		{"tickets", "update_ticket", "status Closed", `{"ticket_id":"T-8841","status":"Closed"}`, false, ""},
		{"tickets", "search_customers", "valid", `{"query":"acme"}`, true, ""},
		{"tickets", "search_customers", "missing query", `{}`, false, ""},
		{"addresses", "create_address", "valid", `{"street":"1 Main St","city":"London","country_code":"GB"}`, true, ""},
		{"addresses", "create_address", "country_code UK", `{"street":"1 Main St","city":"London","country_code":"UK"}`, false, ""},
		{"addresses", "create_address", "country_code lower case", `{"street":"1 Main St","city":"London","country_code":"gb"}`, false, ""},
		{"addresses", "create_address", "country_code missing", `{"street":"1 Main St","city":"London"}`, false, ""},
		{"addresses", "create_address", "country_code hidden", `{"street":"1 Main St","city":"Pristina","country_code":"XK"}`, true, "hidden values are never exported"},
		{"bookings", "book_slot", "valid", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":30}`, true, ""},
		{"bookings", "book_slot", "minutes under min", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":10}`, false, ""},
		{"bookings", "book_slot", "minutes over max", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":241}`, false, ""},
		{"bookings", "book_slot", "minutes fractional", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":30.5}`, false, ""},
		{"bookings", "book_slot", "minutes written 30.0", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":30.0}`, true, ""},
		{"bookings", "book_slot", "minutes written 3e1", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":3e1}`, true, ""},
		{"bookings", "book_slot", "minutes as text", `{"room_id":"R-12","starts_at":"2026-03-11T09:00:00Z","minutes":"30"}`, false, ""},
		{"bookings", "list_slots", "date", `{"room_id":"R-12","date":"2026-03-11"}`, true, ""},
		{"bookings", "list_slots", "date with a time", `{"room_id":"R-12","date":"2026-03-11T09:00:00Z"}`, false, ""},
		{"payments", "create_payment", "valid", `{"account_id":"A-100200","amount":10000,"currency":"EUR"}`, true, ""},
		{"payments", "create_payment", "amount under min", `{"account_id":"A-100200","amount":0.001,"currency":"EUR"}`, false, ""},
		{"payments", "create_payment", "currency lower case", `{"account_id":"A-100200","amount":5,"currency":"eur"}`, false, ""},
		{"search", "search_articles", "valid", `{"q":"golang","limit":10}`, true, ""},
		{"search", "search_articles", "limit 0", `{"q":"golang","limit":0}`, false, ""},
		{"search", "search_articles", "limit 51", `{"q":"golang","limit":51}`, false, ""},
		{"search", "search_articles", "limit as text", `{"q":"golang","limit":"10"}`, true, "a query argument has its natural JSON type; the tool sends it as text"},
	} {
		t.Run(tc.file+"/"+tc.route+"/"+tc.name, func(t *testing.T) {
			r := routeNamed(t, mustLoad(t, "../configs/"+tc.file+".yaml"), tc.route)
			fault := proxyVerdict(t, r, tc.args)
			if (fault == "") != tc.accept {
				t.Fatalf("the proxy's verdict is not the one the case states: field at fault %q", fault)
			}
			err := compileSchema(t, tc.route, r.InputSchema()).Validate(instance(t, tc.args))
			switch {
			case tc.stricter != "" && err == nil:
				t.Errorf("the schema accepts it, though the case says it is stricter: %s", tc.stricter)
			case tc.stricter == "" && (err == nil) != tc.accept:
				t.Errorf("proxy accepts: %t; schema: %v", tc.accept, err)
			}
		})
	}
}

func routeNamed(t *testing.T, cfg *rules.Config, name string) *rules.Route {
	t.Helper()
	r := cfg.Route(name)
	if r == nil {
		t.Fatalf("no route %s", name)
	}
	return r
}

// TestToolSchemaNeverMoreLenient tries many values on every field of
// every shipped rule file: whatever the proxy rejects, the field's schema
// must reject too, and whatever the schema rejects that the proxy accepts
// must be one of the deliberate differences.
func TestToolSchemaNeverMoreLenient(t *testing.T) {
	common := []string{`null`, `true`, `false`, `0`, `1`, `-1`, `3.5`, `10`, `14`, `15`, `42`, `50`, `51`, `240`,
		`241`, `500`, `501`, `30.0`, `1e3`, `5.5`, `0.01`, `0.001`, `0.5`, `9.5`, `10000`, `10001`, `{}`, `[]`, `""`, `"x"`, `"42"`, `"true"`,
		`"open"`, `"OPEN"`, `"next Friday"`, `"2026-03-11"`, `"2026-02-30"`, `"2026-3-11"`, `"2026-03-11T09:14:02Z"`,
		`"2026-03-11T09:14:02.5Z"`, `"2026-03-11T09:14:02+01:00"`, `"2026-03-11 09:14:02Z"`, `"2026-03-11t09:14:02z"`,
		`"2026-03-11T24:00:00Z"`, `"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b"`, `"3F2B8C1E-6D4A-4E2B-9F7A-1C2D3E4F5A6B"`,
		`"3f2b8c1e6d4a4e2b9f7a1c2d3e4f5a6b"`, `"ada@example.com"`, `"Ada <ada@example.com>"`, `"ada@"`, `"T-8841"`,
		`"T-8841x"`, `"C-1042"`, `"acme"`, `"R-12"`, `"eng-3"`, `"A-100200"`, `"ABC"`, `"ABCD"`, `"GB"`, `"UK"`, `"XK"`,
		`"  "`, strconv.Quote(strings.Repeat("é", 80)), strconv.Quote(strings.Repeat("é", 81)), strconv.Quote(strings.Repeat("x", 201))}
	files, _ := filepath.Glob("../configs/*.yaml")
	files = append(files, "testdata/formats.good.yaml", "testdata/merge.good.yaml")
	checked := 0
	for _, file := range files {
		cfg := mustLoad(t, file)
		for _, r := range cfg.Routes {
			schemas := r.InputSchema()
			for _, f := range r.Fields {
				p := propertyNamed(schemas, f.Name)
				s := compileSchema(t, r.Name+"."+f.Name, p)
				values := slices.Clone(common)
				for _, v := range slices.Concat(f.Enum, f.Hidden, []string{f.Example}) {
					values = append(values, strconv.Quote(v), strconv.Quote(strings.ToUpper(v)))
					if _, err := strconv.ParseFloat(v, 64); err == nil {
						values = append(values, v)
					}
				}
				for _, text := range values {
					v := gjson.Parse(text)
					proxy := f.Check(onTheWire(f, v))
					err := s.Validate(instance(t, text))
					checked++
					switch {
					case !proxy && err == nil:
						t.Errorf("%s: routes.%s.fields.%s (in %s): the proxy rejects %s, the schema accepts it", file, r.Name, f.Name, f.In, text)
					case proxy && err != nil && stricterBy(f, p, v) == "":
						t.Errorf("%s: routes.%s.fields.%s (in %s): the proxy accepts %s, the schema rejects it: %v", file, r.Name, f.Name, f.In, text, err)
					}
				}
			}
		}
	}
	t.Logf("%d values checked", checked)
}

func propertyNamed(s *rules.Schema, name string) *rules.Property {
	for _, p := range s.Properties {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// stricterBy names the deliberate difference by which the schema rejects
// value v of field f though the proxy accepts it, or returns "".
func stricterBy(f *rules.Field, p *rules.Property, v gjson.Result) string {
	switch {
	case v.Type == gjson.String && slices.Contains(f.Hidden, v.Str):
		return "hidden values are never exported"
	case f.In != rules.InBody && jsonType(v, p.Type) != p.Type:
		return "a text argument has its natural JSON type"
	}
	return ""
}

func jsonType(v gjson.Result, want string) string {
	switch v.Type {
	case gjson.String:
		return "string"
	case gjson.True, gjson.False:
		return "boolean"
	case gjson.Number:
		if want == "integer" && v.Num == float64(int64(v.Num)) {
			return "integer"
		}
		return "number"
	}
	return "other"
}

// TestInputSchemaPathVariables checks a path variable no field declares is
// still a required argument, since the call cannot be made without it, and
// that a template's regex becomes the argument's pattern.
func TestInputSchemaPathVariables(t *testing.T) {
	cfg := mustParse(t, `routes:
  get_slot:
    method: GET
    path: /rooms/{room:[A-Z]-[0-9]+}/slots/{slot}/seats/{seat:[0-9]+}
    fields:
      seat: {in: path}
      when: {format: date}
    errors:
      - match: {status: 409, body: 'locked by (?P<received>[a-z]+)'}
        code: slot_locked
        message: the slot is locked by {received}
        next_call: unlock_slot(slot)
      - match: {status: 423}
        code: slot_held
        message: the slot is held
        next_call: unlock_slot(slot)
  unlock_slot:
    method: POST
    path: /slots/{slot}/unlock
`)
	tool := cfg.Routes[0].Tool()
	got, err := json.Marshal(tool.Input)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"room":{"type":"string","pattern":"^(?:[A-Z]-[0-9]+)$"},` +
		`"slot":{"type":"string"},` +
		`"seat":{"type":"string","pattern":"^(?:[0-9]+)$"},` +
		`"when":{"type":["string","null"],"description":"must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11","format":"date",` +
		`"pattern":"^([0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))` +
		`|([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)$","examples":["2026-03-11"]}},` +
		`"required":["room","slot","seat"],"additionalProperties":true}`
	if string(got) != want {
		t.Errorf("InputSchema:\n got %s\nwant %s", got, want)
	}
	const desc = "GET /rooms/{room}/slots/{slot}/seats/{seat}. May need unlock_slot(slot) first. The slot is held; call unlock_slot first."
	if tool.Description != desc {
		t.Errorf("Description:\n got %q\nwant %q", tool.Description, desc)
	}
	s := compileSchema(t, "get_slot", tool.Input)
	for args, ok := range map[string]bool{
		`{"room":"A-1","slot":"morning","seat":"12"}`: true,
		`{"room":"a-1","slot":"morning","seat":"12"}`: false,
		`{"room":"A-1","seat":"12"}`:                  false,
		`{"room":"A-1","slot":"morning","seat":"x"}`:  false,
	} {
		if err := s.Validate(instance(t, args)); (err == nil) != ok {
			t.Errorf("%s: valid %t, want %t: %v", args, err == nil, ok, err)
		}
	}
}

// TestPathVariablesAndExpandPath reads a template's variables with their
// patterns, and fills it with values, nested braces in a regex included.
func TestPathVariablesAndExpandPath(t *testing.T) {
	for _, tc := range []struct {
		path   string
		vars   []rules.PathVariable
		values map[string]string
		want   string
	}{
		{"/tickets", nil, nil, "/tickets"},
		{"/tickets/{ticket_id}", []rules.PathVariable{{Name: "ticket_id"}},
			map[string]string{"ticket_id": "T-8841"}, "/tickets/T-8841"},
		{"/rooms/{room:[A-Z]-[0-9]{2}}/slots/{ slot }", []rules.PathVariable{{"room", "^(?:[A-Z]-[0-9]{2})$"}, {"slot", ""}},
			map[string]string{"room": "R-12", "slot": "a%2Fb"}, "/rooms/R-12/slots/a%2Fb"},
		{"/a/{x}/b", []rules.PathVariable{{Name: "x"}}, map[string]string{}, "/a//b"},
	} {
		r := &rules.Route{Path: tc.path}
		if got := r.PathVariables(); !slices.Equal(got, tc.vars) {
			t.Errorf("PathVariables(%s) = %q, want %q", tc.path, got, tc.vars)
		}
		if got := r.ExpandPath(tc.values); got != tc.want {
			t.Errorf("ExpandPath(%s, %v) = %q, want %q", tc.path, tc.values, got, tc.want)
		}
	}
}
