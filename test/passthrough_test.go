package test

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// TestSuccessPassthrough checks that answers below 400 reach the caller
// exactly as the upstream sent them: status, end-to-end headers (repeated
// ones included) and body bytes, on routes with rules and without.
func TestSuccessPassthrough(t *testing.T) {
	t.Parallel()
	csv := []byte("id,title\r\nT-1,\"Export, large\"\r\nT-2,caf\xc3\xa9\x00\xff\r\n")
	large := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(large)
	weirdJSON := []byte("{ \"ticket_id\" : \"T-8841\",\n  \"status\":\"open\" , \"n\": 1.50e0 }\n")

	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Upstream-Trace", "trace-4711")
		h.Add("Set-Cookie", "a=1; Path=/")
		h.Add("Set-Cookie", "b=2; Path=/; HttpOnly")
		h.Set("Cache-Control", "private, max-age=60")
		switch r.Method + " " + r.URL.Path {
		case "GET /reports/weekly.csv":
			h.Set("Content-Type", "text/csv; charset=utf-8")
			h.Set("Etag", `"v42"`)
			h.Set("Last-Modified", "Wed, 11 Mar 2026 09:14:02 GMT")
			_, _ = w.Write(csv)
		case "GET /tickets/T-8841": // a route with rules: success is still untouched
			if r.Header.Get("If-None-Match") == `"t1"` {
				h.Set("Etag", `"t1"`)
				w.WriteHeader(http.StatusNotModified)
				return
			}
			h.Set("Content-Type", "application/json")
			h.Set("Etag", `"t1"`)
			_, _ = w.Write(weirdJSON)
		case "POST /tickets": // a route whose request body signpost buffers
			body, _ := io.ReadAll(r.Body)
			h.Set("Content-Type", "application/vnd.tickets+json")
			h.Set("Location", "/tickets/T-9000")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(append([]byte(`{"ticket_id":"T-9000","echo":`), append(body, '}')...))
		case "POST /uploads": // unrouted, with a body
			body, _ := io.ReadAll(r.Body)
			h.Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte("stored " + strconv.Itoa(len(body)) + " bytes\n"))
		case "GET /blobs/large": // no Content-Length: chunked both ways
			h.Set("Content-Type", "application/octet-stream")
			for i := 0; i < len(large); i += 64 << 10 {
				_, _ = w.Write(large[i : i+64<<10])
				http.NewResponseController(w).Flush()
			}
		case "GET /old":
			http.Redirect(w, r, "/new?x=1", http.StatusMovedPermanently)
		case "DELETE /tickets/T-8841/watchers/me":
			w.WriteHeader(http.StatusNoContent)
		default:
			t.Errorf("upstream: unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	sp := startSignpost(t, ticketsConfig, up.URL)

	tests := []struct {
		name, method, path string
		body               []byte
		header             []string
	}{
		{"GET non-JSON body with custom headers", "GET", "/reports/weekly.csv", nil, nil},
		{"GET on a route with rules", "GET", "/tickets/T-8841", nil, nil},
		{"GET 304 on a route with rules", "GET", "/tickets/T-8841", nil, []string{"If-None-Match", `"t1"`}},
		{"POST with body on a buffering route", "POST", "/tickets",
			[]byte(`{"title":"Login loops", "status":"open","priority":"p1","customer_id":"C-1042"}`),
			[]string{"Content-Type", "application/json"}},
		{"POST with body unrouted", "POST", "/uploads", bytes.Repeat([]byte("z"), 5000), []string{"Content-Type", "text/plain"}},
		{"GET 1 MiB chunked binary", "GET", "/blobs/large", nil, nil},
		{"redirect", "GET", "/old", nil, nil},
		{"204", "DELETE", "/tickets/T-8841/watchers/me", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			direct := send(t, tt.method, up.URL+tt.path, tt.body, tt.header...)
			through := send(t, tt.method, sp.URL+tt.path, tt.body, tt.header...)
			if direct.status >= 400 {
				t.Fatalf("the upstream itself answered %d: %s", direct.status, direct.body)
			}
			wantSame(t, through, direct)
			if through.contentLength != direct.contentLength {
				t.Errorf("ContentLength = %d, upstream's %d", through.contentLength, direct.contentLength)
			}
		})
	}
	for _, m := range []string{"signpost_rejections_total", "signpost_upstream_errors_unmatched_total", "signpost_upstream_error_bodies_oversized_total"} {
		if n := sp.total(t, m); n != 0 {
			t.Errorf("%s = %v after only successes, want 0", m, n)
		}
	}
}

