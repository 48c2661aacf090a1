package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/test/bench/rulegen"
)

// overlapping declares routes whose literal and variable segments overlap,
// so that the most specific match wins only if the index keeps the rank
// order across the tree's levels; some catch-alls come before the specific
// routes they would otherwise hide.
var overlapping = []struct{ name, method, path string }{
	{"search", "GET", "/tickets/search"},
	{"ticket", "GET", "/tickets/{id}"},
	{"tenant_ticket", "GET", "/{tenant}/tickets/{id}"},
	{"tickets_export", "GET", "/tickets/export/{format}"},
	{"numbered", "GET", "/tickets/{id:[0-9]+}/history"},
	{"history", "GET", "/tickets/{id}/history"},
	{"root", "GET", "/"},
	{"catch_tenant", "GET", "/{tenant}"},
	{"update", "PATCH", "/tickets/{id}"},
	{"deep", "GET", "/a/b/c/d/e/f/g/h/i/j/k"},
	{"deep_var", "GET", "/a/b/c/d/e/f/g/h/i/{x}/k"},
	{"trailing", "GET", "/tickets/"},
	{"mixed", "GET", "/files/v{version}/list"},
	{"endpoint", "GET", "/api/v1/{endpoint}"},
	{"query", "GET", "/api/v1/query"},
	{"any_file", "GET", "/static/{rest:.*}"},
	{"file_in_dir", "GET", "/static/{dir}/{name}"},
	{"tenant_file", "GET", "/{tenant}/files/{id}"},
	{"file", "GET", "/{tenant}/files/latest"},
	{"files_of", "GET", "/{tenant}/{kind}/latest"},
}

// overlappingRoutes returns the index of the overlapping routes, and a
// gorilla/mux router that tries them all in precedence order.
func overlappingRoutes() (*routeIndex, *mux.Router) {
	var routes []*rules.Route
	linear := mux.NewRouter()
	for _, r := range overlapping {
		routes = append(routes, &rules.Route{Name: r.name, Method: r.method, Path: r.path})
	}
	for _, r := range byPrecedence(routes) {
		linear.NewRoute().Name(r.Name).Methods(r.Method).Path(r.Path)
	}
	return newRouteIndex(routes), linear
}

// TestRouteIndexAgreesWithALinearWalk routes requests through the index
// and through gorilla/mux trying every route in file order.
func TestRouteIndexAgreesWithALinearWalk(t *testing.T) {
	ix, linear := overlappingRoutes()
	requests := []struct{ method, path, want string }{
		{"GET", "/tickets/search", "search"},
		{"GET", "/tickets/T-1", "ticket"},
		{"GET", "/acme/tickets/T-1", "tenant_ticket"},
		{"GET", "/tickets/tickets/T-1", "tenant_ticket"},
		{"GET", "/tickets/export/csv", "tickets_export"},
		{"GET", "/tickets/42/history", "numbered"},
		{"GET", "/tickets/T-42/history", "history"},
		{"GET", "/", "root"},
		{"GET", "/tickets", "catch_tenant"},
		{"GET", "/tickets/", "trailing"},
		{"PATCH", "/tickets/T-1", "update"},
		{"PATCH", "/tickets/search", "update"},
		{"DELETE", "/tickets/T-1", ""},
		{"GET", "/a/b/c/d/e/f/g/h/i/j/k", "deep"},
		{"GET", "/a/b/c/d/e/f/g/h/i/z/k", "deep_var"},
		{"GET", "/files/v2/list", "mixed"},
		{"GET", "/files/2/list", ""},
		{"GET", "/nowhere/at/all", ""},
		{"GET", "/tickets//history", ""},
		{"GET", "/tickets/T-1/", ""},
		{"GET", "/acme/tickets/", ""},
		{"GET", "/tickets/%2F/history", ""},
		{"GET", "/tickets/caf%C3%A9/history", "history"},
		{"PATCH", "/tickets/a%20b", "update"},
		{"PATCH", "/tickets", ""},
		{"GET", "/api/v1/query", "query"},
		{"GET", "/api/v1/labels", "endpoint"},
		{"GET", "/static/css/site.css", "file_in_dir"},
		{"GET", "/static/site.css", "any_file"},
		{"GET", "/static/a/b/c", "any_file"},
		{"GET", "/acme/files/latest", "file"},
		{"GET", "/acme/files/F-1", "tenant_file"},
		{"GET", "/acme/pages/latest", "files_of"},
	}
	for _, rq := range requests {
		r := httptest.NewRequest(rq.method, rq.path, nil)
		got, vars := ix.find(r)
		var m mux.RouteMatch
		want := ""
		if linear.Match(r, &m) && m.MatchErr == nil {
			want = m.Route.GetName()
		}
		if want != rq.want {
			t.Fatalf("%s %s: the linear walk picks %q; the table says %q", rq.method, rq.path, want, rq.want)
		}
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != want {
			t.Errorf("%s %s: index picks %q; a linear walk picks %q", rq.method, rq.path, name, want)
		}
		if want != "" && fmt.Sprint(vars) != fmt.Sprint(m.Vars) {
			t.Errorf("%s %s: variables %v; want %v", rq.method, rq.path, vars, m.Vars)
		}
	}
}

