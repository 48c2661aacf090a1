package proxy

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/signpost-proxy/signpost/rules"
)

// Admin is what the admin endpoints read and do. Its functions may be nil
// where a feature is off.
type Admin struct {
	Gatherer prometheus.Gatherer
	// Current returns the proxy serving now; it changes on reload.
	Current func() *Proxy
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

// AdminHandler serves the operator's endpoints: /metrics for Prometheus,
// /livez for liveness probes, and /aliases, the aliases learned from
// traffic. It belongs on its own listener, never on the agent-facing one.
func AdminHandler(a Admin) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /aliases", func(w http.ResponseWriter, _ *http.Request) {
		list := []Proposal{}
		if a.Current != nil {
			if p := a.Current(); p != nil && p.state.learner != nil {
				list = p.state.learner.proposals(p.cfg)
			}
		}
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
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// Config returns the rules the proxy serves.
func (p *Proxy) Config() *rules.Config { return p.cfg }