// rejectedBody is the body an unmatched 4xx is wrapped in: phrase is the
// status with its text, quoted the upstream's one-line message or "".
// quoted must need no JSON escaping.
func rejectedBody(phrase, quoted string) string {
	s := `{"error":"upstream_rejected","message":"the upstream rejected the call (` + phrase + `) for a reason signpost has no rule for",`
	if quoted != "" {
		s += `"upstream_message":"` + quoted + `",`
	}
	return s + `"retryable":false}`
}

// failedBody is the body an unmatched 5xx that is not transient is wrapped in.
func failedBody(phrase string) string {
	return `{"error":"upstream_failed","message":"the upstream failed (` + phrase + `); the call may or may not have taken effect, so check before repeating it","retryable":false}`
}

// unmatchedCase is an upstream error no rule of configs/tickets.yaml
// explains: passed through under unmatched: passthrough, wrapped under the
// default policy.
type unmatchedCase struct {
	name, method, path, body string
	route, status            string // the unmatched counter's labels
	wrapped                  string // the body under the wrap policy
}

// ticketAPINotJSON are the ticket API's own errors to a body that is not
// JSON, which no rule matches and the declared checks explain.
var ticketAPINotJSON = []unmatchedCase{
	{"400 body not JSON on assign", "POST", "/tickets/T-8842/assign", `not json`, "assign_ticket", "400",
		rejectedBody("400 Bad Request", "Bad request")},
	{"400 with an unknown message", "PATCH", "/tickets/T-8841", `not json`, "update_ticket", "400",
		rejectedBody("400 Bad Request", "Bad request")},
}

// ticketAPIUnmatched are the ticket API's own errors that no rule matches
// and no declared field explains.
var ticketAPIUnmatched = []unmatchedCase{
	{"404 unrouted path", "GET", "/nowhere", ``, "(unrouted)", "404",
		rejectedBody("404 Not Found", "404 page not found")},
	{"405 method no route declares", "DELETE", "/tickets/T-8841", ``, "(unrouted)", "405",
		`{"error":"upstream_rejected","message":"no declared route takes this method on this path (405 Method Not Allowed); ` +
			`the routes for it: GET /tickets/{ticket_id} is get_ticket, PATCH /tickets/{ticket_id} is update_ticket; the upstream allows GET, HEAD, PATCH",` +
			`"upstream_message":"Method Not Allowed","retryable":false}`},
}

// oddAnswers are upstream errors of every shape, for cannedUpstream.
var oddAnswers = map[string]canned{
	"PATCH /tickets/T-1": {status: 418, header: []string{"Content-Type", "text/plain", "X-Teapot", "yes"}, body: []byte("I'm a teapot\n")},
	"PATCH /tickets/T-2": {status: 400, header: []string{"Content-Type", "application/json"}, body: []byte(`{"error":["Invalid status"]}`)},
	"PATCH /tickets/T-3": {status: 400, header: []string{"Content-Type", "application/json"}, body: []byte(`{"error":"invalid status"}`)},
	"PATCH /tickets/T-4": {status: 500, header: []string{"Content-Type", "application/json"}, body: []byte(`{"error":"Invalid status"}`)},
	"GET /tickets/T-5":   {status: 404, header: []string{"Content-Type", "text/html"}, body: []byte("<html><body><h1>404</h1>No such ticket</body></html>\n")},
	"GET /tickets/T-6":   {status: 404, header: []string{"Content-Type", "application/json"}, body: []byte(`{"error":"No such ticket"`)},
	"GET /tickets/T-7":   {status: 404, header: []string{"Content-Type", "application/json"}, body: []byte(`{"error":"No such ticket, try T-8841"}`), chunked: true},
	"GET /ping":          {status: 503, header: []string{"Retry-After", "3"}, body: []byte("busy")},
	"GET /odd":           {status: 999, header: []string{"Content-Type", "text/plain"}, body: []byte("odd")},
}

