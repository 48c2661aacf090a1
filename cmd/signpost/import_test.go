package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/signpost-proxy/signpost/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files, the rule files under testdata/ and docs/cli.md, instead of comparing with them")

// importRun runs signpost with args and stdin as standard input.
func importRun(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	old := importStdin
	importStdin = strings.NewReader(stdin)
	t.Cleanup(func() { importStdin = old })
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// mustParseImported loads an imported rule file as signpost check does and
// fails on any problem or warning.
func mustParseImported(t *testing.T, name string, text []byte) *rules.Config {
	t.Helper()
	cfg, err := rules.Parse(name, text)
	if err != nil {
		t.Fatalf("the imported rule file does not load:\n%v\n%s", err, text)
	}
	if ws := cfg.Warnings(); len(ws) > 0 {
		t.Errorf("signpost check warns about the imported rule file:\n%v", ws)
	}
	return cfg
}

// TestImportGolden imports each spec in testdata and compares the rule file
// with its golden file (go test -run TestImportGolden -update rewrites them).
func TestImportGolden(t *testing.T) {
	for _, tc := range []struct{ spec, golden string }{
		{"testdata/petstore-3.0.yaml", "testdata/petstore-3.0.rules.yaml"},
		{"testdata/petstore-3.1.yaml", "testdata/petstore-3.1.rules.yaml"},
		{"testdata/petstore-3.0.json", "testdata/petstore-3.0.json.rules.yaml"},
		{"testdata/petstore-2.0.yaml", "testdata/petstore-2.0.rules.yaml"},
		{"testdata/orders-3.1.yaml", "testdata/orders-3.1.rules.yaml"},
		{"testdata/edge.yaml", "testdata/edge.rules.yaml"},
	} {
		t.Run(filepath.Base(tc.spec), func(t *testing.T) {
			code, out, errs := importRun(t, "", "import", "openapi", tc.spec)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr:\n%s", code, errs)
			}
			mustParseImported(t, tc.golden, []byte(out))
			if *update {
				if err := os.WriteFile(tc.golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatalf("%v; run go test -run TestImportGolden -update to write it", err)
			}
			if out != string(want) {
				t.Errorf("import of %s differs from %s (-update rewrites it):\n%s", tc.spec, tc.golden, importDiff(string(want), out))
			}
			// Deterministic: a second run writes the same bytes.
			if _, again, _ := importRun(t, "", "import", "openapi", tc.spec); again != out {
				t.Errorf("a second import of %s differs from the first", tc.spec)
			}
		})
	}
}

// importDiff lists the lines of got that differ from want, for a failure.
func importDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  - " + wl + "\n  + " + gl + "\n")
		}
	}
	return b.String()
}

// bodyOf drops the header comment, which names the spec and its version.
func bodyOf(text string) string {
	_, rest, _ := strings.Cut(text, "\nroutes:\n")
	return rest
}

// TestImportSameAPI: the 3.0 document, its JSON form, the 3.1 document
// and the Swagger 2.0 one describe one API, and import to the same routes.
func TestImportSameAPI(t *testing.T) {
	_, want, _ := importRun(t, "", "import", "openapi", "testdata/petstore-3.0.yaml")
	for _, spec := range []string{"testdata/petstore-3.1.yaml", "testdata/petstore-3.0.json", "testdata/petstore-2.0.yaml"} {
		_, got, _ := importRun(t, "", "import", "openapi", spec)
		if bodyOf(got) != bodyOf(want) {
			t.Errorf("%s imports to other routes than petstore-3.0.yaml:\n%s", spec, importDiff(bodyOf(want), bodyOf(got)))
		}
	}
}

