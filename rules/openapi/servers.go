package openapi

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/signpost-proxy/signpost/rules"
)

// specServer is where a server of the spec sends requests: routes carry
// its path, as requests do, and the upstream is its origin alone.
type specServer struct {
	// url is the server's URL with its variables at their defaults.
	url string
	// origin is the scheme and host of an absolute http(s) URL, else "".
	origin string
	// host is the host of a URL that names one without a scheme
	// (//api.example.com/v2), for an example; else "".
	host string
	// base is the URL's path without its final slash: "" for the root,
	// "/v2" for https://api.example.com/v2/ and for a relative /v2.
	base string
	// others are the values a variable in the path may take besides its
	// default, as "{version} may also be v1".
	others []string
}

// readServer reads where a server sends requests. A URL without a scheme
// whose first segment looks like a host (api.example.com/v2) is read as
// that host, as its author meant it, not as a relative path.
func readServer(s *openapi3.Server) specServer {
	raw := s.URL
	names := specKeys(s.Variables)
	u := raw
	for _, name := range names {
		if v := s.Variables[name]; v != nil {
			u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
		}
	}
	srv := specServer{url: u}
	pathPart := raw
	if i := strings.Index(raw, "//"); i >= 0 && !strings.Contains(raw[:i], "/") {
		rest := raw[i+2:]
		pathPart = ""
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			pathPart = rest[j:]
		}
	}
	for _, name := range names {
		v := s.Variables[name]
		if v == nil || !strings.Contains(pathPart, "{"+name+"}") {
			continue
		}
		for _, e := range v.Enum {
			if e != v.Default {
				srv.others = append(srv.others, fmt.Sprintf("{%s} may also be %s", name, e))
			}
		}
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return srv
	}
	if parsed.Scheme == "" && parsed.Host == "" && !strings.HasPrefix(parsed.Path, "/") && !strings.HasPrefix(parsed.Path, ".") {
		if first, _, _ := strings.Cut(parsed.Path, "/"); strings.Contains(first, ".") {
			if p, err := url.Parse("//" + u); err == nil {
				parsed = p
			}
		}
	}
	switch {
	case parsed.Host == "":
	case parsed.Scheme == "":
		srv.host = parsed.Host
	default:
		origin := parsed.Scheme + "://" + parsed.Host
		if _, err := rules.ParseUpstream(origin); err == nil {
			srv.origin = origin
		}
	}
	base := parsed.Path
	if base != "" && !strings.HasPrefix(base, "/") {
		base = "/" + strings.TrimPrefix(base, "./")
	}
	srv.base = strings.TrimRight(base, "/")
	return srv
}

// baseText names a base path in a comment: "the root" for "".
func baseText(base string) string {
	if base == "" {
		return "the root"
	}
	return base
}

// opServers is the servers an operation is served at: its own, else its
// path's, else nil for the document's.
func opServers(o specOp) openapi3.Servers {
	if o.op.Servers != nil && len(*o.op.Servers) > 0 {
		return *o.op.Servers
	}
	if len(o.item.Servers) > 0 {
		return o.item.Servers
	}
	return nil
}

// serversNotes says where the spec's servers differ from the first, which
// the routes follow: another base path, or a variable in the path that may
// take other values.
func serversNotes(servers openapi3.Servers) []string {
	var first *specServer
	var elsewhere []string
	for _, s := range servers {
		if s == nil {
			continue
		}
		srv := readServer(s)
		if first == nil {
			first = &srv
			continue
		}
		if srv.base != first.base {
			at := baseText(srv.base) + " (" + srv.url + ")"
			if !slices.Contains(elsewhere, at) {
				elsewhere = append(elsewhere, at)
			}
		}
	}
	if first == nil {
		return nil
	}
	var notes []string
	if len(elsewhere) > 0 {
		notes = append(notes, fmt.Sprintf("servers: the spec's servers disagree on the path requests carry. The routes follow the first, %s (%s); requests under %s match none of them.",
			baseText(first.base), first.url, strings.Join(elsewhere, ", ")))
	}
	if len(first.others) > 0 {
		notes = append(notes, fmt.Sprintf("servers: in the first server's path, %s; the routes follow its default, %s.", strings.Join(first.others, ", "), baseText(first.base)))
	}
	return notes
}