var oddUnmatched = []unmatchedCase{
	{"418 teapot", "PATCH", "/tickets/T-1", `{"status":"open"}`, "update_ticket", "418",
		rejectedBody("418 I'm a teapot", "I'm a teapot")},
	{"400 error is a list", "PATCH", "/tickets/T-2", `{"status":"open"}`, "update_ticket", "400",
		rejectedBody("400 Bad Request", "")},
	{"400 message in another case", "PATCH", "/tickets/T-3", `{"status":"open"}`, "update_ticket", "400",
		rejectedBody("400 Bad Request", "invalid status")},
	{"500 with a matching message", "PATCH", "/tickets/T-4", `{"status":"OPEN"}`, "update_ticket", "500",
		failedBody("500 Internal Server Error")},
	{"404 HTML", "GET", "/tickets/T-5", ``, "get_ticket", "404",
		rejectedBody("404 Not Found", "")},
	{"404 truncated JSON", "GET", "/tickets/T-6", ``, "get_ticket", "404",
		rejectedBody("404 Not Found", "")},
	{"404 chunked, other message", "GET", "/tickets/T-7", ``, "get_ticket", "404",
		rejectedBody("404 Not Found", "No such ticket, try T-8841")},
	{"503 unrouted", "GET", "/ping", ``, "(unrouted)", "503",
		`{"error":"upstream_failed","message":"the upstream is unavailable for now (503 Service Unavailable); repeat the call shortly","retryable":true,"retry_after_seconds":3}`},
	{"999 counted as other", "GET", "/odd", ``, "(unrouted)", "other",
		failedBody("999")},
}

func (c unmatchedCase) reqBody() []byte {
	if c.body == "" {
		return nil
	}
	return []byte(c.body)
}

// TestUnmatchedErrorPassthrough checks that, under unmatched: passthrough,
// errors no rule matches reach the caller unchanged and are counted by
// route and status, with "(unrouted)" for requests that match no route.
func TestUnmatchedErrorPassthrough(t *testing.T) {
	t.Parallel()
	config := passthrough(t, ticketsConfig)
	for name, tc := range map[string]struct {
		upstream http.Handler
		cases    []unmatchedCase
	}{
		"ticket API":           {ticketapi.New().Handler(), ticketAPIUnmatched},
		"odd upstream answers": {nil, oddUnmatched},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := unmatchedUpstream(t, tc.upstream)
			sp := startSignpost(t, config, up.URL)
			for _, c := range tc.cases {
				t.Run(c.name, func(t *testing.T) {
					direct := send(t, c.method, up.URL+c.path, c.reqBody())
					if strconv.Itoa(direct.status) != c.status && c.status != "other" {
						t.Fatalf("the upstream answered %d, the case expects %s", direct.status, c.status)
					}
					before := sp.counter(t, "signpost_upstream_errors_unmatched_total", "route", c.route, "status", c.status)
					wantSame(t, send(t, c.method, sp.URL+c.path, c.reqBody()), direct)
					sp.wantCounter(t, before+1, "signpost_upstream_errors_unmatched_total", "route", c.route, "status", c.status)
				})
			}
			if n := sp.total(t, "signpost_rejections_total"); n != 0 {
				t.Errorf("signpost_rejections_total = %v, want 0", n)
			}
		})
	}
}

// unmatchedUpstream serves h, or the odd canned answers when h is nil.
func unmatchedUpstream(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	if h != nil {
		return newUpstream(t, h)
	}
	return cannedUpstream(t, oddAnswers)
}