// generated returns a rule file of n routes with 10 error rules each.
func generated(b *testing.B, n int) *rules.Config {
	b.Helper()
	var buf bytes.Buffer
	if err := rulegen.Write(&buf, n, 10); err != nil {
		b.Fatal(err)
	}
	cfg, err := rules.Parse(fmt.Sprintf("generated-%d.yaml", n), buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// BenchmarkRouteFor finds the last declared route, which a linear walk
// reaches only after every other, in files of 10 and 1,000 routes.
func BenchmarkRouteFor(b *testing.B) {
	for _, n := range []int{10, 1000} {
		cfg := generated(b, n)
		ix := newRouteIndex(cfg.Routes)
		r := httptest.NewRequest("PATCH", "/tickets/T-1", nil)
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if route, _ := ix.find(r); route == nil || route.Name != "update_ticket" {
					b.Fatalf("routed to %v", route)
				}
			}
		})
	}
}

// BenchmarkRuleFileSize runs the success and rewrite paths through the
// handler in files of 10 and 1,000 routes with 10 error rules each: the
// cost should not grow with the file.
func BenchmarkRuleFileSize(b *testing.B) {
	for _, n := range []int{10, 1000} {
		cfg := generated(b, n)
		for _, path := range []struct {
			name   string
			up     fixedUpstream
			body   string
			status int
		}{
			{"success", fixedUpstream{200, okBody}, `{"status":"open"}`, 200},
			{"rewrite", fixedUpstream{400, []byte(`{"error":"Invalid status"}`)}, `{"status":"OPEN"}`, 400},
		} {
			p, err := New(cfg, Options{Transport: path.up})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/routes=%d", path.name, n), func(b *testing.B) {
				serveLoop(b, p, http.MethodPatch, "/tickets/T-8841", path.body, path.status)
			})
			p.Close()
		}
	}
}

// FuzzRouteIndex routes any path through the index and through gorilla/mux
// trying every route in file order: both must pick the same route and
// variables.
func FuzzRouteIndex(f *testing.F) {
	ix, linear := overlappingRoutes()
	for _, p := range []string{"/tickets/T-1", "/tickets//x", "/a/b/c/d/e/f/g/h/i/z/k", "/", "/files/v1/list"} {
		f.Add("GET", p)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		r, err := http.NewRequest(method, "http://x"+path, nil)
		if err != nil || r.URL.Path != path && r.URL.RawPath == "" {
			return
		}
		got, vars := ix.find(r)
		var m mux.RouteMatch
		want := ""
		if linear.Match(r, &m) && m.MatchErr == nil {
			want = m.Route.GetName()
		}
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != want || want != "" && fmt.Sprint(vars) != fmt.Sprint(m.Vars) {
			t.Errorf("%s %q: index picks %q %v; a linear walk picks %q %v", method, path, name, vars, want, m.Vars)
		}
	})
}
