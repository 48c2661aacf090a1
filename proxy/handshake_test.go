package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/rules"
)

// sessionUpstream answers as Transmission does: a call without the
// current session id gets 409 and the id in X-Transmission-Session-Id;
// rotate hands out a new id, as a restart does.
type sessionUpstream struct {
	mu     sync.Mutex
	id     string
	bodies []string // each request body received, in order
	calls  int
}

func (s *sessionUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.bodies = append(s.bodies, string(body))
	if r.Header.Get("X-Transmission-Session-Id") != s.id {
		w.Header().Set("X-Transmission-Session-Id", s.id)
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, "<h1>409: Conflict</h1><p>Your request had an invalid session-id header.</p>")
		return
	}
	io.WriteString(w, `{"result":"success","arguments":{}}`)
}

// seen returns the calls so far and the last body received.
func (s *sessionUpstream) seen() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, s.bodies[len(s.bodies)-1]
}

func (s *sessionUpstream) rotate(id string) {
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
}

const handshakeRules = `
routes:
  rpc:
    method: POST
    path: /transmission/rpc
    handshake: {status: 409, header: X-Transmission-Session-Id}
  web:
    method: POST
    path: /transmission/web
`

// TestHandshake: the upstream's 409 that hands out a session id is
// answered by signpost, on both paths: the call is sent again once with
// the id, whole, and later calls carry it; a new id is fetched the same
// way; the caller never sees the 409. A route that declares no handshake
// passes the 409 on.
func TestHandshake(t *testing.T) {
	cfg, err := rules.Parse("handshake.yaml", []byte(handshakeRules))
	if err != nil {
		t.Fatal(err)
	}
	onBothPaths(t, cfg, func(t *testing.T, newProxy func(base string) *Proxy) {
		up := &sessionUpstream{id: "s-1"}
		srv := httptest.NewServer(up)
		defer srv.Close()
		p := newProxy(srv.URL)
		call := func(target, body string) *httptest.ResponseRecorder {
			return serveOn(p, httptest.NewRequest("POST", target, strings.NewReader(body)))
		}
		steps := []struct {
			name, target, body string
			rotate             string
			status, calls      int // the answer, and the upstream's calls so far
		}{
			{"first call fetches the id", "/transmission/rpc", `{"method":"session-get"}`, "", 200, 2},
			{"the id is kept", "/transmission/rpc", `{"method":"torrent-get"}`, "", 200, 3},
			{"a new id is fetched", "/transmission/rpc", `{"method":"torrent-set"}`, "s-2", 200, 5},
			{"no handshake declared", "/transmission/web", `{"method":"session-get"}`, "", 409, 6},
			{"a web page's call gets no token", "/transmission/rpc", `{"method":"torrent-remove"}`, "origin", 409, 7},
		}
		for _, s := range steps {
			var w *httptest.ResponseRecorder
			switch s.rotate {
			case "origin":
				r := httptest.NewRequest("POST", s.target, strings.NewReader(s.body))
				r.Header.Set("Origin", "http://pages.example")
				w = serveOn(p, r)
			case "":
				w = call(s.target, s.body)
			default:
				up.rotate(s.rotate)
				w = call(s.target, s.body)
			}
			if w.Code != s.status {
				t.Errorf("%s: %d %s", s.name, w.Code, w.Body)
			}
			if s.status == 200 && w.Body.String() != `{"result":"success","arguments":{}}` {
				t.Errorf("%s: body %s", s.name, w.Body)
			}
			calls, last := up.seen()
			if calls != s.calls {
				t.Errorf("%s: the upstream had %d calls, want %d", s.name, calls, s.calls)
			}
			if last != s.body {
				t.Errorf("%s: the upstream got %q, want the body whole", s.name, last)
			}
		}
	})
}

// crumbUpstream answers as Jenkins does: a POST needs the crumb its
// issuer hands each user, and is refused 403 without the current one.
type crumbUpstream struct {
	mu      sync.Mutex
	crumb   map[string]string // by Authorization
	issued  int
	builds  []string // the bodies of the builds done
	refused int
}

func (c *crumbUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	user := r.Header.Get("Authorization")
	switch r.URL.Path {
	case "/crumbIssuer/api/json":
		if user == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		c.issued++
		c.crumb[user] = user + "-crumb-" + strconv.Itoa(c.issued)
		fmt.Fprintf(w, `{"crumb":%q,"crumbRequestField":"Jenkins-Crumb"}`, c.crumb[user])
	case "/job/build":
		if got := r.Header.Get("Jenkins-Crumb"); got == "" || got != c.crumb[user] {
			c.refused++
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "No valid crumb was included in the request")
			return
		}
		body, _ := io.ReadAll(r.Body)
		c.builds = append(c.builds, user+" "+string(body))
		w.WriteHeader(http.StatusCreated)
	}
}