// TestImportRoundTrip loads the imported pet store and checks what each
// field became.
func TestImportRoundTrip(t *testing.T) {
	type want struct {
		route, field string
		in           rules.Location
		key          string
		required     bool
		enum         []string
		format       string
		min, max     string // "" for none
		pattern      string
		example      string
		maxLength    int
	}
	wants := []want{
		{route: "find_pets_by_status", field: "status", in: rules.InQuery, key: "status", required: true, enum: []string{"available", "pending", "sold"}},
		{route: "find_pets_by_status", field: "limit", in: rules.InQuery, key: "limit", format: "integer", min: "1", max: "100", example: "1"},
		{route: "add_pet", field: "name", in: rules.InBody, key: "name", required: true},
		{route: "add_pet", field: "status", in: rules.InBody, key: "status", enum: []string{"available", "pending", "sold"}},
		{route: "add_pet", field: "photoUrls", in: rules.InBody, key: "photoUrls", required: true},
		{route: "add_pet", field: "category.id", in: rules.InBody, key: "category.id", format: "integer", example: "42"},
		{route: "add_pet", field: "category.name", in: rules.InBody, key: "category.name", maxLength: 40},
		{route: "add_pet", field: "tags", in: rules.InBody, key: "tags"},
		{route: "get_pet_by_id", field: "petId", in: rules.InPath, key: "petId", required: true, format: "integer", min: "1", example: "1"},
		{route: "delete_pet_pet_id", field: "petId", in: rules.InPath, key: "petId", required: true, format: "integer", min: "1", example: "1"},
		{route: "delete_pet_pet_id", field: "X-Api-Key", in: rules.InHeader, key: "X-Api-Key", required: true, maxLength: 64},
		{route: "place_order", field: "petId", in: rules.InBody, key: "petId", required: true, format: "integer", example: "42"},
		{route: "place_order", field: "quantity", in: rules.InBody, key: "quantity", required: true, format: "integer", min: "1", example: "1"},
		{route: "place_order", field: "shipDate", in: rules.InBody, key: "shipDate", format: "rfc3339", example: "2026-03-11T10:14:02+01:00"},
		{route: "place_order", field: "status", in: rules.InBody, key: "status", enum: []string{"placed", "approved", "delivered"}},
		{route: "place_order", field: "complete", in: rules.InBody, key: "complete", format: "boolean", example: "true"},
		{route: "place_order", field: "couponCode", in: rules.InBody, key: "couponCode", pattern: "^[A-Z]{4}-[0-9]{4}$", example: "SAVE-2026"},
		{route: "place_order", field: "reference", in: rules.InBody, key: "reference"},
		{route: "place_order", field: "priority", in: rules.InBody, key: "priority", format: "integer", example: "42"},
		{route: "place_order", field: "contact", in: rules.InBody, key: "contact", format: "email", example: "ada@example.com"},
		{route: "place_order", field: "note", in: rules.InBody, key: "note", maxLength: 140},
	}
	// The spec's server is https://petstore.example.com/v3: requests carry
	// /v3, and the upstream is the origin they are forwarded to whole.
	routes := []struct{ name, method, path string }{
		{"find_pets_by_status", "GET", "/v3/pet/findByStatus"},
		{"add_pet", "POST", "/v3/pet"},
		{"get_pet_by_id", "GET", "/v3/pet/{petId}"},
		{"delete_pet_pet_id", "DELETE", "/v3/pet/{petId}"},
		{"place_order", "POST", "/v3/store/order"},
	}
	for _, spec := range []string{"testdata/petstore-3.0.yaml", "testdata/petstore-3.1.yaml", "testdata/petstore-2.0.yaml"} {
		t.Run(filepath.Base(spec), func(t *testing.T) {
			code, out, errs := importRun(t, "", "import", "openapi", spec)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			cfg := mustParseImported(t, spec, []byte(out))
			if cfg.Upstream == nil || cfg.Upstream.String() != "https://petstore.example.com" {
				t.Errorf("upstream = %v; want https://petstore.example.com", cfg.Upstream)
			}
			if len(cfg.Routes) != len(routes) {
				t.Fatalf("%d routes; want %d", len(cfg.Routes), len(routes))
			}
			for i, r := range cfg.Routes {
				w := routes[i]
				if r.Name != w.name || r.Method != w.method || r.Path != w.path {
					t.Errorf("route %d = %s %s %s; want %s %s %s", i, r.Name, r.Method, r.Path, w.name, w.method, w.path)
				}
			}
			byRoute := map[string][]string{}
			for _, w := range wants {
				byRoute[w.route] = append(byRoute[w.route], w.field)
				r := cfg.Route(w.route)
				if r == nil {
					t.Errorf("no route %s", w.route)
					continue
				}
				f := r.Field(w.field)
				if f == nil {
					t.Errorf("%s: no field %s", w.route, w.field)
					continue
				}
				format := ""
				if f.Format != nil {
					format = f.Format.Name
				}
				pattern := ""
				if f.Pattern != nil {
					pattern = f.Pattern.String()
				}
				bound := func(p *float64) string {
					if p == nil {
						return ""
					}
					return strconv.FormatFloat(*p, 'f', -1, 64)
				}
				got := want{route: w.route, field: w.field, in: f.In, key: f.Key, required: f.Required, enum: f.Enum,
					format: format, min: bound(f.Min), max: bound(f.Max), pattern: pattern, example: f.Example, maxLength: f.MaxLength}
				if !slices.Equal(got.enum, w.enum) || got.in != w.in || got.key != w.key || got.required != w.required ||
					got.format != w.format || got.min != w.min || got.max != w.max || got.pattern != w.pattern ||
					got.example != w.example || got.maxLength != w.maxLength {
					t.Errorf("%s.%s =\n  %+v\nwant\n  %+v", w.route, w.field, got, w)
				}
			}
			// Fields come in parameter order, then in the body's document
			// order, and nothing else is declared: the pattern without an
			// example (reference) is a comment, beside the field declared
			// without it.
			for _, r := range cfg.Routes {
				var names []string
				for _, f := range r.Fields {
					names = append(names, f.Name)
				}
				if !slices.Equal(names, byRoute[r.Name]) {
					t.Errorf("%s declares %v; want %v", r.Name, names, byRoute[r.Name])
				}
				if r.Errors != nil {
					t.Errorf("%s has error rules; import leaves them to the author", r.Name)
				}
			}
			for _, s := range []string{
				"# reference: {in: body, pattern: '^R[0-9]+$', example: '<a value that matches>'}",
				"      tags: {in: body, description: an array}\n",
				"      reference: {in: body, description: text}\n",
				"    description: Finds pets by status\n",
				"# priority: enum [1,2,3] is not all text",
				"    # errors: add a rule per bare error this operation returns; see signpost explain.\n    # The spec documents:\n    #   400: Invalid ID supplied\n    #   404: Pet not found\n",
				"    #   400: Invalid order\n    #   405: Invalid input\n    #   default: Unexpected error\n",
			} {
				if !strings.Contains(out, s) {
					t.Errorf("the rule file lacks %q", s)
				}
			}
		})
	}
}

