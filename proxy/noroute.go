package proxy

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/suggest"
)

// Bounds of what a body names for a request no route matches.
const (
	maxRoutesNamed  = 4
	maxAllowMethods = 8
)

// pathRoutes returns the declared routes, of any method, whose template
// matches path, most specific first, with how many there are in all.
func (ix *routeIndex) pathRoutes(path string) (named []*rules.Route, all int) {
	var r *http.Request
	for _, e := range ix.ranked {
		var ok bool
		if e.segments != nil {
			ok, _ = matchSegments(e.segments, e.vars, path, nil)
		} else {
			if r == nil {
				r = &http.Request{Method: e.route.Method, URL: &url.URL{Path: path}}
			}
			r.Method = e.route.Method
			var m mux.RouteMatch
			ok = e.match.Match(r, &m) && m.MatchErr == nil
		}
		if ok {
			if all++; len(named) < maxRoutesNamed {
				named = append(named, e.route)
			}
		}
	}
	return named, all
}

// noRoute says, in the wrapped answer to a request no route matches that
// the upstream refused as 404 or 405, which routes the rule file declares
// for its path and which methods the upstream allows there, so that the
// agent can pick the right call. The message is left as it is when there
// is neither to say.
func (p *Proxy) noRoute(ex *exchange, e *rewrite.Error, h http.Header) {
	if ex.route != nil || e.Status != http.StatusNotFound && e.Status != http.StatusMethodNotAllowed {
		return
	}
	named, all := p.routes.pathRoutes(ex.req.Path)
	allow := ""
	if e.Status == http.StatusMethodNotAllowed {
		allow = allowed(h)
	}
	if len(named) == 0 && allow == "" {
		if near := p.routes.near(ex.req.Method, ex.req.Path); near != nil && e.Status == http.StatusNotFound {
			e.Message = "no declared route takes this path (404 Not Found); the route it most likely means is " +
				near.Method + " " + near.RawPath + ", " + near.Name
		}
		return
	}
	var b strings.Builder
	b.WriteString("no declared route takes this method on this path (")
	b.WriteString(strconv.Itoa(e.Status) + " " + http.StatusText(e.Status) + ")")
	for i, r := range named {
		if i == 0 {
			b.WriteString("; the routes for it: ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(r.Method + " " + r.RawPath + " is " + r.Name)
	}
	if all > len(named) {
		b.WriteString(", and " + strconv.Itoa(all-len(named)) + " more")
	}
	if allow != "" {
		b.WriteString("; the upstream allows " + allow)
	}
	e.Message = b.String()
}

// near returns the declared route a path no route takes most likely
// means, or nil: the path without its trailing slash, a path that names a
// route (POST /update_ticket), or a template whose literal segments are
// each a slip of the path's (/ticket/T-1 for /tickets/{ticket_id}). A
// route of the method wins a tie, then the first declared.
func (ix *routeIndex) near(method, path string) *rules.Route {
	if trimmed := strings.TrimRight(path, "/"); trimmed != path && trimmed != "" {
		if named, _ := ix.pathRoutes(trimmed); len(named) > 0 {
			return preferMethod(named, method)
		}
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var named []*rules.Route
	for _, e := range ix.ranked {
		for _, s := range segs {
			if strings.EqualFold(strings.ReplaceAll(s, "-", "_"), e.route.Name) {
				named = append(named, e.route)
				break
			}
		}
	}
	if len(named) > 0 {
		return preferMethod(named, method)
	}
	best, bestDistance := []*rules.Route(nil), 0
	for _, e := range ix.ranked {
		d, ok := slipOf(segs, strings.Split(strings.Trim(e.route.Path, "/"), "/"))
		switch {
		case !ok:
		case best == nil || d < bestDistance:
			best, bestDistance = []*rules.Route{e.route}, d
		case d == bestDistance:
			best = append(best, e.route)
		}
	}
	if best == nil {
		return nil
	}
	return preferMethod(best, method)
}

// slipOf returns how far the path's segments are from a template's, and
// whether each literal segment is within a slip of the path's (a variable
// takes any segment): the total edit distance, above zero.
func slipOf(segs, template []string) (int, bool) {
	if len(segs) != len(template) {
		return 0, false
	}
	total := 0
	for i, t := range template {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			continue
		}
		bound := suggest.Bound(len(t))
		d := suggest.Distance(strings.ToLower(segs[i]), strings.ToLower(t), bound)
		if d == 0 && segs[i] != t {
			d = 1 // a segment in another case: paths are matched as written
		}
		if d > bound {
			return 0, false
		}
		total += d
	}
	return total, total > 0
}

// preferMethod returns the first of routes declared for method, else the
// first.
func preferMethod(routes []*rules.Route, method string) *rules.Route {
	for _, r := range routes {
		if r.Method == method {
			return r
		}
	}
	return routes[0]
}

// allowed returns the methods of the upstream's Allow header, comma
// separated, when every one is a method's name in capitals; else "".
func allowed(h http.Header) string {
	var methods []string
	for _, v := range h.Values("Allow") {
		for m := range strings.SplitSeq(v, ",") {
			m = strings.TrimSpace(m)
			if m == "" {
				continue
			}
			if len(m) > 16 || strings.Trim(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" || len(methods) == maxAllowMethods {
				return ""
			}
			methods = append(methods, m)
		}
	}
	return strings.Join(methods, ", ")
}
