package admin

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

// adminRules declares one of each kind of match and advice, so that
// GET /rules shows every member.
const adminRules = `upstream: http://upstream.test:8081
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    validate: before
    fields:
      ticket_id: {in: path, pattern: '^T-[0-9]+$', example: T-8841}
      status: {required: true, enum: [open, pending, closed]}
      trace: {in: header, key: X-Trace}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
      - match: {status: 409, json: error, contains: assign}
        code: ticket_unassigned
        message: an unassigned ticket cannot be closed
        next_call: assign_ticket(ticket_id)
      - match: {status: [429, 503], body: 'slow down'}
        code: rate_limited
        message: too many updates
        retry_after: 5
      - match: {status: 4xx, json: error, regex: '^Locked'}
        code: ticket_locked
        message: the ticket is locked
        futile: tell the user the ticket is locked
  assign_ticket:
    method: POST
    path: /tickets/{ticket_id}/assign
    format: problem+json
    unmatched: passthrough
    fields:
      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}
      assignee: {required: true}
`

// adminFixture is an admin handler in front of a proxy serving
// adminRules, with its own registry.
type adminFixture struct {
	p   *serving
	m   *metrics.Metrics
	reg *prometheus.Registry
}

// serving is a proxy as the admin endpoints read it: its rules, its
// upstream, and the aliases it proposes.
type serving struct {
	cfg      *rules.Config
	aliases  []learn.Proposal
	observed observe.Document
	answers  []observe.Answer
}

func (s *serving) Config() *rules.Config             { return s.cfg }
func (s *serving) Upstream() *url.URL                { return s.cfg.Upstream }
func (s *serving) Aliases() ([]learn.Proposal, bool) { return s.aliases, true }
func (s *serving) Observed() (observe.Document, []observe.Answer) {
	return s.observed, s.answers
}

func newAdminFixture(t *testing.T) *adminFixture {
	t.Helper()
	cfg, err := rules.Parse("admin.yaml", []byte(adminRules))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	return &adminFixture{&serving{cfg: cfg, aliases: []learn.Proposal{}}, metrics.New(reg), reg}
}

// admin returns an Admin for the fixture's proxy and registry.
func (f *adminFixture) admin() Admin {
	return Admin{Gatherer: f.reg, Current: func() Serving { return f.p }}
}

// get serves one GET from the admin handler.
func get(t *testing.T, a Admin, target string) *http.Response {
	t.Helper()
	w := httptest.NewRecorder()
	Handler(a).ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	return w.Result()
}

func bodyOf(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var update = flag.Bool("update", false, "rewrite golden files under testdata/ instead of comparing with them")

// TestAdminWithNothing checks that every endpoint answers, and says what
// is missing, when no Admin function is set and no registry given.
func TestAdminWithNothing(t *testing.T) {
	a := Admin{}
	for _, tt := range []struct {
		target      string
		status      int
		contentType string
		body        string   // exact, when set
		contains    []string // otherwise
	}{
		{"/livez", 200, "text/plain; charset=utf-8", "ok\n", nil},
		{"/readyz", 503, "text/plain; charset=utf-8", "[-]rules failed: no rules loaded\nreadyz check failed\n", nil},
		{"/readyz?verbose", 503, "text/plain; charset=utf-8", "[-]rules failed: no rules loaded\nreadyz check failed\n", nil},
		{"/rules", 503, "application/json", `{"error":"no_rules","message":"no rules are loaded"}` + "\n", nil},
		{"/aliases", 200, "application/json", `{"aliases":[]}` + "\n", nil},
		{"/draft", 200, "application/json", "", []string{`"version": 1`, `"operations": []`}},
		{"/observed", 200, "application/json", "{\n  \"answers\": []\n}\n", nil},
		{"/metrics", 200, "text/plain; version=0.0.4; charset=utf-8; escaping=underscores", "", nil},
		{"/", 200, "text/html; charset=utf-8", "", []string{
			`<span class="bad">none loaded</span>`,
			`<span class="bad">not ready</span>`,
			`<li class="bad">[-]rules failed: no rules loaded</li>`,
			`<td id="reload">not tracked here</td>`,
			`<tr class="none"><td colspan="9">no routes and no traffic yet</td></tr>`,
			`Alias learning is off`,
		}},
	} {
		res := get(t, a, tt.target)
		body := bodyOf(t, res)
		if res.StatusCode != tt.status || res.Header.Get("Content-Type") != tt.contentType {
			t.Errorf("GET %s: %d %q, want %d %q\n%s", tt.target, res.StatusCode, res.Header.Get("Content-Type"), tt.status, tt.contentType, body)
		}
		if tt.contains == nil && body != tt.body {
			t.Errorf("GET %s: body %q, want %q", tt.target, body, tt.body)
		}
		for _, want := range tt.contains {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: body lacks %s\n%s", tt.target, want, body)
			}
		}
	}
	for _, tt := range []struct {
		method, target string
		status         int
	}{
		{"GET", "/nope", 404},
		{"GET", "/index.html", 404},
		{"POST", "/", 405},
		{"POST", "/readyz", 405},
		{"HEAD", "/livez", 200},
	} {
		w := httptest.NewRecorder()
		Handler(a).ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
		if w.Code != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.target, w.Code, tt.status)
		}
	}
}

