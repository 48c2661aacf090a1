package mcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
)

// TestParseOrigin takes an origin as browsers send it and gives the form
// origins are compared in, and refuses, with the rule and, where it is
// evident, the origin meant, any value that names no one site.
func TestParseOrigin(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want is the origin, or empty when in is refused
		rule     string // a part of the rule a refused value breaks
		fixed    string // the origin meant, when evident
	}{
		{in: "https://agent.example.com", want: "https://agent.example.com"},
		{in: "http://localhost:3000", want: "http://localhost:3000"},
		{in: "HTTPS://Agent.Example.COM", want: "https://agent.example.com"},
		{in: "https://agent.example.com:443", want: "https://agent.example.com"},
		{in: "http://agent.example.com:80", want: "http://agent.example.com"},
		{in: "http://agent.example.com:443", want: "http://agent.example.com:443"},
		{in: "http://[::1]:8090", want: "http://[::1]:8090"},
		{in: "", rule: "must be scheme://host[:port]"},
		{in: "*", rule: "no wildcard origin"},
		{in: "null", rule: "opaque origin"},
		{in: "garbage", rule: "must be scheme://host[:port]", fixed: "https://garbage"},
		{in: "agent.example.com:8443", rule: "must be scheme://host[:port]", fixed: "https://agent.example.com:8443"},
		{in: "https://", rule: "must be scheme://host[:port]"},
		{in: "https://:8080", rule: "must be scheme://host[:port]"},
		{in: "https://agent.example.com/", rule: "no path, query or trailing slash", fixed: "https://agent.example.com"},
		{in: "https://agent.example.com/mcp?x=1", rule: "no path, query or trailing slash", fixed: "https://agent.example.com"},
		{in: "https://agent.example.com#top", rule: "no path, query or trailing slash", fixed: "https://agent.example.com"},
		{in: "https://me@agent.example.com", rule: "no user name or password"},
		{in: "https://agent.example.com:", rule: "a port from 1 to 65535"},
		{in: "https://agent.example.com:0", rule: "a port from 1 to 65535"},
		{in: "https://agent.example.com:70000", rule: "a port from 1 to 65535"},
		{in: "https://agent example.com", rule: "must be scheme://host[:port]"},
	} {
		got, err := ParseOrigin(tc.in)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		var oe *OriginError
		if !errors.As(err, &oe) {
			t.Errorf("ParseOrigin(%q) = %q, %v; want an *OriginError", tc.in, got, err)
			continue
		}
		if oe.Value != tc.in || !strings.Contains(oe.Rule, tc.rule) || oe.Fixed != tc.fixed {
			t.Errorf("ParseOrigin(%q): value %q, rule %q, fixed %q; want the value, a rule holding %q, fixed %q",
				tc.in, oe.Value, oe.Rule, oe.Fixed, tc.rule, tc.fixed)
		}
	}
}

// TestOriginPolicy decides each Origin the transport may see, on a loopback
// listener and on one that is not: no Origin is served, as clients that are
// not browsers send none; loopback origins only on a loopback listener; the
// origins allowed on both; anything else, malformed or foreign, refused
// with 403, the header named, the value echoed and the rule given.
func TestOriginPolicy(t *testing.T) {
	p, err := newOriginPolicy([]string{"https://agent.example.com", "HTTP://Tools.Example.Org:8443"})
	if err != nil {
		t.Fatal(err)
	}
	const (
		loopbackRule = "must be a loopback origin (localhost, 127.0.0.0/8 or [::1]) or one signpost was started with"
		startedRule  = "must be an origin signpost was started with,"
		formRule     = "must be one origin, scheme://host[:port], as a browser sends it"
		nullRule     = `must name a site: "null"`
		oneRule      = "must be one Origin header"
	)
	for _, tc := range []struct {
		name   string
		origin []string
		// onLoopback and elsewhere are the rule a refusal gives on each
		// listener, or empty when the request is served.
		onLoopback, elsewhere string
	}{
		{"no Origin", nil, "", ""},
		{"localhost", []string{"http://localhost:3000"}, "", startedRule},
		{"localhost in capitals", []string{"http://LOCALHOST"}, "", startedRule},
		{"127.0.0.1", []string{"http://127.0.0.1:8090"}, "", startedRule},
		{"elsewhere in 127.0.0.0/8", []string{"https://127.9.8.7"}, "", startedRule},
		{"::1", []string{"http://[::1]:8090"}, "", startedRule},
		{"::1 mapped to IPv4", []string{"http://[::ffff:127.0.0.1]"}, "", startedRule},
		{"allowed", []string{"https://agent.example.com"}, "", ""},
		{"allowed, with its default port", []string{"https://agent.example.com:443"}, "", ""},
		{"allowed, another case", []string{"http://tools.example.org:8443"}, "", ""},
		{"allowed host, another scheme", []string{"http://agent.example.com"}, loopbackRule, startedRule},
		{"allowed host, another port", []string{"https://agent.example.com:8443"}, loopbackRule, startedRule},
		{"foreign", []string{"https://evil.example"}, loopbackRule, startedRule},
		{"a name that begins as localhost", []string{"http://localhost.evil.example"}, loopbackRule, startedRule},
		{"a name that begins as 127.0.0.1", []string{"http://127.0.0.1.evil.example"}, loopbackRule, startedRule},
		{"a private address", []string{"http://192.168.1.20:8090"}, loopbackRule, startedRule},
		{"null", []string{"null"}, nullRule, nullRule},
		{"garbage", []string{"garbage"}, formRule, formRule},
		{"empty", []string{""}, formRule, formRule},
		{"a wildcard", []string{"*"}, formRule, formRule},
		{"a path", []string{"http://localhost:3000/app"}, formRule, formRule},
		{"two headers", []string{"http://localhost:3000", "https://agent.example.com"}, oneRule, oneRule},
	} {
		for _, listener := range []struct {
			loopback bool
			want     string
		}{{true, tc.onLoopback}, {false, tc.elsewhere}} {
			p.loopback = listener.loopback
			e := p.refusal(tc.origin)
			if listener.want == "" {
				if e != nil {
					t.Errorf("%s, loopback listener %t: refused: %s; want it served", tc.name, listener.loopback, e.JSON())
				}
				continue
			}
			if e == nil {
				t.Errorf("%s, loopback listener %t: served; want 403 %s", tc.name, listener.loopback, listener.want)
				continue
			}
			if e.Status != 403 || e.Code != rewrite.CodeOriginNotAllowed || e.Field != "Origin" || e.Retryable ||
				!strings.HasPrefix(e.Message, listener.want) {
				t.Errorf("%s, loopback listener %t: %d %s; want 403 %s in Origin, its rule beginning %q",
					tc.name, listener.loopback, e.Status, e.JSON(), rewrite.CodeOriginNotAllowed, listener.want)
			}
			if want := `"` + strings.Join(tc.origin, ", ") + `"`; string(e.Received) != want {
				t.Errorf("%s: received %s, want %s", tc.name, e.Received, want)
			}
		}
	}
}

// TestOriginPolicyRefusesABadAllowedOrigin: an allowed origin that is not
// one is refused, named, with the rule.
func TestOriginPolicyRefusesABadAllowedOrigin(t *testing.T) {
	_, err := newOriginPolicy([]string{"https://agent.example.com", "https://tools.example.org/mcp"})
	const want = `allowed origin "https://tools.example.org/mcp": must be scheme://host[:port], with nothing after the host and port: no path, query or trailing slash`
	if err == nil || err.Error() != want {
		t.Errorf("newOriginPolicy: %v; want %s", err, want)
	}
}
