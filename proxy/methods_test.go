package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestExtensionMethodRoutes: a route on a method outside the standard
// ones (WebDAV's PROPFIND) takes the requests of that method, and its
// rule rewrites their errors; another method on the same path is not its.
func TestExtensionMethodRoutes(t *testing.T) {
	cfg, err := rules.Parse("webdav.yaml", []byte(`upstream: http://127.0.0.1:1
routes:
  list_properties:
    method: PROPFIND
    path: /dav/{file}
    fields:
      depth: {in: header, key: Depth, enum: ["0", "1"]}
    errors:
      - match: {status: 400, body: 'Depth'}
        code: invalid_depth
        field: depth
`))
	if err != nil {
		t.Fatal(err)
	}
	up := &roundTrip{status: 400, header: http.Header{"Content-Type": {"text/plain"}}, body: []byte("Bad Depth header")}
	p, err := New(cfg, Options{Transport: up})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		method string
		want   string
	}{
		{"PROPFIND", `{"error":"invalid_depth","field":"depth","message":"must be one of: 0, 1","received":"infinity","retryable":false}`},
		{"GET", `{"error":"upstream_rejected","message":"the upstream rejected the call (400 Bad Request) for a reason signpost has no rule for","upstream_message":"Bad Depth header","retryable":false}`},
	} {
		r := httptest.NewRequest(tc.method, "/dav/a.txt", nil)
		r.Header.Set("Depth", "infinity")
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		if w.Code != 400 || w.Body.String() != tc.want {
			t.Errorf("%s: %d %s\nwant 400 %s", tc.method, w.Code, w.Body, tc.want)
		}
	}
}