func TestReadyz(t *testing.T) {
	f := newAdminFixture(t)
	failing := func() []Check {
		return []Check{{Name: "upstream", Err: errors.New("dial tcp 127.0.0.1:8081: connect: connection refused")},
			{Name: "reload", Err: nil}}
	}
	for _, tt := range []struct {
		name   string
		ready  func() []Check
		query  string
		status int
		body   string
	}{
		{"rules only", nil, "", 200, "ok\n"},
		{"rules only, verbose", nil, "?verbose", 200, "[+]rules ok\nreadyz check passed\n"},
		{"passing", func() []Check { return []Check{{Name: "upstream"}} }, "?verbose=1", 200,
			"[+]rules ok\n[+]upstream ok\nreadyz check passed\n"},
		{"failing", failing, "", 503,
			"[+]rules ok\n[-]upstream failed: dial tcp 127.0.0.1:8081: connect: connection refused\n[+]reload ok\nreadyz check failed\n"},
		{"failing, verbose", failing, "?verbose", 503,
			"[+]rules ok\n[-]upstream failed: dial tcp 127.0.0.1:8081: connect: connection refused\n[+]reload ok\nreadyz check failed\n"},
		{"failing check excluded", failing, "?exclude=upstream", 200, "ok\n"},
		{"failing check excluded, verbose", failing, "?exclude=upstream&verbose", 200,
			"[+]rules ok\n[+]upstream excluded: ok\n[+]reload ok\nreadyz check passed\n"},
		{"a reason over lines", func() []Check {
			return []Check{{Name: "rules", Err: rules.Problems{{File: "t.yaml", Line: 3, Column: 5, Message: "one"}, {File: "t.yaml", Line: 9, Column: 1, Message: "two"}}}}
		}, "", 503, "[-]rules failed: t.yaml:3:5: one; t.yaml:9:1: two\nreadyz check failed\n"},
		{"an empty reason", func() []Check { return []Check{{Name: "upstream", Err: errors.New(" ")}} }, "", 503,
			"[+]rules ok\n[-]upstream failed: no reason given\nreadyz check failed\n"},
	} {
		a := f.admin()
		a.Ready = tt.ready
		res := get(t, a, "/readyz"+tt.query)
		if body := bodyOf(t, res); res.StatusCode != tt.status || body != tt.body {
			t.Errorf("%s: GET /readyz%s = %d %q, want %d %q", tt.name, tt.query, res.StatusCode, body, tt.status, tt.body)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", tt.name, cc)
		}
	}
}

// TestRulesEndpoint compares GET /rules with testdata/admin_rules.json;
// go test -run TestRulesEndpoint -update rewrites it.
func TestRulesEndpoint(t *testing.T) {
	f := newAdminFixture(t)
	a := f.admin()
	since := time.Date(2026, 3, 11, 9, 14, 2, 0, time.UTC)
	a.Reloads = func() ReloadStatus { return ReloadStatus{Since: since} }
	res := get(t, a, "/rules")
	got := []byte(bodyOf(t, res))
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || !json.Valid(got) {
		t.Fatalf("GET /rules: %d %q\n%s", res.StatusCode, res.Header.Get("Content-Type"), got)
	}
	const golden = "testdata/admin_rules.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("GET /rules differs from %s (-update rewrites it):\n%s", golden, got)
	}
}