// TestImportEdgeKeys checks that keys import wrote for awkward names find
// their values: an escaped dot in a gjson path, a renamed path variable.
func TestImportEdgeKeys(t *testing.T) {
	_, out, _ := importRun(t, "", "import", "openapi", "testdata/edge.yaml")
	cfg := mustParseImported(t, "edge", []byte(out))
	f := cfg.Route("get_item_3").Field("a.b")
	if v := gjson.Get(`{"a.b":"2026-03-11","a":{"b":"x"}}`, f.Key); v.String() != "2026-03-11" {
		t.Errorf("key %q reads %q from the body; want the property named a.b", f.Key, v.String())
	}
	if f := cfg.Route("get_item_3").Field("deep.status"); f == nil || f.Key != "deep.status" {
		t.Errorf("deep.status = %+v; want the field of the status in the body's deep object", f)
	}
	if f := cfg.Route("get_item").Field("2fa"); f == nil || f.Key != "2fa" || f.In != rules.InQuery {
		t.Errorf("2fa = %+v; want the query parameter 2fa, named as the spec names it", f)
	}
	if r := cfg.Route("get_item"); r.Path != "/api/items/{item_id}" || r.Field("item_id").In != rules.InPath {
		t.Errorf("get_item: path %s, item_id in %s; want /api/items/{item_id} with item_id in path", r.Path, r.Field("item_id").In)
	}
	if cfg.Route("get_pair") != nil || !strings.Contains(out, "# GET /pairs/{id}/with/{id} is left out: as imported, signpost check reports:") {
		t.Errorf("get_pair, whose path names {id} twice, must be left out with the problem as a comment")
	}
	if r := cfg.Route("get_pairs_pair_id_of_pair_id"); r == nil || r.Path != "/api/pairs/{pair_id_2}/of/{pair_id}" || r.Field("pair_id").Format == nil {
		t.Errorf("a renamed variable must not take the name of another: %+v", r)
	}
	if got := cfg.Route("get_item").Field("flag").Enum; !slices.Equal(got, []string{"yes", "no", "1", "a,b", "it's", "2026-03-11", "null"}) {
		t.Errorf("flag enum = %q; every value must stay a string", got)
	}
}

func TestImportOutputFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rules.yaml")
	// -o after SPEC, as the README writes it.
	code, stdout, stderr := importRun(t, "", "import", "openapi", "testdata/petstore-3.0.yaml", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := out + ": 5 routes, 21 fields from testdata/petstore-3.0.yaml; add error rules, then run signpost check " + out; strings.TrimSpace(stdout) != want {
		t.Errorf("stdout = %q; want %q", stdout, want)
	}
	if code, stdout, stderr := importRun(t, "", "check", out); code != 0 || !strings.Contains(stdout, "ok: 5 routes, 21 fields, 0 error rules") {
		t.Errorf("signpost check %s: exit %d\n%s%s", out, code, stdout, stderr)
	}
}

