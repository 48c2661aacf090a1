package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
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
		{"PROPFIND", `{"error":"invalid_depth","field":"depth","message":"allowed values: 0, 1","received":"infinity","retryable":false}`},
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

// TestWebDAVPropertyInXML: a WebDAV PROPPATCH's property, an element of
// its XML body, is a field: checked before the upstream, blamed and
// echoed by its element path.
func TestWebDAVPropertyInXML(t *testing.T) {
	cfg, err := rules.Parse("webdav.yaml", []byte(`upstream: http://127.0.0.1:1
routes:
  set_author:
    method: PROPPATCH
    path: /dav/{file}
    body: xml
    validate: before
    fields:
      author: {in: xml, key: propertyupdate/set/prop/Author, required: true, max_length: 8}
`))
	if err != nil {
		t.Fatal(err)
	}
	up := &roundTrip{status: 207, header: http.Header{"Content-Type": {"application/xml"}}, body: []byte(`<multistatus xmlns="DAV:"/>`)}
	p, err := New(cfg, Options{Transport: up})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	patch := func(author string) *httptest.ResponseRecorder {
		body := `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:x"><D:set><D:prop><Z:Author>` + author + `</Z:Author></D:prop></D:set></D:propertyupdate>`
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("PROPPATCH", "/dav/a.txt", strings.NewReader(body)))
		return w
	}
	if w := patch("Ada Lovelace"); w.Code != 400 || w.Body.String() != `{"error":"invalid_author","field":"author","message":"must be a string of at most 8 characters","received":"Ada Lovelace","retryable":false}` {
		t.Errorf("too long: %d %s", w.Code, w.Body)
	}
	if w := patch("Ada"); w.Code != 207 {
		t.Errorf("conforming: %d %s", w.Code, w.Body)
	}
}