// TestStatsPage drives the collectors as the proxy does and reads the
// figures back from the page, odd label values included.
func TestStatsPage(t *testing.T) {
	f := newAdminFixture(t)
	m := f.m
	m.Rejected("update_ticket", "invalid_status", "status")
	m.Rejected("update_ticket", "invalid_status", "status")
	m.Rejected("update_ticket", "ticket_unassigned", "")
	m.Unmatched("update_ticket", 400)
	m.Unmatched("update_ticket", 502)
	m.Unmatched("update_ticket", 502)
	m.Unmatched("update_ticket", 999)
	m.Unmatched(metrics.Unrouted, 404)
	for _, n := range []int{1, 2, 3, 3, 6, 12} {
		m.Recovered("update_ticket", "invalid_status", n)
	}
	m.Recovered("update_ticket", "ticket_unassigned", 4)
	m.Unrecovered("update_ticket", "ticket_unassigned")
	m.Unrecovered("update_ticket", "invalid_status")
	m.RecoveryStopped("update_ticket", "ticket_unassigned")
	for range 3 {
		m.RepeatStopped("update_ticket", "ticket_unassigned")
	}
	for _, o := range []string{metrics.OutcomeRewritten, metrics.OutcomeSuccess, metrics.OutcomeSuccess, metrics.OutcomeWrapped} {
		m.Duration("update_ticket", o, 0.01)
	}
	// Label values come from rules and status codes; these never could,
	// and must still be text.
	const odd = `<script>alert("x")</script>&amp;`
	m.Rejected(odd, odd, `"><img src=x>`)
	f.p.aliases = []learn.Proposal{{Pair: learn.Pair{Route: "update_ticket", Field: "status", Rejected: `</td><b>Closed`, Accepted: "closed"}, Count: 3}}

	a := f.admin()
	now := time.Now()
	a.Reloads = func() ReloadStatus {
		return ReloadStatus{At: now.Add(-time.Minute), OK: false, Since: now.Add(-time.Hour),
			Problems: rules.Problems{{File: "admin.yaml", Line: 7, Column: 5, Path: "routes.update_ticket", Message: `unknown key "feilds"; did you mean "fields"? <b>`}}}
	}
	a.Ready = func() []Check { return []Check{{Name: "upstream", Err: errors.New("dial <tcp>: refused")}} }
	res := get(t, a, "/")
	page := bodyOf(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("GET /: %d\n%s", res.StatusCode, page)
	}
	for _, want := range []string{
		// The overview: declared routes in file order, then the rest.
		`<tr data-route="update_ticket"><td><a href="#route-update_ticket">update_ticket</a></td><td>PATCH /tickets/{ticket_id}</td><td class="n">4</td><td class="n">3</td><td class="n">4</td><td class="n">10</td><td class="n">40%</td><td class="n">20%</td><td class="n">3</td></tr>`,
		`<tr data-route="assign_ticket"><td>assign_ticket</td><td>POST /tickets/{ticket_id}/assign</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n">0</td><td class="n">–</td><td class="n">–</td><td class="n">0</td></tr>`,
		// The route's own tables.
		`<p class="meta"><span class="pos">admin.yaml:3:3</span> · 4 requests: 2 success, 1 rewritten, 1 wrapped</p>`,
		"<tr><td>invalid_status</td><td>status</td><td class=\"n\">2</td></tr>\n<tr><td>ticket_unassigned</td><td>—</td><td class=\"n\">1</td></tr>",
		`<tfoot><tr><th colspan="2">total</th><td class="n">3</td></tr></tfoot>`,
		"<tr><td>400</td><td class=\"n\">1</td></tr>\n<tr><td>502</td><td class=\"n\">2</td></tr>\n<tr><td>other</td><td class=\"n\">1</td></tr>",
		`<tr><td>1</td><td class="n">1</td><td class="n">10%</td><td><meter min="0" max="1" value="0.1"></meter></td></tr>`,
		`<tr><td>3</td><td class="n">2</td><td class="n">20%</td>`,
		`<tr><td>4–5</td><td class="n">1</td><td class="n">10%</td>`,
		`<tr><td>6–7</td><td class="n">1</td>`,
		`<tr><td>8–10</td><td class="n">0</td><td class="n">0%</td>`,
		`<tr><td>more than 10</td><td class="n">1</td>`,
		`<tr><td>never</td><td class="n">2</td><td class="n">20%</td>`,
		`<tr><td>told to stop</td><td class="n">1</td><td class="n">10%</td>`,
		`<section class="route" id="route-(unrouted)" data-route="(unrouted)">`,
		`0 requests · requests no route matches</p>`,
		// Odd values, escaped wherever they land.
		`<td>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;amp;</td><td>&#34;&gt;&lt;img src=x&gt;</td>`,
		`data-route="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;amp;"`,
		`<a href="#route-%3cscript%3ealert%28%22x%22%29%3c%2fscript%3e%26amp%3b">`,
		`<td><code>&lt;/td&gt;&lt;b&gt;Closed</code></td><td><code>closed</code></td><td class="n">3</td>`,
		`<li class="bad">[-]upstream failed: dial &lt;tcp&gt;: refused</li>`,
		`<span class="bad">rejected</span>`,
		`1 problem; still serving the rules loaded `,
		`<li><code>admin.yaml:7:5: routes.update_ticket: unknown key &#34;feilds&#34;; did you mean &#34;fields&#34;? &lt;b&gt;</code></li>`,
		`<body data-refresh="5">`,
		`<noscript><meta http-equiv="refresh" content="5"></noscript>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks\n\t%s", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<img src=x>", "<b>Closed", "<tcp>", "? <b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %q unescaped", bad)
		}
	}
	if t.Failed() {
		t.Logf("the page:\n%s", page)
	}
}

// TestStatsPageDeclaredSeries: the series the rules name, exported at 0
// before any request, neither list a code nobody was rejected with nor
// mark a route without traffic as active.
func TestStatsPageDeclaredSeries(t *testing.T) {
	f := newAdminFixture(t)
	f.m.Declare(f.p.cfg)
	f.m.Rejected("update_ticket", "invalid_status", "status")
	page := bodyOf(t, get(t, f.admin(), "/"))
	for _, want := range []string{
		`<tr data-route="assign_ticket"><td>assign_ticket</td>`,
		`<tr><td>invalid_status</td><td>status</td><td class="n">1</td></tr>` + "\n</tbody>",
		`<tfoot><tr><th colspan="2">total</th><td class="n">1</td></tr></tfoot>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks\n\t%s", want)
		}
	}
	for _, bad := range []string{"ticket_unassigned", "invalid_ticket_id", `id="route-assign_ticket"`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page shows %q, which no request was counted under", bad)
		}
	}
	if t.Failed() {
		t.Logf("the page:\n%s", page)
	}
}