// TestImportThenCheck runs import as a new user would, then loads the file
// written as signpost check does, and asks explain which route a request
// the API documents takes: the routes carry the path of the spec's server
// (a Swagger 2.0 basePath, an OpenAPI 3 server URL's path), as requests do.
func TestImportThenCheck(t *testing.T) {
	for _, tc := range []struct {
		spec, upstream string
		routes, fields int
		// request is a method and path the API documents, route the one
		// that must take it; outside is the same path without the
		// server's, which none must.
		request, route, outside string
	}{
		{spec: "testdata/petstore-2.0.yaml", upstream: "https://petstore.example.com", routes: 5, fields: 21,
			request: "GET /v3/pet/42", route: "get_pet_by_id", outside: "GET /pet/42"},
		{spec: "testdata/orders-3.1.yaml", upstream: "https://eu.orders.example.com", routes: 3, fields: 7,
			request: "GET /api/v2/orders/O-7", route: "get_order", outside: "GET /orders/O-7"},
		{spec: "testdata/petstore-3.0.json", upstream: "https://petstore.example.com", routes: 5, fields: 21,
			request: "POST /v3/store/order", route: "place_order", outside: "POST /store/order"},
	} {
		t.Run(filepath.Base(tc.spec), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "rules.yaml")
			if code, _, stderr := importRun(t, "", "import", "openapi", tc.spec, "-o", out); code != 0 {
				t.Fatalf("import: exit %d: %s", code, stderr)
			}
			cfg, err := rules.Load(out)
			if err != nil {
				text, _ := os.ReadFile(out)
				t.Fatalf("the written file does not load:\n%v\n%s", err, text)
			}
			if ws := cfg.Warnings(); len(ws) > 0 {
				t.Errorf("signpost check warns about the written file:\n%v", ws)
			}
			if cfg.Upstream == nil || cfg.Upstream.String() != tc.upstream {
				t.Errorf("upstream %v; want %s", cfg.Upstream, tc.upstream)
			}
			want := fmt.Sprintf("ok: %d routes, %d fields, 0 error rules", tc.routes, tc.fields)
			if code, stdout, stderr := importRun(t, "", "check", "--strict", out); code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("signpost check --strict %s: exit %d, want %q\n%s%s", out, code, want, stdout, stderr)
			}
			explain := func(request string) string {
				method, path, _ := strings.Cut(request, " ")
				_, stdout, stderr := importRun(t, "", "explain", "--config", out, "--method", method, "--path", path, "--status", "400")
				return stdout + stderr
			}
			if got := explain(tc.request); !strings.HasPrefix(got, "route "+tc.route+": ") {
				t.Errorf("%s: explain says\n%s\nwant route %s", tc.request, got, tc.route)
			}
			if got := explain(tc.outside); !strings.Contains(got, "matches no route") {
				t.Errorf("%s, without the server's path: explain says\n%s\nwant no route", tc.outside, got)
			}
		})
	}
}

