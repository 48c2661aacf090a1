package proxy

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
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
		b.WriteString(r.Method + " " + r.Path + " is " + r.Name)
	}
	if all > len(named) {
		b.WriteString(", and " + strconv.Itoa(all-len(named)) + " more")
	}
	if allow != "" {
		b.WriteString("; the upstream allows " + allow)
	}
	e.Message = b.String()
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
