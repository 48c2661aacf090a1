package test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// petStore is a legacy pet store that answers mistakes with bare messages.
func petStore() http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, status int, v any) {
		b, _ := json.Marshal(v)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(b)
	}
	mux.HandleFunc("GET /v3/pet/findByStatus", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("status") {
		case "available", "pending", "sold":
			reply(w, 200, []any{map[string]any{"id": 1, "name": "Rex"}})
		default:
			reply(w, 400, map[string]string{"message": "Invalid status value"})
		}
	})
	mux.HandleFunc("GET /v3/pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("petId") != "1" {
			reply(w, 404, map[string]string{"message": "Pet not found"})
			return
		}
		reply(w, 200, map[string]any{"id": 1, "name": "Rex"})
	})
	return mux
}

// TestAuthoringWorkflow follows docs/authoring.md's guide as an author
// would: import an OpenAPI spec, add error rules, check them, test them,
// then serve them in front of the real API and see the rewritten errors.
func TestAuthoringWorkflow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "petstore.yaml")

	// 1. Import.
	if out, errOut, code := runCLI(t, "import", "openapi", "../cmd/signpost/testdata/petstore-3.0.yaml", "-o", rulesFile); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)

	// 2. Add the rules the spec could not give: one per bare error.
	const hint = "    # errors: add a rule per bare error this operation returns; see signpost explain.\n"
	add := func(route, rules string) {
		t.Helper()
		at := strings.Index(text, "  "+route+":\n")
		if at < 0 {
			t.Fatalf("the import has no route %s:\n%s", route, text)
		}
		i := strings.Index(text[at:], hint)
		if i < 0 {
			t.Fatalf("route %s has no errors hint:\n%s", route, text[at:])
		}
		text = text[:at+i] + rules + text[at+i+len(hint):]
	}
	add("find_pets_by_status", `    errors:
      - match: {status: 400, json: message, equals: Invalid status value}
        code: invalid_status
        field: status
`)
	add("get_pet_by_id", `    errors:
      - match: {status: 404, json: message, equals: Pet not found}
        code: unknown_pet
        field: petId
        message: no pet has this id
`)
	if err := os.WriteFile(rulesFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}

	// 3. Check.
	if out, errOut, code := runCLI(t, "check", "--strict", rulesFile); code != 0 || !strings.Contains(out, ": ok: ") {
		t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
	}

	// 4. Test, in process.
	tests := filepath.Join(dir, "petstore_test.yaml")
	os.WriteFile(tests, []byte(`rules: petstore.yaml
tests:
  - name: a status in the wrong case is rewritten
    request: {method: GET, path: '/v3/pet/findByStatus?status=Available'}
    upstream: {status: 400, body: {message: Invalid status value}}
    expect:
      status: 400
      body: {error: invalid_status, field: status, message: "allowed values: available, pending, sold", received: Available, retryable: false}
  - name: an unknown pet
    request: {method: GET, path: /v3/pet/7}
    upstream: {status: 404, body: {message: Pet not found}}
    expect: {status: 404, body_subset: {error: unknown_pet, received: "7"}}
`), 0o644)
	if out, errOut, code := runCLI(t, "test", tests); code != 0 || !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("test: exit %d\n%s%s", code, out, errOut)
	}

	// 5. Serve in front of the real API.
	up := newUpstream(t, petStore())
	sp := startSignpost(t, rulesFile, up.URL)
	wantJSONError(t, send(t, "GET", sp.URL+"/v3/pet/findByStatus?status=Available", nil), 400,
		`{"error":"invalid_status","field":"status","message":"allowed values: available, pending, sold","received":"Available","retryable":false}`)
	wantJSONError(t, send(t, "GET", sp.URL+"/v3/pet/7", nil), 404,
		`{"error":"unknown_pet","field":"petId","message":"no pet has this id","received":"7","retryable":false}`)
	if got := send(t, "GET", sp.URL+"/v3/pet/1", nil); got.status != 200 || string(got.body) != `{"id":1,"name":"Rex"}` {
		t.Errorf("a success through the imported rules: %d %s", got.status, got.body)
	}
}
