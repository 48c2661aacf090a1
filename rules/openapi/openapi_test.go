package openapi

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
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

// The heads of the specs in importSeeds.
const (
	openapi30 = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\n"
	openapi31 = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\n"
)

// importSeeds are small specs, each with a few of the cases import words
// or leaves out; none is longer than importCut.
var importSeeds = []string{
	// $refs to components, an operationId, integer bounds
	openapi31 + `paths: {/p: {get: {operationId: findPets, parameters: [$ref: '#/components/parameters/L']}}}
components: {parameters: {L: {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 100}}}}`,
	// a JSON body: required, read-only, objects one and two levels down
	openapi31 + `paths: {/o: {post: {requestBody: {content: {application/json: {schema: {required: [p], properties: {
  i: {readOnly: true}, p: {properties: {x: {type: boolean}, y: {properties: {z: {}}}}}}}}}}}}}`,
	// a format and a pattern, a pattern with and without an example
	openapi31 + `paths: {/o: {post: {requestBody: {content: {application/json: {schema: {properties: {
  d: {type: string, format: date-time, pattern: x}, c: {pattern: A, example: A}, r: {pattern: R}}}}}}}}}`,
	// path-item parameters, error responses, a description over two lines
	openapi31 + `paths: {'/p/{petId}': {parameters: [{name: petId, in: path, required: true, schema: {type: integer}}], get: {},
  delete: {responses: {'4XX': {description: "Bad.\nWorse."}, default: {description: x}}}}}`,
	// a server with variables; 3.1's type list with null and numeric exclusive bound
	openapi31 + `servers: [{url: 'https://{h}/v3', variables: {h: {default: example.com}}}]
paths: {'/p/{id}': {put: {parameters: [{name: id, in: path, required: true, schema: {type: [integer, 'null'], exclusiveMinimum: 0}}]}}}`,
	// 3.1 examples, const, a number's exclusive maximum, an enum with null
	openapi31 + `paths: {/p: {put: {requestBody: {content: {application/json: {schema: {properties: {
  c: {pattern: A, examples: [b, A]}, k: {const: cat}, s: {type: number, exclusiveMaximum: 1}, e: {enum: [a, null]}}}}}}}}}`,
	// a path variable that is no plain name, with a pattern RE2 refuses; a relative server
	openapi31 + `servers: [{url: /api}]
paths: {'/i/{item-id}': {parameters: [{name: item-id, in: path, required: true, schema: {pattern: '(?=I)', example: I1}}], get: {operationId: get.Item}}}`,
	// a cookie, a header OpenAPI ignores, an array with an enum not of text, TRACE
	openapi31 + `paths: {/i: {get: {parameters: [{name: s, in: cookie, schema: {}}, {name: Accept, in: header, schema: {}},
  {name: e, in: query, schema: {type: array, enum: [[1]]}}]}, trace: {}}}`,
	// values YAML reads as other than text, a name that starts with a digit
	openapi31 + `paths: {/q: {get: {parameters: [{name: f, in: query, schema: {enum: ["yes", "1", "a,b", "it's", "null", "\t"]}},
  {name: 2fa, in: query, schema: {format: uuid}}], responses: {'404': {description: "a\tb"}}}}}`,
	// 3.0's boolean exclusive bounds, on an integer
	openapi30 + `paths: {/l: {get: {parameters: [{name: p, in: query, schema: {type: integer, exclusiveMaximum: true, maximum: 9.5, minimum: 0.5}}],
  responses: {'200': {description: ok}}}}}`,
	// bounds that leave nothing between them
	openapi31 + `paths: {/l: {get: {parameters: [{name: s, in: query, schema: {type: number, minimum: 5, maximum: 1}}]}}}`,
	// a number's exclusive minimum, a format with no equivalent, two paths
	openapi31 + `paths: {/n: {get: {parameters: [{name: x, in: query, schema: {type: number, exclusiveMinimum: 0}},
  {name: u, in: query, schema: {type: string, format: uri}}]}}, /m: {get: {}}}`,
	// 3.0's nullable, a parameter's own example
	openapi30 + `paths: {/l: {get: {parameters: [{name: k, in: query, schema: {nullable: true, enum: [old, null]}},
  {name: t, in: query, example: t-1, schema: {pattern: '^t-'}}], responses: {'200': {description: ok}}}}}`,
	// deprecated, a summary and a description over two lines
	openapi31 + `paths: {/l: {get: {deprecated: true, description: "Lists.\nKept."}, put: {summary: Puts, description: x}}}`,
	// bodies that are not JSON, not an object, one of several schemas
	openapi31 + `paths: {/i: {put: {requestBody: {content: {text/plain: {}}}}, post: {requestBody: {content: {application/json: {schema: {type: array}}}}},
  delete: {requestBody: {content: {x+json: {schema: {oneOf: [{}]}}}}}}}`,
	// allOf in a +json body, an example longer than the max length, a key gjson must escape
	openapi31 + `paths: {/i: {patch: {requestBody: {content: {application/merge-patch+json: {schema: {allOf: [
  {required: [b], properties: {b: {maxLength: 3, pattern: '^x+$', example: xxxx}}}, {properties: {a.b: {}}}]}}}}}}}`,
	// operationIds that are one name in snake_case
	openapi31 + `paths: {/i: {put: {operationId: GetItem}, patch: {operationId: getItem}, post: {operationId: get_item}}}`,
	// variables that are one name once renamed
	openapi31 + `paths: {'/p/{pair-id}/of/{pair_id}': {get: {parameters: [{name: pair-id, in: path, required: true, schema: {}}, {name: pair_id, in: path, required: true, schema: {}}]}}}`,
	// a variable named twice, so no operation can be a route
	openapi31 + `paths: {'/p/{id}/w/{id}': {get: {operationId: 1st, parameters: [{name: id, in: path, required: true, schema: {}}]}}}`,
	// an enum whose values need quoting in a path variable
	openapi31 + `paths: {'/a/{b}': {parameters: [{name: b, in: path, required: true, schema: {type: string, enum: ['x y', 'on']}}], get: {responses: {'404': {description: gone}}}}}`,
	// a spec in JSON
	`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/pet":{"post":{"requestBody":{"content":{"application/json":{"schema":{"properties":{"name":{}}}}}},"responses":{"200":{"description":"ok"}}}}}}`,
	// Swagger 2.0: a host and a base path, a body parameter, a form; unquoted, a query key with brackets
	"swagger: '2.0'\ninfo: {title: t, version: '1'}\nhost: h\nbasePath: /v2/\npaths: {/p: {post: {parameters: [{in: body, name: b, schema: {properties: {createdBy: {}}}}, {in: formData, name: f, type: file}]}}}\n",
	"swagger: 2.0\ninfo: {title: t, version: '1'}\npaths: {/p: {get: {parameters: [{in: query, name: 'a[b]', type: integer, minimum: 1}]}}}\n",
	// servers that disagree, with a variable in the path; an operation's own
	openapi30 + `servers: [{url: 'https://h/{v}', variables: {v: {default: v2, enum: [v1, v2]}}}, {url: /v1}]
paths: {/p: {get: {servers: [{url: 'http://o/x'}], responses: {'200': {description: ok}}}}}`,
	// refused: no operations (Swagger 2.0), a reference to another file, no operations (OpenAPI 3.1), no version
	"swagger: \"2.0\"\ninfo: {title: t, version: '1'}\npaths: {}\n",
	openapi31 + `paths: {/a: {get: {parameters: [$ref: 'other.yaml#/p']}}}`,
	openapi31 + `paths: {}`,
	`info: {title: t, version: '1'}`,
}