// TestUnmatchedErrorWrapped sends the same errors through the shipped
// rules, whose default policy wraps them: the status is kept, the body is
// signpost's own with a generic code, the upstream's words are quoted only
// when they are one short line from a 4xx, and each is counted as
// unmatched.
func TestUnmatchedErrorWrapped(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		upstream http.Handler
		cases    []unmatchedCase
	}{
		// The ticket API's errors on a body that is not JSON are explained
		// by that body: TestUnmatchedErrorOnABodyNotJSON.
		"ticket API":           {ticketapi.New().Handler(), ticketAPIUnmatched},
		"odd upstream answers": {nil, oddUnmatched},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := unmatchedUpstream(t, tc.upstream)
			sp := startSignpost(t, ticketsConfig, up.URL)
			for _, c := range tc.cases {
				t.Run(c.name, func(t *testing.T) {
					status, _ := strconv.Atoi(c.status)
					if c.status == "other" {
						status = 999
					}
					before := sp.counter(t, "signpost_upstream_errors_unmatched_total", "route", c.route, "status", c.status)
					got := send(t, c.method, sp.URL+c.path, c.reqBody())
					wantJSONError(t, got, status, c.wrapped)
					sp.wantCounter(t, before+1, "signpost_upstream_errors_unmatched_total", "route", c.route, "status", c.status)
				})
			}
			if n := sp.total(t, "signpost_rejections_total"); n != 0 {
				t.Errorf("signpost_rejections_total = %v, want 0", n)
			}
		})
	}
}

// TestUnmatchedErrorOnABodyNotJSON sends the ticket API a body that is not
// JSON on routes with body fields: its bare 400, which no rule matches, is
// answered with what is wrong with the body, and counted as a rejection,
// not as an unmatched error.
func TestUnmatchedErrorOnABodyNotJSON(t *testing.T) {
	t.Parallel()
	sp := startSignpost(t, ticketsConfig, newUpstream(t, ticketapi.New().Handler()).URL)
	for _, c := range ticketAPINotJSON {
		t.Run(c.name, func(t *testing.T) {
			before := sp.counter(t, "signpost_rejections_total", "route", c.route, "code", "invalid_json_body", "field", "")
			got := send(t, c.method, sp.URL+c.path, c.reqBody())
			field := map[string]string{"assign_ticket": "assignee", "update_ticket": "status"}[c.route]
			wantJSONError(t, got, 400, `{"error":"invalid_json_body","message":"the request body is not JSON: text at byte 2 is not in double quotes; `+
				`send one JSON object with the fields `+field+`","retryable":false}`)
			sp.wantCounter(t, before+1, "signpost_rejections_total", "route", c.route, "code", "invalid_json_body", "field", "")
		})
	}
	if n := sp.total(t, "signpost_upstream_errors_unmatched_total"); n != 0 {
		t.Errorf("signpost_upstream_errors_unmatched_total = %v, want 0", n)
	}
}