func TestImportStdin(t *testing.T) {
	spec, err := os.ReadFile("testdata/petstore-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := importRun(t, string(spec), "import", "openapi", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "# from standard input.\n") {
		t.Errorf("the header does not name standard input:\n%s", stdout)
	}
	mustParseImported(t, "stdin", []byte(stdout))
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const info = "openapi: 3.0.3\ninfo: {title: x, version: '1'}\n"
	syntax := file("syntax.yaml", info+"paths:\n  /a:\n    get:\n      responses: {'200': {description: ok}\n")
	invalid := file("invalid.yaml", info+"paths:\n  /a:\n    get:\n      parameters:\n        - {name: q, in: qury, schema: {type: string}}\n      responses: {'200': {description: ok}}\n")
	missingParam := file("param.yaml", info+"paths:\n  /a/{id}:\n    get:\n      responses: {'200': {description: ok}}\n")
	wrongKind := file("kind.yaml", info+"paths:\n  /a: [get]\n")
	swagger := file("swagger.yaml", "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths: {}\n")
	swagger12 := file("swagger12.yaml", "swagger: '1.2'\ninfo: {title: x, version: '1'}\npaths: {}\n")
	empty := file("empty.yaml", info+"paths: {}\n")
	traceOnly := file("trace.yaml", info+"paths:\n  /a:\n    trace:\n      responses: {'200': {description: ok}}\n")
	external := file("external.yaml", info+"paths:\n  /a:\n    get:\n      parameters: [{$ref: 'other.yaml#/q'}]\n      responses: {'200': {description: ok}}\n")
	list := file("list.yaml", "- openapi: 3.0.3\n")
	noVersion := file("noversion.yaml", "info: {title: x, version: '1'}\npaths: {}\n")
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{name: "no kind", args: []string{"import"}, code: 2,
			stderr: "signpost import: import what? e.g. signpost import openapi petstore.yaml"},
		{name: "unknown kind", args: []string{"import", "openap", "x.yaml"}, code: 2,
			stderr: `signpost import: unknown kind "openap"; did you mean "openapi"? import what? e.g. signpost import openapi petstore.yaml`},
		{name: "unknown kind, swagger meant", args: []string{"import", "swager", "x.yaml"}, code: 2,
			stderr: `signpost import: unknown kind "swager"; did you mean "swagger"?`},
		{name: "swagger kind, no spec", args: []string{"import", "swagger"}, code: 2,
			stderr: "signpost import swagger: name one spec, e.g. signpost import swagger petstore.yaml"},
		{name: "no spec", args: []string{"import", "openapi"}, code: 2, stderr: "name one spec, e.g. signpost import openapi petstore.yaml"},
		{name: "two specs", args: []string{"import", "openapi", "a.yaml", "b.yaml"}, code: 2, stderr: "name one spec"},
		{name: "bad flag", args: []string{"import", "openapi", "--out", "x", "a.yaml"}, code: 2, stderr: "flag provided but not defined: -out"},
		{name: "overwrite the spec", args: []string{"import", "openapi", empty, "-o", empty}, code: 2, stderr: "would overwrite the spec"},
		{name: "missing file", args: []string{"import", "openapi", "testdata/nope.yaml"}, code: 1,
			stderr: "signpost import: testdata/nope.yaml: cannot read the spec: no such file or directory"},
		{name: "yaml syntax", args: []string{"import", "openapi", syntax}, code: 1,
			stderr: syntax + ":7: cannot load the spec: did not find expected ',' or '}'"},
		{name: "invalid", args: []string{"import", "openapi", invalid}, code: 1,
			stderr: invalid + `:5:5: invalid OpenAPI document: invalid paths: invalid path /a: invalid operation GET: parameter can't have 'in' value "qury"`},
		{name: "undeclared path parameter", args: []string{"import", "openapi", missingParam}, code: 1,
			stderr: missingParam + ":5:5: invalid OpenAPI document: invalid paths: operation GET /a/{id} must define exactly all path parameters (missing: [id])"},
		{name: "wrong kind of value", args: []string{"import", "openapi", wrongKind}, code: 1,
			stderr: wrongKind + ":4: cannot load the spec: found a list where a path item belongs at /paths/~1a"},
		{name: "swagger 2.0 without operations", args: []string{"import", "swagger", swagger}, code: 1,
			stderr: swagger + ": the spec declares no operations (paths is empty), so there is nothing to import"},
		{name: "swagger 1.2", args: []string{"import", "openapi", swagger12}, code: 1,
			stderr: swagger12 + `:1:10: swagger: 1.2 is not supported; signpost imports OpenAPI 3.0 and 3.1 (openapi: 3.0.3) and Swagger 2.0 (swagger: "2.0")`},
		{name: "no version", args: []string{"import", "openapi", noVersion}, code: 1,
			stderr: noVersion + `: not an OpenAPI document: no openapi: or swagger: key names its version (its top-level keys: info, paths); signpost imports OpenAPI 3.0 and 3.1 (openapi: 3.0.3) and Swagger 2.0 (swagger: "2.0")`},
		{name: "not a mapping", args: []string{"import", "openapi", list}, code: 1,
			stderr: list + ": not an OpenAPI document: its top level is a list, and must be a mapping of openapi (or swagger), info and paths"},
		{name: "no operations", args: []string{"import", "openapi", empty}, code: 1,
			stderr: empty + ": the spec declares no operations (paths is empty), so there is nothing to import"},
		{name: "nothing routable", args: []string{"import", "openapi", traceOnly}, code: 1,
			stderr: traceOnly + ": no operation of the spec can be a route, so there is nothing to import: TRACE /a: signpost routes GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS only"},
		{name: "external ref", args: []string{"import", "openapi", external}, code: 1,
			stderr: `encountered disallowed external reference: "other.yaml#/q"; signpost import reads one file: bundle the referenced files into it first`},
		{name: "empty stdin", args: []string{"import", "openapi", "-"}, code: 1,
			stderr: "signpost import: standard input: not an OpenAPI document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := importRun(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d; want %d", code, tc.code)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr:\n%s\nwant it to contain:\n%s", stderr, tc.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q; want nothing on failure", stdout)
			}
		})
	}
}