// expire makes every crumb handed out stale, as a restart does.
func (c *crumbUpstream) expire() {
	c.mu.Lock()
	clear(c.crumb)
	c.mu.Unlock()
}

func (c *crumbUpstream) seen() (issued, refused int, builds []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.issued, c.refused, slices.Clone(c.builds)
}

// crumbRules declare a handshake whose token a call of its own hands out,
// as Jenkins's crumb issuer does.
const crumbRules = `
routes:
  build:
    method: POST
    path: /job/build
    handshake: {call: {method: GET, path: /crumbIssuer/api/json}, token: crumb, header: Jenkins-Crumb}
`

// TestHandshakeFetchedFirst: a token handed out by a call of its own (a
// CSRF crumb) is fetched before the first call that needs it, with the
// caller's credentials, and kept per caller; a refusal of the declared
// status fetches it anew and sends the call again once, whole. The caller
// never sees the crumb.
func TestHandshakeFetchedFirst(t *testing.T) {
	cfg, err := rules.Parse("crumb.yaml", []byte(crumbRules))
	if err != nil {
		t.Fatal(err)
	}
	onBothPaths(t, cfg, func(t *testing.T, newProxy func(base string) *Proxy) {
		up := &crumbUpstream{crumb: map[string]string{}}
		srv := httptest.NewServer(up)
		defer srv.Close()
		p := newProxy(srv.URL)
		build := func(user, body string) int {
			r := httptest.NewRequest("POST", "/job/build", strings.NewReader(body))
			r.Header.Set("Authorization", user)
			return serveOn(p, r).Code
		}
		steps := []struct {
			user, body      string
			expire          bool
			issued, refused int
		}{
			{"Basic ada", "one", false, 1, 0},   // fetched first: no refusal
			{"Basic ada", "two", false, 1, 0},   // kept
			{"Basic bob", "three", false, 2, 0}, // another caller's own
			{"Basic ada", "four", true, 3, 1},   // stale: refused, fetched anew, sent again
		}
		for i, s := range steps {
			if s.expire {
				up.expire()
			}
			if code := build(s.user, s.body); code != http.StatusCreated {
				t.Errorf("step %d: %d", i, code)
			}
			issued, refused, builds := up.seen()
			if issued != s.issued || refused != s.refused || len(builds) != i+1 || builds[i] != s.user+" "+s.body {
				t.Errorf("step %d: %d issued, %d refused, builds %q", i, issued, refused, builds)
			}
		}
	})
}

// TestHandshakeCallStalls: an issuer that sends part of its answer and
// stalls holds the call no longer than the upstream timeout; the call
// then goes without a token, and the caller gets the upstream's refusal.
func TestHandshakeCallStalls(t *testing.T) {
	cfg, err := rules.Parse("crumb.yaml", []byte(crumbRules))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/crumbIssuer/api/json" {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"crumb":`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "No valid crumb was included in the request")
	}))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	const timeout = 300 * time.Millisecond
	p, err := New(cfg, Options{Upstream: u, UpstreamTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := httptest.NewRequest("POST", "/job/build", strings.NewReader("{}"))
	r.Header.Set("Authorization", "Basic ada")
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- serveOn(p, r) }()
	// Two calls to the issuer: before the build, and after its refusal.
	var w *httptest.ResponseRecorder
	select {
	case w = <-done:
	case <-time.After(2*timeout + 5*time.Second):
		t.Fatalf("the build is still waiting on the stalled issuer after %v; want an answer within about %v", 2*timeout+5*time.Second, 2*timeout)
	}
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "No valid crumb") {
		t.Errorf("got %d %q, want the upstream's 403", w.Code, w.Body.String())
	}
}

// onBothPaths runs f once for each upstream path, the direct one and the
// general one (httputil.ReverseProxy over http.Transport), with newProxy
// building a proxy of cfg in front of an upstream, closed when f is done.
func onBothPaths(t *testing.T, cfg *rules.Config, f func(t *testing.T, newProxy func(base string) *Proxy)) {
	transport := NewTransport(0)
	t.Cleanup(transport.CloseIdleConnections)
	for _, path := range []string{"direct", "general"} {
		t.Run(path, func(t *testing.T) {
			f(t, func(base string) *Proxy {
				u, err := url.Parse(base)
				if err != nil {
					t.Fatal(err)
				}
				opts := Options{Upstream: u}
				if path == "general" {
					opts.Transport = transport
				}
				p, err := New(cfg, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Close)
				return p
			})
		})
	}
}
