package mcp

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/tidwall/gjson"
)

// maxOriginEcho bounds the Origin value a refusal echoes.
const maxOriginEcho = 64

// exampleOrigin is the origin the messages give as an example.
const exampleOrigin = "https://agent.example.com"

// OriginError says why a value is not an origin signpost can allow.
type OriginError struct {
	// Value is the value refused, as it was given.
	Value string
	// Rule is the rule the value breaks.
	Rule string
	// Fixed is the origin the value most likely meant, when that is
	// evident (a path or trailing slash dropped, https:// put before a
	// bare host), or empty.
	Fixed string
}

func (e *OriginError) Error() string { return fmt.Sprintf("%q: %s", e.Value, e.Rule) }

// ParseOrigin checks that s is an origin as browsers send it in the Origin
// header, scheme://host[:port], and returns it in the form origins are
// compared in: scheme and host in lower case, a default port dropped. An
// opaque origin ("null") and a wildcard are refused: neither names a site.
func ParseOrigin(s string) (string, error) {
	const form = "must be scheme://host[:port]"
	fail := func(rule, fixed string) (string, error) {
		return "", &OriginError{Value: s, Rule: rule, Fixed: fixed}
	}
	switch s {
	case "*":
		return fail("signpost has no wildcard origin: name each origin whose pages may call the tools", "")
	case "null":
		return fail(`"null" is the opaque origin of a file or sandboxed page, which names no site and cannot be allowed`, "")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		fixed := ""
		if s != "" && !strings.Contains(s, "://") {
			fixed, _ = ParseOrigin("https://" + s) // a host without its scheme
		}
		return fail(form, fixed)
	}
	if u.User != nil {
		return fail(form+", with no user name or password", "")
	}
	if strings.HasSuffix(u.Host, ":") {
		return fail(form+", with a port from 1 to 65535 after the colon", "")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fail(form+", with a port from 1 to 65535", "")
		}
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	origin := scheme + "://" + host
	if u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return fail(form+", with nothing after the host and port: no path, query or trailing slash", origin)
	}
	return origin, nil
}

// originPolicy decides which Origin headers the streamable HTTP transport
// serves. The MCP specification asks servers to check it on every request,
// so that a web page whose host name has been rebound to signpost's
// address (DNS rebinding) cannot call the tools from the user's browser.
type originPolicy struct {
	// loopback is set when the transport listens on a loopback address:
	// pages served from loopback origins may call it then.
	loopback bool
	// allowed holds the origins allowed besides, as ParseOrigin returns
	// them.
	allowed map[string]bool
}

// newOriginPolicy allows the origins given; serveHTTP allows loopback ones
// too once it knows it listens at a loopback address.
func newOriginPolicy(allowed []string) (*originPolicy, error) {
	p := &originPolicy{allowed: make(map[string]bool, len(allowed))}
	for _, a := range allowed {
		o, err := ParseOrigin(a)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %w", err)
		}
		p.allowed[o] = true
	}
	return p, nil
}

// refusal is nil when a request whose Origin headers hold values may be
// served, and otherwise the body that refuses it. A request with no Origin
// is served: only browsers send one, and other clients cannot be rebound.
func (p *originPolicy) refusal(values []string) *rewrite.Error {
	if len(values) == 0 {
		return nil
	}
	refuse := func(rule string) *rewrite.Error {
		e := rewrite.Failure(http.StatusForbidden, rewrite.CodeOriginNotAllowed, rule, false)
		e.Field = "Origin"
		e.Received = rewrite.Received(gjson.Result{Type: gjson.String, Str: strings.Join(values, ", ")}, maxOriginEcho)
		return e
	}
	if len(values) > 1 {
		return refuse("must be one Origin header, as a browser sends; a client that is not a browser sends none")
	}
	origin, err := ParseOrigin(values[0])
	switch {
	case values[0] == "null":
		return refuse(`must name a site: "null", the opaque origin of a file or sandboxed page, cannot be allowed; serve the page from an origin, e.g. ` + exampleOrigin)
	case err != nil:
		return refuse("must be one origin, scheme://host[:port], as a browser sends it, e.g. " + exampleOrigin + "; a client that is not a browser sends no Origin")
	}
	if p.allowed[origin] || p.loopback && loopbackOrigin(origin) {
		return nil
	}
	rule := "must be an origin signpost was started with"
	if p.loopback {
		rule = "must be a loopback origin (localhost, 127.0.0.0/8 or [::1]) or one signpost was started with"
	}
	return refuse(rule + ", so that no other web page reaches the tools by DNS rebinding; to allow this origin, pass it to signpost mcp with --allow-origin, e.g. --allow-origin " + exampleOrigin)
}

// loopbackOrigin says whether origin, as ParseOrigin returns it, names a
// loopback host: localhost, or an address in 127.0.0.0/8 or ::1.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// checkingOrigin serves a request through h only when p allows its Origin;
// otherwise it answers 403 with a JSON-RPC error without an id, as the MCP
// specification allows, whose message is signpost's text and whose data is
// its body, and logs the refusal for the operator.
func checkingOrigin(p *originPolicy, log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := p.refusal(r.Header.Values("Origin"))
		if e == nil {
			h.ServeHTTP(w, r)
			return
		}
		log.Warn("refused an MCP request from a web page origin not allowed", "origin", strings.Join(r.Header.Values("Origin"), ", "),
			"remote_addr", r.RemoteAddr, "rule", e.Message)
		body := e.JSON()
		text, _ := Text(body)
		msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: text, Data: body}})
		if err != nil {
			// The body is signpost's own JSON, and the text a string.
			panic(fmt.Sprintf("mcp: an origin refusal does not marshal: %v", err))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(msg)
	})
}
