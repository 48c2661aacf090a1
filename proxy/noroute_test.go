package proxy

import (
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestNoRouteNamesThePathsRoutes: a request no route matches, refused by
// the upstream as 404 or 405, is answered with the routes the file
// declares for its path and the methods the upstream allows, in both
// formats; other answers keep the plain wrapped body.
func TestNoRouteNamesThePathsRoutes(t *testing.T) {
	const routes = `the routes for it: PATCH /tickets/{ticket_id} is update_ticket, GET /tickets/{ticket_id} is get_ticket`
	cases := []struct {
		name           string
		format         rules.BodyFormat
		method, target string
		status         int
		allow          string
		want           string
	}{
		{"405 with Allow", rules.FormatJSON, "DELETE", "/tickets/T-1", 405, "GET, PATCH",
			`{"error":"upstream_rejected","message":"no declared route takes this method on this path (405 Method Not Allowed); ` + routes + `; the upstream allows GET, PATCH","retryable":false}`},
		{"405 as problem+json", rules.FormatProblem, "DELETE", "/tickets/T-1", 405, "GET, PATCH",
			`{"type":"about:blank","title":"Method Not Allowed","status":405,"code":"upstream_rejected","detail":"no declared route takes this method on this path (405 Method Not Allowed); ` + routes + `; the upstream allows GET, PATCH","retryable":false}`},
		{"404 for a declared path", rules.FormatJSON, "POST", "/tickets/T-1", 404, "",
			`{"error":"upstream_rejected","message":"no declared route takes this method on this path (404 Not Found); ` + routes + `","retryable":false}`},
		{"405 with an Allow not of methods", rules.FormatJSON, "DELETE", "/tickets/T-1", 405, "GET, <b>x</b>",
			`{"error":"upstream_rejected","message":"no declared route takes this method on this path (405 Method Not Allowed); ` + routes + `","retryable":false}`},
		{"405 on an undeclared path", rules.FormatJSON, "DELETE", "/users/U-1", 405, "GET",
			`{"error":"upstream_rejected","message":"no declared route takes this method on this path (405 Method Not Allowed); the upstream allows GET","retryable":false}`},
		{"404 on an undeclared path", rules.FormatJSON, "GET", "/users/U-1", 404, "", rejectedBody(404, "")},
		{"404 with a trailing slash", rules.FormatJSON, "GET", "/tickets/T-1/", 404, "",
			`{"error":"upstream_rejected","message":"no declared route takes this path (404 Not Found); the route it most likely means is GET /tickets/{ticket_id}, get_ticket","retryable":false}`},
		{"404 on a path that names a route", rules.FormatJSON, "POST", "/update_ticket", 404, "",
			`{"error":"upstream_rejected","message":"no declared route takes this path (404 Not Found); the route it most likely means is PATCH /tickets/{ticket_id}, update_ticket","retryable":false}`},
		{"404 a slip from a template", rules.FormatJSON, "GET", "/ticket/T-1", 404, "",
			`{"error":"upstream_rejected","message":"no declared route takes this path (404 Not Found); the route it most likely means is GET /tickets/{ticket_id}, get_ticket","retryable":false}`},
		{"404 a path in another case", rules.FormatJSON, "PATCH", "/Tickets/T-1", 404, "",
			`{"error":"upstream_rejected","message":"no declared route takes this path (404 Not Found); the route it most likely means is PATCH /tickets/{ticket_id}, update_ticket","retryable":false}`},
		{"400 on a declared path", rules.FormatJSON, "DELETE", "/tickets/T-1", 400, "", rejectedBody(400, "")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"text/html"}}
			if tc.allow != "" {
				h.Set("Allow", tc.allow)
			}
			f := newProxy(t, &roundTrip{status: tc.status, header: h, body: []byte("<html>nope</html>")})
			f.p.cfg.Format = tc.format
			w := f.do(tc.method, tc.target, "")
			if w.Code != tc.status || w.Body.String() != tc.want {
				t.Errorf("got %d %s\nwant %d %s", w.Code, w.Body, tc.status, tc.want)
			}
		})
	}
}
