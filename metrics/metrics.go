// Package metrics defines signpost's Prometheus collectors. Label values come
// only from the rule file and from upstream status codes, never from request
// data, so series stay bounded whatever callers send.
package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Unrouted is the route label of requests that match no declared route.
const Unrouted = "(unrouted)"

// Metrics records what signpost does to upstream errors.
type Metrics struct {
	rejections *prometheus.CounterVec
	unmatched  *prometheus.CounterVec
	oversized  *prometheus.CounterVec
	failures   *prometheus.CounterVec
	bodyTokens *prometheus.HistogramVec
	uncounted  prometheus.Counter
}

// New creates the collectors and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_rejections_total",
			Help: "Upstream errors rewritten into actionable bodies, by route, code and field at fault.",
		}, []string{"route", "code", "field"}),
		unmatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_upstream_errors_unmatched_total",
			Help: "Upstream error responses that no rule matched, passed through unchanged, by route and status.",
		}, []string{"route", "status"}),
		oversized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_upstream_error_bodies_oversized_total",
			Help: "Upstream error bodies larger than the buffering bound, passed through unread, by route.",
		}, []string{"route"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_upstream_failures_total",
			Help: "Requests signpost answered itself because the upstream could not be reached or timed out, by route and code.",
		}, []string{"route", "code"}),
	}
	m.bodyTokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "signpost_error_body_tokens",
		Help:    "Tokens (o200k_base) of each error body signpost wrote, by route: what an error costs in the agent's context.",
		Buckets: []float64{16, 24, 32, 48, 64, 96, 128, 256, 512},
	}, []string{"route"})
	m.uncounted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "signpost_error_body_tokens_uncounted_total",
		Help: "Error bodies whose tokens were not counted because counting fell behind.",
	})
	reg.MustRegister(m.rejections, m.unmatched, m.oversized, m.failures, m.bodyTokens, m.uncounted)
	return m
}

// Rejected counts an upstream error rewritten under code; field may be empty.
func (m *Metrics) Rejected(route, code, field string) {
	m.rejections.WithLabelValues(route, code, field).Inc()
}

// Unmatched counts an upstream error no rule matched.
func (m *Metrics) Unmatched(route string, status int) {
	m.unmatched.WithLabelValues(route, statusLabel(status)).Inc()
}

// Oversized counts an error body too large to examine.
func (m *Metrics) Oversized(route string) { m.oversized.WithLabelValues(route).Inc() }

// UpstreamFailed counts a request answered with signpost's own failure code.
func (m *Metrics) UpstreamFailed(route, code string) { m.failures.WithLabelValues(route, code).Inc() }

var statusLabels [600]string

func init() {
	for i := range statusLabels {
		statusLabels[i] = strconv.Itoa(i)
	}
}

func statusLabel(s int) string {
	if s >= 0 && s < len(statusLabels) {
		return statusLabels[s]
	}
	return "other"
}

// BodyTokens observes the token count of one error body written on route.
func (m *Metrics) BodyTokens(route string, tokens int) {
	m.bodyTokens.WithLabelValues(route).Observe(float64(tokens))
}

// Uncounted counts an error body left uncounted.
func (m *Metrics) Uncounted() { m.uncounted.Inc() }
