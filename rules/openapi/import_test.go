package openapi

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// importFile imports a spec of testdata and loads the rule file written,
// which must load without problems or warnings.
func importFile(t *testing.T, name string) *rules.Config {
	t.Helper()
	text := importText(t, name)
	cfg, err := rules.Parse(name+".rules.yaml", []byte(text))
	if err != nil {
		t.Fatalf("the imported rule file does not load:\n%v\n%s", err, text)
	}
	if ws := cfg.Warnings(); len(ws) > 0 {
		t.Errorf("signpost check warns about the imported rule file:\n%v\n%s", ws, text)
	}
	return cfg
}

// importText imports a spec of testdata and returns the rule file written.
func importText(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Import(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Text)
}

// TestImportDescriptions: an operation's summary, and its description
// when short, become the route's description, which its tool states.
func TestImportDescriptions(t *testing.T) {
	cfg := importFile(t, "events.yaml")
	for _, tc := range []struct{ route, description, tool string }{
		{"list_events", "List events. Newest first, twenty to a page.", "List events. Newest first, twenty to a page. GET /events."},
		{"create_event", "Create an event.", "Create an event. POST /events."},
		{"get_events_id", "Read one event.", "Read one event. GET /events/{id}."},
	} {
		r := cfg.Route(tc.route)
		if r == nil {
			t.Errorf("no route %s", tc.route)
			continue
		}
		if r.Description != tc.description {
			t.Errorf("%s: description %q; want %q", tc.route, r.Description, tc.description)
		}
		if got := r.Tool().Description; got != tc.tool {
			t.Errorf("%s: tool description %q; want %q", tc.route, got, tc.tool)
		}
	}
}

// TestImportOptionalParameters: an optional parameter or property with
// nothing to check is declared, so that its tool takes it, with the
// spec's description or else what kind of value it is.
func TestImportOptionalParameters(t *testing.T) {
	cfg := importFile(t, "events.yaml")
	for _, tc := range []struct {
		route       string
		args        []string // the tool's arguments, in order
		description map[string]string
	}{
		{"list_events", []string{"since", "cursor", "tags"},
			map[string]string{"cursor": "Where the previous page ended", "tags": "an array"}},
		{"create_event", []string{"starts_at", "day", "meta", "labels"},
			map[string]string{"starts_at": "When the event starts", "meta": "an object", "labels": "an array"}},
	} {
		r := cfg.Route(tc.route)
		var args []string
		for _, p := range r.InputSchema().Properties {
			args = append(args, p.Name)
		}
		if !slices.Equal(args, tc.args) {
			t.Errorf("%s: tool arguments %v; want %v", tc.route, args, tc.args)
		}
		for name, want := range tc.description {
			if f := r.Field(name); f == nil || f.Description != want {
				t.Errorf("%s.%s: description %+v; want %q", tc.route, name, f, want)
			}
		}
	}
}

// TestImportFormats: each OpenAPI format becomes a format that accepts
// what the spec allows and refuses what it does not: date-time takes any
// offset.
func TestImportFormats(t *testing.T) {
	cfg := importFile(t, "events.yaml")
	for _, tc := range []struct {
		route, field, format string
		accept, refuse       []string
	}{
		{"list_events", "since", "rfc3339",
			[]string{"2026-03-11T09:14:02Z", "2026-03-11T10:14:02+01:00", "2026-03-11T04:14:02.5-05:00", "2026-03-11t09:14:02z", "2016-12-31T23:59:60Z"},
			[]string{"2026-03-11", "2026-03-11T09:14:02", "2026-03-11 09:14:02Z", "2026-02-30T09:14:02Z", "2026-03-11T09:14:02+25:00", "2026-03-11T12:59:60Z"}},
		{"create_event", "starts_at", "rfc3339", []string{"2026-03-11T10:14:02+01:00"}, []string{"tomorrow"}},
		{"create_event", "day", "date", []string{"2026-03-11"}, []string{"2026-03-11T09:14:02Z"}},
		{"get_events_id", "id", "uuid", []string{"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b"}, []string{"42"}},
	} {
		f := cfg.Route(tc.route).Field(tc.field)
		if f.Format == nil || f.Format.Name != tc.format {
			t.Errorf("%s.%s: format %+v; want %s", tc.route, tc.field, f.Format, tc.format)
			continue
		}
		for _, v := range tc.accept {
			if !f.Check(rules.Text(v)) {
				t.Errorf("%s.%s refuses %q, which the spec allows", tc.route, tc.field, v)
			}
		}
		for _, v := range tc.refuse {
			if f.Check(rules.Text(v)) {
				t.Errorf("%s.%s accepts %q, which the spec does not", tc.route, tc.field, v)
			}
		}
	}
}

// importCase is a spec of testdata and what its rule file must hold.
type importCase struct {
	spec string
	// upstream is the file's upstream; "" when it gives none.
	upstream string
	// routes are "name METHOD path", in the file's order.
	routes []string
	// contains are lines, or runs of lines, the file must hold.
	contains []string
}

// check imports the spec, loads the rule file and compares it with tc.
func (tc importCase) check(t *testing.T) {
	t.Helper()
	cfg := importFile(t, tc.spec)
	text := importText(t, tc.spec)
	upstream := ""
	if cfg.Upstream != nil {
		upstream = cfg.Upstream.String()
	}
	if upstream != tc.upstream {
		t.Errorf("upstream %q; want %q", upstream, tc.upstream)
	}
	var routes []string
	for _, r := range cfg.Routes {
		routes = append(routes, r.Name+" "+r.Method+" "+r.Path)
	}
	if !slices.Equal(routes, tc.routes) {
		t.Errorf("routes:\n  %s\nwant:\n  %s", strings.Join(routes, "\n  "), strings.Join(tc.routes, "\n  "))
	}
	for _, s := range tc.contains {
		if !strings.Contains(text, s) {
			t.Errorf("the rule file lacks %q:\n%s", s, text)
		}
	}
}