// errorBody returns a JSON error body of exactly n bytes whose "error"
// matches the update_ticket rule, padded out with "pad".
func errorBody(n int) []byte {
	const head, tail = `{"error":"Invalid status","pad":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

// TestOversizedErrorBody checks the error body bound: a body over it is
// never read; under unmatched: passthrough it reaches the caller
// byte-identical, under the default policy it is wrapped unread, and
// either way it is counted as oversized and unmatched. A body at the bound
// is still rewritten, and limits.error_body in the rule file moves it.
func TestOversizedErrorBody(t *testing.T) {
	t.Parallel()
	jsonHeader := []string{"Content-Type", "application/json", "X-Upstream", "kept"}
	answers := map[string]canned{
		"PATCH /tickets/T-102400": {status: 400, header: jsonHeader, body: errorBody(100 << 10)},
		"PATCH /tickets/T-102401": {status: 400, header: jsonHeader, body: errorBody(100 << 10), chunked: true},
		"PATCH /tickets/T-65536":  {status: 400, header: jsonHeader, body: errorBody(64 << 10)},
		"PATCH /tickets/T-65537":  {status: 400, header: jsonHeader, body: errorBody(64<<10 + 1)},
		"PATCH /tickets/T-2048":   {status: 400, header: jsonHeader, body: errorBody(2 << 10)},
		"PATCH /tickets/T-2049":   {status: 400, header: jsonHeader, body: errorBody(2<<10 + 1)},
		"PATCH /tickets/T-3072":   {status: 400, header: jsonHeader, body: errorBody(3 << 10), chunked: true},
		"PATCH /tickets/T-204800": {status: 200, header: jsonHeader, body: errorBody(200 << 10)},
	}
	up := cannedUpstream(t, answers)
	const rewritten = `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`
	wrapped := rejectedBody("400 Bad Request", "")
	req := []byte(`{"status":"OPEN"}`)
	const small = "testdata/small_limits.yaml"

	tests := []struct {
		config   string
		ticket   string
		oversize bool // else rewritten
	}{
		{ticketsConfig, "T-102400", true},
		{ticketsConfig, "T-102401", true},
		{ticketsConfig, "T-65537", true},
		{ticketsConfig, "T-65536", false},
		{ticketsConfig, "T-3072", false},
		{small, "T-3072", true},
		{small, "T-2049", true},
		{small, "T-2048", false},
	}
	type policy struct {
		name  string
		procs map[string]*signpost
	}
	policies := []policy{{"wrap", map[string]*signpost{}}, {"passthrough", map[string]*signpost{}}}
	for _, c := range []string{ticketsConfig, small} {
		policies[0].procs[c] = startSignpost(t, c, up.URL)
		policies[1].procs[c] = startSignpost(t, passthrough(t, c), up.URL)
	}
	for _, pol := range policies {
		for _, tt := range tests {
			t.Run(pol.name+" "+tt.config+" "+tt.ticket, func(t *testing.T) {
				sp := pol.procs[tt.config]
				oversized := []string{"signpost_upstream_error_bodies_oversized_total", "route", "update_ticket"}
				unmatched := []string{"signpost_upstream_errors_unmatched_total", "route", "update_ticket", "status", "400"}
				rejections := []string{"signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status"}
				before := map[string]float64{}
				for _, m := range [][]string{oversized, unmatched, rejections} {
					before[m[0]] = sp.counter(t, m[0], m[1:]...)
				}
				// Each case is a caller of its own, never one sending a
				// rejected value again.
				through := send(t, "PATCH", sp.URL+"/tickets/"+tt.ticket, req, "X-Session-Id", t.Name())
				add := map[bool]float64{true: 1, false: 0}
				switch {
				case !tt.oversize:
					wantJSONError(t, through, http.StatusBadRequest, rewritten)
				case pol.name == "wrap":
					// Unread, it may say anything: wrapped, unjudged.
					wantJSONError(t, through, http.StatusBadRequest, wrapped)
					if through.header.Get("X-Upstream") != "kept" {
						t.Errorf("X-Upstream = %q on the wrapped answer, want the upstream's other headers kept", through.header.Get("X-Upstream"))
					}
				default:
					wantSame(t, through, send(t, "PATCH", up.URL+"/tickets/"+tt.ticket, req))
				}
				sp.wantCounter(t, before[oversized[0]]+add[tt.oversize], oversized[0], oversized[1:]...)
				sp.wantCounter(t, before[unmatched[0]]+add[tt.oversize], unmatched[0], unmatched[1:]...)
				sp.wantCounter(t, before[rejections[0]]+add[!tt.oversize], rejections[0], rejections[1:]...)
			})
		}
		// A large success is not an error body at all.
		sp := pol.procs[small]
		wantSame(t, send(t, "PATCH", sp.URL+"/tickets/T-204800", req), send(t, "PATCH", up.URL+"/tickets/T-204800", req))
		sp.wantCounter(t, 2, "signpost_upstream_error_bodies_oversized_total", "route", "update_ticket")
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGzipErrorBody checks gzip-encoded error bodies: one a rule matches is
// decoded and rewritten as plain JSON with its framing fixed. Anything else
// (no match, corrupt, truncated, inflating past the bound, an encoding
// signpost does not read) passes through byte-identical, still encoded,
// under unmatched: passthrough, and is wrapped as plain JSON under the
// default policy.
func TestGzipErrorBody(t *testing.T) {
	t.Parallel()
	gz := func(extra ...string) []string {
		return append([]string{"Content-Type", "application/json", "Content-Encoding", "gzip", "Vary", "Accept-Encoding"}, extra...)
	}
	matching := gzipped(t, []byte(`{"error":"Invalid status"}`))
	bomb := gzipped(t, errorBody(4<<20))
	answers := map[string]canned{
		"PATCH /tickets/T-1": {status: 400, header: gz("Etag", `"e1"`), body: matching},
		"PATCH /tickets/T-2": {status: 400, header: gz(), body: matching, chunked: true},
		"PATCH /tickets/T-3": {status: 400, header: []string{"Content-Type", "application/json", "Content-Encoding", "x-gzip"}, body: matching},
		"GET /tickets/T-404": {status: 404, header: gz(), body: gzipped(t, []byte(`{"error":"No such ticket"}`))},

		"PATCH /tickets/T-10": {status: 400, header: gz(), body: gzipped(t, []byte(`{"error":"Something else"}`))},
		"PATCH /tickets/T-11": {status: 400, header: gz(), body: []byte("this is not gzip at all")},
		"PATCH /tickets/T-12": {status: 400, header: gz(), body: matching[:len(matching)-6]},
		"PATCH /tickets/T-13": {status: 400, header: []string{"Content-Type", "application/json", "Content-Encoding", "br"}, body: []byte{0x1b, 0x19, 0x00, 0xf8}},
		"PATCH /tickets/T-14": {status: 400, header: gz(), body: bomb},
		"GET /tickets/T-200":  {status: 200, header: gz(), body: gzipped(t, []byte(`{"ticket_id":"T-200"}`))},
	}
	up := cannedUpstream(t, answers)
	procs := map[string]*signpost{
		"wrap":        startSignpost(t, ticketsConfig, up.URL),
		"passthrough": startSignpost(t, passthrough(t, ticketsConfig), up.URL),
	}
	req := []byte(`{"status":"OPEN"}`)
	const rewritten = `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`

	for policy, sp := range procs {
		for _, tt := range []struct {
			name, method, ticket, want string
			status                     int
		}{
			{"matching", "PATCH", "T-1", rewritten, 400},
			{"matching, chunked", "PATCH", "T-2", rewritten, 400},
			{"matching, x-gzip", "PATCH", "T-3", rewritten, 400},
			{"matching 404", "GET", "T-404", `{"error":"unknown_ticket","field":"ticket_id","message":"no ticket has this id","received":"T-404","retryable":false}`, 404},
		} {
			t.Run(policy+" rewritten "+tt.name, func(t *testing.T) {
				var body []byte
				if tt.method == "PATCH" {
					body = req
				}
				got := send(t, tt.method, sp.URL+"/tickets/"+tt.ticket, body, "Accept-Encoding", "gzip", "X-Session-Id", t.Name())
				wantJSONError(t, got, tt.status, tt.want)
				if et := got.header.Get("Etag"); et != "" {
					t.Errorf("Etag %s of the upstream body kept on the rewritten one", et)
				}
			})
		}
		sp.wantCounter(t, 3, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status")
	}

	for _, tt := range []struct{ name, ticket, metric, wrapped string }{
		{"not matching", "T-10", "unmatched", rejectedBody("400 Bad Request", "Something else")},
		{"corrupt", "T-11", "unmatched", rejectedBody("400 Bad Request", "")},
		{"truncated", "T-12", "unmatched", rejectedBody("400 Bad Request", "")},
		{"unread encoding", "T-13", "unmatched", rejectedBody("400 Bad Request", "")},
		{"inflates past the bound", "T-14", "oversized", rejectedBody("400 Bad Request", "")},
		{"success", "T-200", "", ""},
	} {
		// A well-formed status: no declared fault explains the error, which
		// passes through as it came.
		method, body := "PATCH", []byte(`{"status":"open"}`)
		if tt.metric == "" {
			method, body = "GET", nil
		}
		t.Run("passed through "+tt.name, func(t *testing.T) {
			direct := send(t, method, up.URL+"/tickets/"+tt.ticket, body, "Accept-Encoding", "gzip")
			through := send(t, method, procs["passthrough"].URL+"/tickets/"+tt.ticket, body, "Accept-Encoding", "gzip")
			wantSame(t, through, direct)
			if got := through.header.Get("Content-Encoding"); got == "" {
				t.Errorf("Content-Encoding dropped from a body passed through encoded")
			}
		})
		if tt.wrapped == "" {
			continue
		}
		t.Run("wrapped "+tt.name, func(t *testing.T) {
			// A well-formed status: no declared fault explains the error.
			got := send(t, method, procs["wrap"].URL+"/tickets/"+tt.ticket, []byte(`{"status":"open"}`), "Accept-Encoding", "gzip")
			wantJSONError(t, got, http.StatusBadRequest, tt.wrapped)
			if v := got.header.Get("Vary"); v != "Accept-Encoding" {
				t.Logf("Vary = %q on the wrapped body", v)
			}
		})
	}
	for _, sp := range procs {
		// Every error no rule matched is counted as unmatched, the bomb
		// also as oversized.
		sp.wantCounter(t, 5, "signpost_upstream_errors_unmatched_total", "route", "update_ticket", "status", "400")
		sp.wantCounter(t, 1, "signpost_upstream_error_bodies_oversized_total", "route", "update_ticket")
		sp.wantCounter(t, 3, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status")
	}
}

// TestUpstreamPathAndQuery checks how a request reaches an upstream whose
// base URL has a path: signpost routes on the caller's path, forwards it
// under the base path with the query untouched, and still rewrites.
func TestUpstreamPathAndQuery(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "PATCH" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"Invalid status"}`)
			return
		}
		_, _ = io.WriteString(w, `{"uri":"`+r.URL.RequestURI()+`"}`)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL+"/v1")

	got := send(t, "GET", sp.URL+"/tickets/T-8841?fields=a%2Cb&q=caf%C3%A9+x&q=2&empty=", nil)
	if want := `{"uri":"/v1/tickets/T-8841?fields=a%2Cb&q=caf%C3%A9+x&q=2&empty="}`; got.status != 200 || string(got.body) != want {
		t.Errorf("GET: %d %s, want 200 %s", got.status, got.body, want)
	}
	got = send(t, "PATCH", sp.URL+"/tickets/T-8841?dry_run=1", []byte(`{"status":"OPEN"}`))
	wantJSONError(t, got, http.StatusBadRequest,
		`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`)
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status")
}

