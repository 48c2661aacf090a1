package openapi

import (
	"strings"
	"testing"
)

// TestImportSwagger: a Swagger 2.0 document imports as its OpenAPI 3
// conversion would: routes under its basePath, the upstream its scheme and
// host, body parameters as JSON bodies in the document's order.
func TestImportSwagger(t *testing.T) {
	for _, tc := range []importCase{
		{
			spec:     "swagger-basepath.yaml",
			upstream: "https://api.example.com",
			routes: []string{
				"create_user POST /v2/users",
				"get_user GET /v2/users/{userId}",
				"put_avatar PUT /v2/users/{userId}/avatar",
			},
			contains: []string{
				"# Starter rules for Users 2 (Swagger 2.0), written by signpost import openapi\n",
				"# The API is at https://api.example.com/v2/ (the spec's host and basePath). Requests carry its path,\n#   /v2, and so do the routes below.",
				"    # body: the spec's media type is */*; its properties are declared as a JSON body's\n" +
					"    fields:\n" +
					"      createdBy: {in: body, required: true}\n" +
					"      role: {in: body, enum: [admin, member]}\n" +
					"      teamId: {in: body, format: integer, min: 1}\n",
				"      userId: {in: path, format: integer, min: 1}\n      fields: {in: query, description: an array}\n",
				"    # body: multipart/form-data is not JSON; signpost reads JSON request bodies only\n",
				"    #   409: The user exists\n",
			},
		},
		{
			// JSON, a base path without a host, a body from definitions:
			// its properties keep the document's order, not the alphabet's.
			spec: "swagger-nohost.json",
			routes: []string{
				"update_thing PATCH /api/things/{thingId}",
			},
			contains: []string{
				"# upstream: the spec's basePath, \"/api\", names no http(s) origin; give the API's here, e.g.\n#   upstream: https://api.example.com,",
				"      thingId: {in: path, format: uuid}\n      zName: {in: body, max_length: 30}\n      aLabel: {in: body, max_length: 10}\n",
			},
		},
		{
			// swagger: 2.0 unquoted, which YAML reads as a number.
			spec:     "swagger-unquoted.yaml",
			routes:   []string{"ping GET /ping"},
			contains: []string{"(Swagger 2.0)", "# upstream: the spec names no server;", "      echo: {in: query, max_length: 16}\n"},
		},
	} {
		t.Run(tc.spec, tc.check)
	}
}

// TestImportVersions: a document that is neither OpenAPI 3 nor Swagger 2.0
// is refused, naming what it says it is and what import reads.
func TestImportVersions(t *testing.T) {
	const info = "info: {title: t, version: '1'}\npaths: {/a: {get: {responses: {'200': {description: ok}}}}}\n"
	const accepted = `signpost imports OpenAPI 3.0 and 3.1 (openapi: 3.0.3) and Swagger 2.0 (swagger: "2.0")`
	for _, tc := range []struct{ name, spec, err string }{
		{"swagger 1.2", "swagger: '1.2'\n" + info, "spec.yaml:1:10: swagger: 1.2 is not supported; " + accepted},
		{"swagger 3.0", "swagger: '3.0'\n" + info, "spec.yaml:1:10: swagger: 3.0 is not supported; " + accepted},
		{"openapi 2.0", "openapi: '2.0'\n" + info, "spec.yaml:1:10: openapi: 2.0 is not supported; " + accepted + `; a 2.0 document names its version with swagger: "2.0"`},
		{"openapi 4", "openapi: 4.0.0\n" + info, "spec.yaml:1:10: openapi: 4.0.0 is not supported; " + accepted},
		{"both", "swagger: '2.0'\nopenapi: 3.0.3\n" + info, "spec.yaml:1:10: the document has both swagger: 2.0 and openapi: 3.0.3; keep the one key of the version it is written in"},
		{"neither", info, "spec.yaml: not an OpenAPI document: no openapi: or swagger: key names its version (its top-level keys: info, paths); " + accepted},
		{"a list", "- swagger: '2.0'\n", "spec.yaml: not an OpenAPI document: its top level is a list, and must be a mapping of openapi (or swagger), info and paths; " + accepted},
		{"text", "hello\n", "spec.yaml: not an OpenAPI document: its top level is text, and must be"},
		{"empty", "", "spec.yaml: not an OpenAPI document: its top level is empty, and must be"},
		{"swagger, a path item of the wrong kind", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {/a: [get]}\n",
			"spec.yaml: cannot load the spec: found a list where a path item belongs"},
		{"swagger, parameters of the wrong kind", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {/a: {get: {parameters: {name: q}}}}\n",
			"spec.yaml: cannot load the spec: found a mapping where a list belongs at parameters of an operation"},
		{"swagger, an invalid parameter", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {/a: {get: {parameters: [{name: q, in: qury, type: string}], responses: {'200': {description: ok}}}}}\n",
			`spec.yaml:3:9: invalid Swagger 2.0 document (as converted to OpenAPI 3.0): invalid paths: invalid path /a: invalid operation GET: parameter can't have 'in' value "qury"`},
		{"swagger, a host with a path", "swagger: '2.0'\ninfo: {title: t, version: '1'}\nhost: api.example.com/v2\npaths: {}\n",
			`spec.yaml: cannot load the spec: invalid host "api.example.com/v2"`},
		{"swagger, another file", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {/a: {get: {parameters: [$ref: 'other.yaml#/q'], responses: {'200': {description: ok}}}}}\n",
			"signpost import reads one file: bundle the referenced files into it first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import("spec.yaml", []byte(tc.spec))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v; want it to contain %q", err, tc.err)
			}
		})
	}
}
