package proxy

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler serves the operator's endpoints: /metrics for Prometheus,
// /livez for liveness probes, and /aliases, the aliases p learned from
// traffic. It belongs on its own listener, never on the agent-facing one.
func AdminHandler(g prometheus.Gatherer, p *Proxy) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /aliases", func(w http.ResponseWriter, _ *http.Request) {
		list := []Proposal{}
		if p != nil && p.learner != nil {
			list = p.learner.proposals(p.cfg)
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
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