// TestPassthroughAnswersWhatTheChecksExplain: under unmatched: passthrough,
// a 4xx the declared checks explain (here a body that is not JSON on a
// route with body fields) is answered as validate: before answers it,
// counted as a rejection, not relayed: the upstream's bare words tell the
// agent less, and may name a value the rule file hides.
func TestPassthroughAnswersWhatTheChecksExplain(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, ticketapi.New().Handler())
	sp := startSignpost(t, passthrough(t, ticketsConfig), up.URL)
	for _, c := range []struct{ method, path, fields, route string }{
		{"POST", "/tickets/T-8842/assign", "assignee", "assign_ticket"},
		{"PATCH", "/tickets/T-8841", "status", "update_ticket"},
	} {
		if direct := send(t, c.method, up.URL+c.path, []byte("not json")); direct.status != http.StatusBadRequest {
			t.Fatalf("the ticket API answered %d to a body that is not JSON; the test expects 400", direct.status)
		}
		got := send(t, c.method, sp.URL+c.path, []byte("not json"))
		wantJSONError(t, got, http.StatusBadRequest, `{"error":"invalid_json_body","message":"the request body is not JSON: text at byte 2 is not in double quotes; send one JSON object with the fields `+c.fields+`","retryable":false}`)
		sp.wantCounter(t, 1, "signpost_rejections_total", "route", c.route, "code", "invalid_json_body", "field", "")
	}
}