// TestStatsPageHeaders checks the headers, and that the policy admits the
// inline style and script exactly as rendered.
func TestStatsPageHeaders(t *testing.T) {
	f := newAdminFixture(t)
	res := get(t, f.admin(), "/")
	page := bodyOf(t, res)
	for k, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, el := range []string{"style", "script"} {
		m := regexp.MustCompile(`(?s)<`+el+`>(.*?)</`+el+`>`).FindAllStringSubmatch(page, -1)
		if len(m) != 1 {
			t.Fatalf("the page has %d <%s> elements, want 1", len(m), el)
		}
		sum := sha256.Sum256([]byte(m[0][1]))
		want := el + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s: the rendered <%s> would be blocked", csp, want, el)
		}
	}
	if !strings.HasPrefix(csp, "default-src 'none'; ") {
		t.Errorf("Content-Security-Policy %q does not start from default-src 'none'", csp)
	}
}

func TestStatsPageRefresh(t *testing.T) {
	f := newAdminFixture(t)
	for _, tt := range []struct {
		query, want string
		noscript    bool
	}{
		{"", `data-refresh="5"`, true},
		{"?refresh=2", `data-refresh="2"`, true},
		{"?refresh=0", `data-refresh="0"`, false},
		{"?refresh=99999", `data-refresh="3600"`, true},
		{"?refresh=-1", `data-refresh="5"`, true},
		{"?refresh=soon", `data-refresh="5"`, true},
	} {
		page := bodyOf(t, get(t, f.admin(), "/"+tt.query))
		if !strings.Contains(page, tt.want) {
			t.Errorf("GET /%s: the page lacks %s", tt.query, tt.want)
		}
		if got := strings.Contains(page, `<noscript><meta http-equiv="refresh"`); got != tt.noscript {
			t.Errorf("GET /%s: a refresh for readers without scripts: %v, want %v", tt.query, got, tt.noscript)
		}
	}
}

