// Package admin serves the operator's endpoints: the stats page, metrics,
// liveness and readiness, and the rules and aliases in force. It reads the
// proxy serving now through Serving alone.
package admin

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

// Serving is what the endpoints read of the proxy serving now: the rules
// it serves, the upstream it forwards to, and the aliases learned from its
// traffic.
type Serving interface {
	Config() *rules.Config
	// Upstream is the base URL requests are forwarded to.
	Upstream() *url.URL
	// Aliases returns the aliases learned so far that the rules do not
	// declare, and whether aliases are learned at all.
	Aliases() ([]learn.Proposal, bool)
	// Observed returns what observe mode recorded, and the answers
	// enforce mode would have sent on the routes it watches.
	Observed() (observe.Document, []observe.Answer)
}

// Admin is what the admin endpoints read and do. Its functions may be nil
// where a feature is off; the endpoints then say so rather than fail.
type Admin struct {
	// Gatherer is what /metrics exposes and the page summarizes; nil
	// gathers nothing.
	Gatherer prometheus.Gatherer
	// Current returns the proxy serving now; it changes on reload.
	Current func() Serving
	// Reloads returns the outcome of the last reload.
	Reloads func() ReloadStatus
	// Reload re-reads the rule files and swaps them in if they are sound.
	Reload func() error
	// Ready returns the readiness checks, each nil when it passes.
	Ready func() []Check
}

// ReloadStatus is the outcome of the last attempt to load the rules.
type ReloadStatus struct {
	// At is when the attempt was made; zero before any.
	At time.Time
	// OK is whether it took effect.
	OK bool
	// Problems are what a failed attempt found, as check prints them.
	Problems rules.Problems
	// Since is when the rules in force were loaded.
	Since time.Time
}

// Check is one readiness check: its name and, when it fails, why.
type Check struct {
	Name string
	Err  error
}

// Handler serves the operator's endpoints. It belongs on its own
// listener, never on the agent-facing one.
//
//	GET /          the stats page: per route, rejections, unmatched errors,
//	               recoveries; learned aliases; readiness and the last reload
//	GET /metrics   Prometheus text format
//	GET /livez     liveness: "ok" while the process serves
//	GET /readyz    readiness: 200 "ok" when every check passes, else 503;
//	               ?verbose lists the checks, ?exclude=name skips one
//	GET /rules     the rules in force, with their positions, as JSON
//	GET /aliases   the aliases learned from traffic, as JSON
//	GET /draft     what observe mode learned, as JSON, for signpost draft
//	GET /observed  the answers enforce mode would have sent on the routes
//	               observe mode watches, beside the upstream's, as JSON
func Handler(a Admin) http.Handler {
	if a.Gatherer == nil {
		a.Gatherer = prometheus.Gatherers(nil)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.page)
	mux.HandleFunc("GET /aliases", func(w http.ResponseWriter, _ *http.Request) {
		list, _ := a.aliases()
		type alias struct {
			Route string `json:"route"`
			Field string `json:"field"`
			Alias string `json:"alias"`
			Value string `json:"value"`
			Count int    `json:"count"`
		}
		out := make([]alias, len(list))
		for i, pr := range list {
			out[i] = alias{pr.Route, pr.Field, pr.Rejected, pr.Accepted, pr.Count}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"aliases": out})
	})
	mux.HandleFunc("GET /draft", func(w http.ResponseWriter, _ *http.Request) {
		doc, _ := a.observed()
		writeJSON(w, doc)
	})
	mux.HandleFunc("GET /observed", func(w http.ResponseWriter, _ *http.Request) {
		_, answers := a.observed()
		writeJSON(w, map[string]any{"answers": answers})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /rules", a.rules)
	return mux
}

// current is the proxy serving now, or nil.
func (a Admin) current() Serving {
	if a.Current == nil {
		return nil
	}
	return a.Current()
}

// aliases are the aliases the current proxy proposes, and whether it
// learns any at all.
func (a Admin) aliases() (list []learn.Proposal, learning bool) {
	p := a.current()
	if p == nil {
		return []learn.Proposal{}, false
	}
	return p.Aliases()
}

// observed is what the current proxy's observe mode recorded, and the
// answers it would have sent.
func (a Admin) observed() (observe.Document, []observe.Answer) {
	p := a.current()
	if p == nil {
		return observe.Document{Version: observe.DocumentVersion, Operations: []observe.Operation{}}, []observe.Answer{}
	}
	return p.Observed()
}

// writeJSON answers v as indented JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // bodies quoted as they were: <title>, not \u003ctitle\u003e
	_ = enc.Encode(v)
}

// upstream is the upstream of the proxy serving now, or "".
func (a Admin) upstream() string {
	if p := a.current(); p != nil && p.Upstream() != nil {
		return p.Upstream().String()
	}
	return ""
}

// config is the rules the proxy serving now serves, or nil.
func (a Admin) config() *rules.Config {
	if p := a.current(); p != nil {
		return p.Config()
	}
	return nil
}
