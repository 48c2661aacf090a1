package proxy

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// routeIndex finds the route a request goes to without trying every route.
// Routes sit in a tree by method and then by the literal segments their
// path starts with, up to the first variable; a request walks down the
// tree along its own path and tries only the routes met on the way, the
// most specific first (rules.ComparePrecedence). gorilla/mux alone tries
// every route in turn, which grows with the file.
type routeIndex struct {
	byMethod map[string]*routeNode
	// ranked holds every route in rank order, matching paths alone.
	ranked []indexed
}

// routeNode holds the routes whose literal prefix ends here, and the
// nodes one literal segment further.
type routeNode struct {
	routes []indexed
	next   map[string]*routeNode
}

type indexed struct {
	order int // the route's rank (see byPrecedence): the lower wins
	route *rules.Route
	match *mux.Route
	// segments is the path template split at slashes, when every variable
	// fills a whole segment with mux's default pattern: such a template is
	// matched segment by segment, without a regular expression.
	segments []segment
	vars     int
}

// segment is one segment of a path template: a literal, or a variable.
type segment struct {
	literal string
	name    string // the variable's name; "" for a literal
}

// splitTemplate splits a path template into segments, or returns nil when
// a variable shares its segment with text or has a pattern of its own.
func splitTemplate(path string) (segs []segment, vars int) {
	if !strings.HasPrefix(path, "/") {
		return nil, 0
	}
	for _, part := range strings.Split(path[1:], "/") {
		open := strings.IndexByte(part, '{')
		switch {
		case open < 0 && !strings.Contains(part, "}"):
			segs = append(segs, segment{literal: part})
		case open == 0 && strings.IndexByte(part, '}') == len(part)-1 && !strings.ContainsAny(part[1:len(part)-1], "{}:"):
			segs = append(segs, segment{name: part[1 : len(part)-1]})
			vars++
		default:
			return nil, 0
		}
	}
	return segs, vars
}

// matchSegments reports whether path fits the template segs, and returns
// its variables, as mux's match of the same template would: in into, when
// it is not nil, an empty map left empty when the path does not fit.
func matchSegments(segs []segment, nvars int, path string, into map[string]string) (ok bool, vars map[string]string) {
	if path == "" || path[0] != '/' {
		return false, nil
	}
	rest := path[1:]
	vars = into
	defer func() {
		if !ok && len(into) > 0 {
			clear(into)
		}
	}()
	for i, sg := range segs {
		part := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			if i == len(segs)-1 {
				return false, nil
			}
			part, rest = rest[:j], rest[j+1:]
		} else if i < len(segs)-1 {
			return false, nil
		}
		if sg.name == "" {
			if part != sg.literal {
				return false, nil
			}
			continue
		}
		if part == "" {
			return false, nil
		}
		if vars == nil {
			vars = make(map[string]string, nvars)
		}
		vars[sg.name] = part
	}
	if vars == nil {
		vars = map[string]string{}
	}
	return true, vars
}

func newRouteIndex(routes []*rules.Route) *routeIndex {
	ix := &routeIndex{byMethod: make(map[string]*routeNode)}
	router := mux.NewRouter()
	for i, r := range byPrecedence(routes) {
		n := ix.byMethod[r.Method]
		if n == nil {
			n = &routeNode{}
			ix.byMethod[r.Method] = n
		}
		for seg, rest := cutSegment(r.Path); seg != "" || rest != ""; seg, rest = cutSegment(rest) {
			if strings.Contains(seg, "{") {
				break
			}
			if n.next == nil {
				n.next = make(map[string]*routeNode)
			}
			child := n.next[seg]
			if child == nil {
				child = &routeNode{}
				n.next[seg] = child
			}
			n = child
		}
		segs, vars := splitTemplate(r.Path)
		n.routes = append(n.routes, indexed{i, r, router.NewRoute().Methods(r.Method).Path(r.Path), segs, vars})
		ix.ranked = append(ix.ranked, indexed{i, r, router.NewRoute().Path(r.Path), segs, vars})
	}
	return ix
}

// cutSegment splits "/a/b/c" into "a" and "/b/c"; rest is "" after the
// last segment.
func cutSegment(path string) (seg, rest string) {
	if path == "" {
		return "", ""
	}
	path = strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}

// find returns the route that wins r among those matching it, with its
// path variables.
func (ix *routeIndex) find(r *http.Request) (*rules.Route, map[string]string) {
	return ix.findInto(r, nil)
}

// findInto is find, with the variables of a template that names whole
// segments written into vars, when it is not nil: an empty map.
func (ix *routeIndex) findInto(r *http.Request, vars map[string]string) (*rules.Route, map[string]string) {
	n := ix.byMethod[r.Method]
	if n == nil {
		return nil, nil
	}
	// The routes met along the path, one list per level, each in rank
	// order; they are merged by rank as they are tried.
	var room [8][]indexed
	levels := room[:0]
	path := r.URL.Path
	for n != nil {
		if len(n.routes) > 0 {
			levels = append(levels, n.routes)
		}
		if n.next == nil || path == "" {
			break
		}
		var seg string
		seg, path = cutSegment(path)
		n = n.next[seg]
	}
	for {
		best := -1
		for i := range levels {
			if len(levels[i]) > 0 && (best < 0 || levels[i][0].order < levels[best][0].order) {
				best = i
			}
		}
		if best < 0 {
			return nil, nil
		}
		e := levels[best][0]
		levels[best] = levels[best][1:]
		if e.segments != nil {
			if ok, vars := matchSegments(e.segments, e.vars, r.URL.Path, vars); ok {
				return e.route, vars
			}
			continue
		}
		var m mux.RouteMatch
		if e.match.Match(r, &m) && m.MatchErr == nil {
			return e.route, m.Vars
		}
	}
}

// byPrecedence returns routes in the order they are tried: the most
// specific first, so that /api/v1/query wins over an /api/v1/{endpoint}
// declared above it, and file order among equals.
func byPrecedence(routes []*rules.Route) []*rules.Route { return rules.ByPrecedence(routes) }

// chooseInGroup returns the route of a group (the routes of one method and
// path) a request is for: the first whose when: the request meets, else
// the one without when:, which takes the rest, else nil.
func chooseInGroup(group []*rules.Route, req *rewrite.Request) *rules.Route {
	for _, r := range group {
		if r.When == nil {
			return r
		}
		if v := req.Value(r.When.Field()); v.Exists() && v.String() == r.When.Equals {
			return r
		}
	}
	return nil
}