// TestStatsPageReloads checks the reload line for each state of Reloads.
func TestStatsPageReloads(t *testing.T) {
	f := newAdminFixture(t)
	at := time.Now().Add(-90 * time.Second)
	for _, tt := range []struct {
		name string
		st   ReloadStatus
		want string
	}{
		{"none yet", ReloadStatus{Since: at}, `<td id="reload">none since start; rules loaded ` + at.Format("2006-01-02 15:04:05 MST") + ` (1m30s ago)</td>`},
		{"none yet, no time", ReloadStatus{}, `<td id="reload">none since start</td>`},
		{"succeeded", ReloadStatus{At: at, OK: true, Since: at}, `<td id="reload"><span class="ok">succeeded</span> ` + at.Format("2006-01-02 15:04:05 MST") + ` (1m30s ago)</td>`},
		{"rejected", ReloadStatus{At: at, Problems: rules.Problems{{File: "a.yaml", Message: "x"}, {File: "a.yaml", Message: "y"}}},
			"<td id=\"reload\"><span class=\"bad\">rejected</span> " + at.Format("2006-01-02 15:04:05 MST") + " (1m30s ago): 2 problems\n<ul class=\"problems\">\n<li><code>a.yaml: x</code></li>\n<li><code>a.yaml: y</code></li>\n</ul></td>"},
	} {
		a := f.admin()
		a.Reloads = func() ReloadStatus { return tt.st }
		if page := bodyOf(t, get(t, a, "/")); !strings.Contains(page, tt.want) {
			t.Errorf("%s: the page lacks\n\t%s", tt.name, tt.want)
		}
	}
}

// TestAliasesEndpointUnchanged keeps /aliases as it was.
func TestAliasesEndpointUnchanged(t *testing.T) {
	f := newAdminFixture(t)
	f.p.aliases = []learn.Proposal{{Pair: learn.Pair{Route: "update_ticket", Field: "status", Rejected: "done", Accepted: "closed"}, Count: 4}}
	res := get(t, f.admin(), "/aliases")
	want := `{"aliases":[{"route":"update_ticket","field":"status","alias":"done","value":"closed","count":4}]}` + "\n"
	if body := bodyOf(t, res); body != want {
		t.Errorf("GET /aliases = %s, want %s", body, want)
	}
}

// TestObserveMode checks what the admin listener shows of observe mode:
// the record as /draft, the would-be answers as /observed, and both on the
// stats page, beside the upstream's body, only when something observes.
func TestObserveMode(t *testing.T) {
	f := newAdminFixture(t)
	if body := bodyOf(t, get(t, f.admin(), "/")); strings.Contains(body, `id="observe"`) {
		t.Error("the stats page shows an observe mode section while nothing observes")
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f.p.observed = observe.Document{Version: observe.DocumentVersion, Operations: []observe.Operation{{
		Method: "GET", Path: "/customers", Requests: 8,
		Errors: []observe.Error{{Status: 500, Text: "500 <Internal> Server Error", Count: 4, FirstSeen: at, LastSeen: at}},
	}}}
	f.p.answers = []observe.Answer{{At: at, Route: "update_ticket", RequestID: "req-1", Method: "PATCH", Path: "/tickets/T-1",
		Status: 400, Code: "invalid_status", Upstream: `{"error":"Invalid status"}`,
		Would: `{"error":"invalid_status","field":"status","received":"OPEN"}`}}

	page := bodyOf(t, get(t, f.admin(), "/"))
	for _, want := range []string{
		`<section id="observe">`,
		`<td>update_ticket</td><td>PATCH /tickets/T-1<br><span class="pos">req-1</span></td><td class="n">400</td>`,
		`<code>{&#34;error&#34;:&#34;Invalid status&#34;}</code>`,
		`<code>{&#34;error&#34;:&#34;invalid_status&#34;,&#34;field&#34;:&#34;status&#34;,&#34;received&#34;:&#34;OPEN&#34;}</code>`,
		`<td>GET /customers</td><td class="n">500</td><td><code>500 &lt;Internal&gt; Server Error</code></td><td class="n">4</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the stats page lacks %s", want)
		}
	}
	var doc observe.Document
	if err := json.Unmarshal([]byte(bodyOf(t, get(t, f.admin(), "/draft"))), &doc); err != nil || len(doc.Operations) != 1 || doc.Operations[0].Errors[0].Count != 4 {
		t.Errorf("GET /draft = %+v (%v), want the recorded document", doc, err)
	}
	var observed struct{ Answers []observe.Answer }
	if err := json.Unmarshal([]byte(bodyOf(t, get(t, f.admin(), "/observed"))), &observed); err != nil || len(observed.Answers) != 1 || observed.Answers[0].Code != "invalid_status" {
		t.Errorf("GET /observed = %+v (%v), want the answer kept", observed, err)
	}
}
