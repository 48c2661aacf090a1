package test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestExtensionMethodEndToEnd: a WebDAV route on PROPFIND, served by the
// real binary, reaches the upstream with its method and its Depth header,
// and the upstream's bare 400 is rewritten by the route's rule.
func TestExtensionMethodEndToEnd(t *testing.T) {
	t.Parallel()
	rulesFile := filepath.Join(t.TempDir(), "webdav.yaml")
	if err := os.WriteFile(rulesFile, []byte(`routes:
  list_properties:
    method: PROPFIND
    path: /dav/{file}
    fields:
      depth: {in: header, key: Depth, enum: ["0", "1"]}
    errors:
      - match: {status: 400, body: 'Depth'}
        code: invalid_depth
        field: depth
`), 0o644); err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "PROPFIND" {
			http.Error(w, "want PROPFIND, got "+r.Method, http.StatusTeapot)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if d := r.Header.Get("Depth"); d != "0" && d != "1" {
			http.Error(w, "Bad Depth header", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(207)
		_, _ = io.WriteString(w, `<multistatus xmlns="DAV:"/>`)
	}))
	sp := startSignpost(t, rulesFile, up.URL)
	if got := send(t, "PROPFIND", sp.URL+"/dav/a.txt", nil, "Depth", "1"); got.status != 207 || string(got.body) != `<multistatus xmlns="DAV:"/>` {
		t.Errorf("a good PROPFIND: %d %s", got.status, got.body)
	}
	wantJSONError(t, send(t, "PROPFIND", sp.URL+"/dav/a.txt", nil, "Depth", "infinity"), 400,
		`{"error":"invalid_depth","field":"depth","message":"allowed values: 0, 1","received":"infinity","retryable":false}`)
}
