package draft

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
	"gopkg.in/yaml.v3"
)

func TestRouteName(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/tickets/{ticket_id}", "get_ticket"},
		{"PATCH", "/tickets/{ticket_id}", "update_ticket"},
		{"PUT", "/tickets/{ticket_id}", "replace_ticket"},
		{"DELETE", "/tickets/{ticket_id}", "delete_ticket"},
		{"POST", "/tickets", "create_ticket"},
		{"GET", "/tickets", "list_tickets"},
		{"POST", "/tickets/{ticket_id}/assign", "assign_ticket"},
		{"GET", "/tickets/{ticket_id}/status", "get_ticket_status"},
		{"GET", "/customers/{customer_id}/tickets", "list_customer_tickets"},
		{"POST", "/customers/{customer_id}/tickets", "create_customer_ticket"},
		{"GET", "/api/v2/categories/{id}", "get_category"},
		{"GET", "/boxes", "list_boxes"},
		{"POST", "/boxes", "create_box"},
		{"GET", "/userProfiles/{id}", "get_user_profile"},
		{"GET", "/", "get_root"},
		{"GET", "/{id}", "get_item"},
		{"GET", "/search", "get_search"},
	} {
		if got := routeName(tc.method, tc.path); got != tc.want {
			t.Errorf("routeName(%s %s) = %s, want %s", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestNameRoutesUnique(t *testing.T) {
	ops := []*observe.Operation{
		{Method: "GET", Path: "/v1/tickets"},
		{Method: "GET", Path: "/v2/tickets"},
		{Route: "list_tickets", Method: "GET", Path: "/search"},
		{Route: "list_tickets", Method: "GET", Path: "/find"}, // a name taken twice
	}
	names, _ := nameRoutes(ops)
	want := []string{"list_tickets_2", "list_tickets_3", "list_tickets", "get_find"}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("names = %v, want %v", names, want)
			break
		}
	}
}

// Literal parts of a shape are escaped, so a pattern takes exactly what the
// shape says.
func TestShapePattern(t *testing.T) {
	for _, tc := range []struct {
		shape, want string
		match, miss []string
	}{
		{"T-0", `^T-[0-9]+$`, []string{"T-8841", "T-1"}, []string{"T-", "t-1", "T-1a", "XT-1"}},
		{"v0.0+beta", `^v[0-9]+\.[0-9]+\+beta$`, []string{"v1.2+beta"}, []string{"v1x2+beta", "v1.2beta", "v1.2++beta"}},
		{"$0 (0)?", `^\$[0-9]+ \([0-9]+\)\?$`, []string{"$5 (3)?"}, []string{"$5 3", "5 (3)"}},
		{"a|b[0]*", `^a\|b\[[0-9]+\]\*$`, []string{"a|b[12]*"}, []string{"a", "b[1]"}},
	} {
		got := shapePattern(tc.shape)
		if got != tc.want {
			t.Errorf("shapePattern(%q) = %s, want %s", tc.shape, got, tc.want)
			continue
		}
		re := regexp.MustCompile(got)
		for _, s := range tc.match {
			if !re.MatchString(s) {
				t.Errorf("%s does not match %q", got, s)
			}
		}
		for _, s := range tc.miss {
			if re.MatchString(s) {
				t.Errorf("%s matches %q", got, s)
			}
		}
	}
}

// A body's identifying text is matched literally, anchored where the
// sample allows: an HTML title, else the first line, else anywhere.
func TestBodyRegex(t *testing.T) {
	for _, tc := range []struct{ text, ct, sample, want string }{
		{"500 Internal Server Error", "text/html", "<html><title>500 Internal Server Error</title>", `(?i:<title>)\s*500 Internal Server Error\s*(?i:</title>)`},
		{"Error: $5.00+ (USD)? [x] a|b ^c", "text/plain", "Error: $5.00+ (USD)? [x] a|b ^c\nmore", `\A\s*Error: \$5\.00\+ \(USD\)\? \[x\] a\|b \^c`},
		{"Oops * again", "text/plain", "prefix\nOops * again", `Oops \* again`},
		// A title cut short, or decoded by the recorder, falls back.
		{"Tom & Jerry", "text/html", "<title>Tom &amp; Jerry</title> Tom & Jerry", `Tom & Jerry`},
		{"No sample", "text/plain", "", `\A\s*No sample`},
	} {
		got := bodyRegex(tc.text, tc.ct, tc.sample)
		if got != tc.want {
			t.Errorf("bodyRegex(%q) = %s, want %s", tc.text, got, tc.want)
		}
		if tc.sample != "" && !regexp.MustCompile(got).MatchString(tc.sample) {
			t.Errorf("%s does not match its sample %q", got, tc.sample)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	if _, err := Write(nil, "r.yaml", Options{}); err == nil {
		t.Error("a nil document: no error")
	}
	if _, err := Write(&observe.Document{}, "r.yaml", Options{}); err == nil {
		t.Error("a document with no operation: no error")
	}
	doc := &observe.Document{Operations: []observe.Operation{{Method: "GET", Path: "/x", Requests: 1}}}
	if _, err := Write(doc, "r.yaml", Options{Upstream: "not a url"}); err == nil {
		t.Error("a bad upstream: no error")
	}
	if _, err := Write(&observe.Document{Operations: []observe.Operation{{Method: "TRACE", Path: "/x"}}}, "r.yaml", Options{}); err == nil {
		t.Error("no routable operation: no error")
	}
}

// Raising MinEvidence past every count comments everything out, and the
// draft still loads.
func TestMinEvidence(t *testing.T) {
	doc := readDocument(t, "testdata/tickets.json")
	d, err := Write(doc, "r.yaml", Options{MinEvidence: 1000, MinEnumSupport: 1000})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse("r.yaml", d.Rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cfg.Routes {
		if len(r.Errors) > 0 {
			t.Errorf("route %s has %d active error rules; want none", r.Name, len(r.Errors))
		}
		for _, f := range r.Fields {
			if f.Enum != nil || f.Format != nil || f.Pattern != nil {
				t.Errorf("route %s field %s has an active constraint", r.Name, f.Name)
			}
		}
	}
}

// An operation a rule file cannot route, and an error with a status no
// rule can match, are left out and named in the header.
func TestSkipped(t *testing.T) {
	doc := &observe.Document{Since: time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC), Operations: []observe.Operation{
		{Method: "GET", Path: "/a/{x}", Requests: 5, Successes: 5},
		{Method: "GET", Path: "/a/{y}", Requests: 5, Successes: 5},
		{Method: "TR ACE", Path: "/a", Requests: 5},
		{Method: "GET", Path: "/b", Requests: 5, Successes: 1, Errors: []observe.Error{{Status: 302, Text: "moved", Count: 5}}},
	}}
	d, err := Write(doc, "r.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# Left out: GET /a/{y}", "# Left out: TR ACE /a", "# Left out: get_b: an error of status 302"} {
		if !strings.Contains(string(d.Rules), s) {
			t.Errorf("the rules lack %q:\n%s", s, d.Rules)
		}
	}
}

// Names without digits are templated from the evidence of many paths: a
// label between fixed words, a repository name of several segments, an
// item below a collection listed. Fixed words at a path's end stay, and
// the routes drafted are at most 1.2 times the API's real ones.
func TestPathTemplates(t *testing.T) {
	doc := readDocument(t, "testdata/paths.json")
	d, err := Write(doc, "paths.rules.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Parse("paths.rules.yaml", d.Rules)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range cfg.Routes {
		got[r.Method+" "+r.Path] = true
	}
	real := []string{
		"GET /api/v1/query", "GET /api/v1/query_range", "GET /api/v1/labels", "GET /api/v1/series",
		"GET /api/v1/rules", "GET /api/v1/alerts", "GET /api/v1/targets", "GET /api/v1/status/config",
		"GET /api/v1/status/flags", "GET /api/v1/status/buildinfo", "GET /api/v1/label/{name}/values",
		"GET /v2/", "GET /v2/_catalog", "GET /v2/{name:.+}/tags/list", "GET /v2/{name:.+}/manifests/{manifest_id}",
		"GET /v2/{name:.+}/blobs/{blob_id}", "HEAD /v2/{name:.+}/manifests/{manifest_id}",
		"PUT /v2/{name:.+}/manifests/{manifest_id}", "GET /api/v2/silences", "GET /api/v2/silences/{name}",
		"GET /tickets/search", "GET /tickets/{ticket_id}",
	}
	for _, want := range real {
		if !got[want] {
			t.Errorf("no route %s", want)
		}
	}
	for _, extra := range []string{"GET /v2/{name:.+}/manifests/latest", "GET /api/v1/{name}", "GET /tickets/{name}"} {
		if got[extra] {
			t.Errorf("a route %s", extra)
		}
	}
	if n, max := len(cfg.Routes), len(real)*12/10; n > max {
		t.Errorf("%d routes drafted for %d real ones; want at most %d", n, len(real), max)
	}
	t.Logf("%d routes drafted for %d real ones, from %d operations observed", len(cfg.Routes), len(real), len(doc.Operations))
}

// Codes drafted from an upstream's words read as words: the name the text
// spells as code or quotes, else its first words without numbers.
func TestTextCode(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"No such ticket", "no_such_ticket"},
		{`0.generatorURL in body must be of type uri: "not a url"`, "invalid_generator_url"},
		{"createdBy in body is required", "missing_created_by"},
		{`invalid parameter "step": cannot parse "fast" to a valid duration`, "invalid_step"},
		{"1:5: parse error: unexpected character", "parse_error_unexpected_character"},
		{"404 page not found", "page_not_found"},
		{"due_at must be a date", "invalid_due_at"},
	} {
		if got := textCode(tc.text); got != tc.want {
			t.Errorf("textCode(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}

// An enum is drafted live only for a small closed set of identifiers that
// several callers sent and beyond which a value was refused; a format or
// a pattern only when every successful value takes it, whole.
func TestFieldInference(t *testing.T) {
	v := func(s string, n, callers int64) observe.Value {
		return observe.Value{Value: s, Count: n, Callers: callers}
	}
	refusal := []observe.Error{{Status: 400, Text: "bad", Blamed: []observe.Blame{{Field: "f", In: "query", Count: 3,
		Changes: []observe.Change{{From: "alerts", To: "alert", Count: 3}}}}}}
	for _, tc := range []struct {
		name   string
		good   []observe.Value
		errs   []observe.Error
		long   int64
		kind   string // the constraint drafted
		active bool
	}{
		{"a closed set, refused beyond, several callers", []observe.Value{v("alert", 9, 3), v("record", 6, 2)}, refusal, 0, "enum", true},
		{"each value one caller's own: names", []observe.Value{v("alice-bot", 9, 1), v("bob-bot", 6, 1), v("carol-bot", 6, 1)}, refusal, 0, "enum", false},
		{"nothing seen refused", []observe.Value{v("alert", 9, 3), v("record", 6, 2)}, nil, 0, "enum", false},
		{"free text", []observe.Value{v("maintenance window", 9, 3), v("deploy", 6, 3)}, refusal, 0, "", false},
		{"expressions", []observe.Value{v("up", 9, 3), v("rate(x[5m])", 6, 3)}, refusal, 0, "", false},
		{"durations", []observe.Value{v("15s", 9, 3), v("1m", 6, 3), v("60", 6, 3)}, refusal, 0, "", false},
		{"one shape, whole", []observe.Value{v("T-1", 3, 1), v("T-22", 3, 1), v("T-333", 3, 1)}, nil, 0, "pattern", true},
		{"one shape, but cut", []observe.Value{v("T-1", 3, 1), v("T-22", 3, 1), v("T-333", 3, 1)}, nil, 3, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var good int64
			shapes := map[string]int64{}
			for _, g := range tc.good {
				good += g.Count
				shapes[string(regexp.MustCompile(`[0-9]+`).ReplaceAll([]byte(g.Value), []byte("0")))] += g.Count
			}
			obs := &observe.Field{Name: "f", In: "query", Kind: "string", Seen: good, Succeeded: good, Good: tc.good, Long: tc.long,
				Bad: []observe.Value{{Value: "alerts", Count: 3}}}
			if tc.long == 0 {
				for s, n := range shapes {
					obs.Shapes = append(obs.Shapes, observe.Value{Value: s, Count: n})
				}
			}
			op := &observe.Operation{Method: "GET", Path: "/x", Requests: good, Successes: good, Errors: tc.errs}
			f := inferField(op, obs, Options{}.withDefaults())
			if f.kind != tc.kind || f.active != tc.active {
				t.Errorf("drafted %q, active %v (%s; %s); want %q, active %v", f.kind, f.active, f.evidence, f.why, tc.kind, tc.active)
			}
		})
	}
}

// TestJSONNodeKeepsScalarsAsWritten: a body that is a JSON string, null or
// a number is written as its text, which signpost test sends as it is; an
// object or array becomes YAML that reads as the same JSON.
func TestJSONNodeKeepsScalarsAsWritten(t *testing.T) {
	for body, want := range map[string]string{
		`"body must be the string hello"`: `'"body must be the string hello"'`,
		`null`:                            `"null"`,
		`1.50`:                            `"1.50"`,
		`{"error":"Invalid status"}`:      `{error: Invalid status}`,
		`[1,"a"]`:                         `[1, a]`,
	} {
		out, err := yaml.Marshal(jsonNode([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("jsonNode(%s) writes %s, want %s", body, got, want)
		}
	}
}

// TestUnixTimes: whole numbers that read as Unix times, in seconds or
// milliseconds, are a time, not a number: the draft leaves integer
// commented out for them.
func TestUnixTimes(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{[]string{"1765000000", "1796568941"}, true},
		{[]string{"1765000000123"}, true},
		{[]string{"1765000000", "42"}, false},
		{[]string{"10", "250"}, false},
		{[]string{"0765000000"}, false},
		{nil, false},
	} {
		obs := &observe.Field{}
		for _, v := range tc.values {
			obs.Good = append(obs.Good, observe.Value{Value: v, Count: 1})
		}
		if got := unixTimes(obs); got != tc.want {
			t.Errorf("unixTimes(%q) = %v, want %v", tc.values, got, tc.want)
		}
	}
}
