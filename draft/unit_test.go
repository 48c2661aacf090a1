package draft

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
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
		{Method: "TRACE", Path: "/a", Requests: 5},
		{Method: "GET", Path: "/b", Requests: 5, Errors: []observe.Error{{Status: 302, Text: "moved", Count: 5}}},
	}}
	d, err := Write(doc, "r.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# Left out: GET /a/{y}", "# Left out: TRACE /a", "# Left out: get_b: an error of status 302"} {
		if !strings.Contains(string(d.Rules), s) {
			t.Errorf("the rules lack %q:\n%s", s, d.Rules)
		}
	}
}