// importCut is where FuzzImport cuts a spec.
const importCut = 256

// FuzzImport: whatever the spec, import does not panic, and a rule file it
// writes loads (go test -fuzz FuzzImport ./rules/openapi).
//
// It cannot run at tens of thousands of execs/s: an import reads the
// spec's YAML twice, validates it and loads each route it writes, and the
// check loads the whole file, some 0.3 ms for a small spec, so it runs at
// 3,000 to 5,000. Its seeds are the small importSeeds, and a spec past
// importCut bytes is cut: the fuzzer minimizes each input that finds new
// coverage by trying to remove every span of it, n²/2 imports, some seven
// seconds at 256 bytes and two minutes at 1 KiB; and a few operations hold
// every case import handles. The whole specs of cmd/signpost/testdata are
// imported, and their rule files loaded, by TestImportGolden there.
func FuzzImport(f *testing.F) {
	for i, spec := range importSeeds {
		if len(spec) > importCut {
			f.Fatalf("importSeeds[%d] is %d bytes, past importCut (%d)", i, len(spec), importCut)
		}
		f.Add([]byte(spec))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = data[:min(len(data), importCut)]
		res, err := Import("fuzz.yaml", data)
		if err != nil {
			return
		}
		if _, err := rules.Parse("fuzz.rules.yaml", res.Text); err != nil {
			t.Fatalf("the imported rule file does not load:\n%v\n%s", err, res.Text)
		}
	})
}
