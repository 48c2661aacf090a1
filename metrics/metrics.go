// Package metrics defines signpost's Prometheus collectors. Label values come
// only from the rule file, signpost's own closed sets of codes and upstream
// status codes, never from request data, so series stay bounded whatever
// callers send.
package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// Unrouted is the route label of requests that match no declared route.
const Unrouted = "(unrouted)"

// Metrics records what signpost does to upstream errors.
type Metrics struct {
	rejections *prometheus.CounterVec
	unmatched  *prometheus.CounterVec
	would      *prometheus.CounterVec
	oversized  *prometheus.CounterVec
	failures   *prometheus.CounterVec
	bodyTokens *prometheus.HistogramVec
	uncounted  prometheus.Counter

	recovery    *prometheus.HistogramVec
	unrecovered *prometheus.CounterVec
	stopped     *prometheus.CounterVec
	repeats     *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	reloads     *prometheus.CounterVec
	lastReload  prometheus.Gauge
	limited     *prometheus.CounterVec
	refused     *prometheus.CounterVec

	budgetSize      prometheus.Gauge
	budgetInUse     prometheus.Gauge
	budgetExhausted prometheus.Counter

	// The series every request or rewrite touches, found without hashing.
	rejectionSeries   series[prometheus.Counter]
	wouldSeries       series[prometheus.Counter]
	tokenSeries       series[prometheus.Observer]
	durationSeries    series[prometheus.Observer]
	recoverySeries    series[prometheus.Observer]
	unrecoveredSeries series[prometheus.Counter]
	findRejection     func(labels) prometheus.Counter
	findWould         func(labels) prometheus.Counter
	findTokens        func(labels) prometheus.Observer
	findDuration      func(labels) prometheus.Observer
	findRecovery      func(labels) prometheus.Observer
	findUnrecovered   func(labels) prometheus.Counter
}

// Outcomes of a request, for signpost_request_duration_seconds.
const (
	OutcomeSuccess     = "success"     // a response below 400, streamed through
	OutcomeRewritten   = "rewritten"   // an upstream error a rule matched or the declared checks explained
	OutcomeRejected    = "rejected"    // answered by signpost before the upstream
	OutcomeWrapped     = "wrapped"     // an upstream error no rule matched, wrapped
	OutcomePassthrough = "passthrough" // an upstream error passed through
	OutcomeFailed      = "failed"      // the upstream could not be reached, timed out, or broke off mid-answer
	OutcomeCancelled   = "cancelled"   // the caller closed its connection before the answer, or left mid-answer
)

// limits are the limits signpost refuses a request at, the label values
// of signpost_requests_limited_total.
var limits = []string{"request_body", "request_body_timeout", "concurrency"}

// failureCodes are the codes of signpost's answers for an upstream it got
// no answer from, the code values of signpost_upstream_failures_total.
var failureCodes = []string{rewrite.CodeUnavailable, rewrite.CodeInvalidResponse, rewrite.CodeTimeout}

// New creates the collectors and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_rejections_total",
			Help: "Faults signpost answered with a body of its own, by route, code and field at fault: upstream errors a rule matched or the declared checks explained, and requests validation refused before the upstream; a batched body counts once per field.",
		}, []string{"route", "code", "field"}),
		unmatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_upstream_errors_unmatched_total",
			Help: "Upstream errors no rule matched and no declared check explained, by route and status: wrapped or passed through, as the unmatched policy says; observe mode passes every one through.",
		}, []string{"route", "status"}),
		would: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_would_rewrite_total",
			Help: "Requests on routes in observe mode, passed through untouched, that enforce mode would have answered with a body of its own (a rule's, a wrapped one, or a refusal before the upstream), once per request, by route and the code of that answer.",
		}, []string{"route", "code"}),
		oversized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_upstream_error_bodies_oversized_total",
			Help: "Upstream error bodies over limits.error_body, or inflating past it once decoded, by route: never read past the bound nor matched against the rules, and wrapped or passed through as the unmatched policy says.",
		}, []string{"route"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signpost_upstream_failures_total",
			Help: "Requests signpost answered itself because the upstream could not be reached, closed without answering, did not answer in time, or answered with a status below 100, by route and code.",
		}, []string{"route", "code"}),
	}
	m.bodyTokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "signpost_error_body_tokens",
		Help:    "Tokens (o200k_base) of each error body signpost wrote in answer to a request, by route: what an error costs in the agent's context. Refusals of malformed heads are not counted.",
		Buckets: []float64{16, 24, 32, 48, 64, 96, 128, 256, 512},
	}, []string{"route"})
	m.uncounted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "signpost_error_body_tokens_uncounted_total",
		Help: "Error bodies whose tokens were not counted because counting fell behind.",
	})
	m.recovery = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "signpost_recovery_attempts",
		Help:    "Calls a caller made on a route, from a rejection up to and including its next success within the recovery window, by route and the code of the rejection that began the recovery.",
		Buckets: []float64{1, 2, 3, 5, 7, 10},
	}, []string{"route", "code"})
	m.unrecovered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signpost_unrecovered_total",
		Help: "Rejections that began a recovery no success on the same route from the same caller ended within the recovery window, or whose caller was forgotten first, by route and code; a recovery cut short by telling the caller to stop counts in signpost_recovery_stopped_total instead.",
	}, []string{"route", "code"})
	m.stopped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signpost_recovery_stopped_total",
		Help: "Recoveries that ended with the caller told to stop repeating a failing call, and no success on the same route within the recovery window, by route and code: a loop cut short, apart from signpost_unrecovered_total.",
	}, []string{"route", "code"})
	m.repeats = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signpost_repeats_stopped_total",
		Help: "Answers that told a caller to stop repeating a call that failed the same way several times in a row, by route and code.",
	}, []string{"route", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "signpost_request_duration_seconds",
		Help:    "Time from a request's arrival until signpost finished answering it, streamed bodies included, by route and outcome.",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "outcome"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signpost_rules_reloads_total",
		Help: "Rule reloads, by result: success, or failure (the old rules stay).",
	}, []string{"result"})
	m.lastReload = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "signpost_rules_last_reload_success_timestamp_seconds",
		Help: "When the rules in force were loaded, as a Unix time.",
	})
	m.limited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signpost_requests_limited_total",
		Help: "Requests signpost refused at one of its limits, by limit: request_body (413), request_body_timeout (408) or concurrency (503).",
	}, []string{"limit"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "signpost_requests_refused_total",
		Help: "Requests signpost refused itself with a 400 for a malformed head (request line, fields, Host, framing), before any route saw them, by code. Heads net/http's server answers in plain text are not counted.",
	}, []string{"code"})
	m.budgetSize = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "signpost_buffer_budget_bytes",
		Help: "The bytes all requests together may hold in upstream error bodies and request bodies being read or copied (--buffer-budget).",
	})
	m.budgetInUse = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "signpost_buffer_budget_in_use_bytes",
		Help: "The bytes upstream error bodies, raw and decoded, and request bodies being read or copied hold now.",
	})
	m.budgetExhausted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "signpost_buffer_budget_exhausted_total",
		Help: "Bodies the buffer budget had no room to read, decode or copy: upstream errors passed through or wrapped unread, request bodies forwarded unchecked, observe mode's copies dropped.",
	})
	reg.MustRegister(m.rejections, m.unmatched, m.would, m.oversized, m.failures, m.bodyTokens, m.uncounted,
		m.recovery, m.unrecovered, m.stopped, m.repeats, m.duration, m.reloads, m.lastReload, m.limited,
		m.refused, m.budgetSize, m.budgetInUse, m.budgetExhausted)
	m.findRejection = counterOf(m.rejections, 3)
	m.findWould = counterOf(m.would, 2)
	m.findTokens = observerOf(m.bodyTokens, 1)
	m.findDuration = observerOf(m.duration, 2)
	m.findRecovery = observerOf(m.recovery, 2)
	m.findUnrecovered = counterOf(m.unrecovered, 2)
	// Series whose labels are known before any request starts at zero.
	for _, l := range limits {
		m.limited.WithLabelValues(l)
	}
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	return m
}

// Declare starts at zero the series whose labels the rules in cfg name, so
// that a rate or an increase sees the first event of each, as Prometheus
// advises for labels known in advance: per route, the code and field of
// each rejection it can answer (each error rule's, each declared field's
// fault, a body that is not JSON), or, for a route in observe mode, the
// codes enforce would answer with; per route and unrouted, oversized
// bodies and each upstream failure. Call it with the rules at start and
// after each reload that takes effect: series the new rules no longer name
// stay, as counted ones do. Every label value comes from the file, so the
// series stay bounded by its routes, rules and fields. Histograms and
// series labelled by upstream status are left to their first event.
func (m *Metrics) Declare(cfg *rules.Config) {
	for _, route := range cfg.Routes {
		m.oversized.WithLabelValues(route.Name)
		for _, code := range failureCodes {
			m.failures.WithLabelValues(route.Name, code)
		}
		for _, l := range rejectionLabels(route) {
			if route.Mode == rules.Observe {
				m.wouldSeries.get(labels{a: route.Name, b: l.b}, m.findWould)
			} else {
				m.rejectionSeries.get(l, m.findRejection)
			}
		}
	}
	m.oversized.WithLabelValues(Unrouted)
	for _, code := range failureCodes {
		m.failures.WithLabelValues(Unrouted, code)
	}
}

// rejectionLabels are the route, code and field of each rejection route
// can answer with, as Rejected is called for it: each error rule's code
// and field, each declared field's fault (rewrite.FieldCode), and, on a
// route with body fields, a body that is not one JSON object.
func rejectionLabels(route *rules.Route) []labels {
	out := make([]labels, 0, len(route.Errors)+len(route.Fields)+1)
	for _, e := range route.Errors {
		field := ""
		if e.Field != nil {
			field = e.Field.Name
		}
		out = append(out, labels{route.Name, e.Code, field})
	}
	for _, f := range route.Fields {
		out = append(out, labels{route.Name, rewrite.FieldCode(route, f), f.Name})
	}
	if route.HasBodyFields() {
		out = append(out, labels{route.Name, rewrite.CodeInvalidJSON, ""})
	}
	return out
}

// DeclareRefusals starts signpost_requests_refused_total at zero for each
// code the front refuses a malformed head with.
func (m *Metrics) DeclareRefusals(codes []string) {
	for _, c := range codes {
		m.refused.WithLabelValues(c)
	}
}

// Refused counts a request whose malformed head signpost refused itself
// with a 400, under the code of its answer: one of a closed set, so the
// series stay bounded.
func (m *Metrics) Refused(code string) { m.refused.WithLabelValues(code).Inc() }

// LogLinesDropped is signpost_log_lines_dropped_total, read from dropped:
// log lines never written, since the log's buffer was full or its output
// failed. Requests do not wait for the log; this says what that cost.
func LogLinesDropped(dropped func() uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "signpost_log_lines_dropped_total",
		Help: "Log lines never written: the log's buffer was full, or its output failed.",
	}, func() float64 { return float64(dropped()) })
}

// Rejected counts a fault signpost answered under code: an upstream error
// a rule matched or the declared checks explained, or a request refused
// before the upstream; field may be empty.
func (m *Metrics) Rejected(route, code, field string) {
	m.rejectionSeries.get(labels{route, code, field}, m.findRejection).Inc()
}

// Unmatched counts an upstream error no rule matched and no declared check
// explained, wrapped or passed through.
func (m *Metrics) Unmatched(route string, status int) {
	m.unmatched.WithLabelValues(route, statusLabel(status)).Inc()
}

// WouldRewrite counts a request on a route in observe mode that enforce
// mode would have answered with code.
func (m *Metrics) WouldRewrite(route, code string) {
	m.wouldSeries.get(labels{route, code, ""}, m.findWould).Inc()
}

// Oversized counts an error body over limits.error_body, or inflating past
// it.
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
	m.tokenSeries.get(labels{a: route}, m.findTokens).Observe(float64(tokens))
}

// Uncounted counts an error body left uncounted.
func (m *Metrics) Uncounted() { m.uncounted.Inc() }

// Recovered observes how many calls a caller took to succeed on route after
// a rejection with code.
func (m *Metrics) Recovered(route, code string, attempts int) {
	m.recoverySeries.get(labels{a: route, b: code}, m.findRecovery).Observe(float64(attempts))
}

// Unrecovered counts a rejection with no success within the window.
func (m *Metrics) Unrecovered(route, code string) {
	m.unrecoveredSeries.get(labels{a: route, b: code}, m.findUnrecovered).Inc()
}

// RecoveryStopped counts a recovery that ended with the caller told to
// stop, and no success within the window.
func (m *Metrics) RecoveryStopped(route, code string) { m.stopped.WithLabelValues(route, code).Inc() }

// RepeatStopped counts an answer that told a caller to stop repeating a
// failing call.
func (m *Metrics) RepeatStopped(route, code string) { m.repeats.WithLabelValues(route, code).Inc() }

// Duration observes one request's time from its arrival to the end of its
// answer.
func (m *Metrics) Duration(route, outcome string, seconds float64) {
	m.durationSeries.get(labels{a: route, b: outcome}, m.findDuration).Observe(seconds)
}

// Reloaded counts a reload of the rules; at is when a successful one took
// effect, in Unix seconds.
func (m *Metrics) Reloaded(ok bool, at float64) {
	if !ok {
		m.reloads.WithLabelValues("failure").Inc()
		return
	}
	m.reloads.WithLabelValues("success").Inc()
	m.lastReload.Set(at)
}

// Loaded records when the rules in force were loaded, without counting a
// reload: for the load at start.
func (m *Metrics) Loaded(at float64) { m.lastReload.Set(at) }

// Limited counts a request refused at a limit.
func (m *Metrics) Limited(limit string) { m.limited.WithLabelValues(limit).Inc() }

// BufferBudget records the size of the buffer budget, in bytes. These
// three measure nothing on a nil Metrics, as internal/budget asks.
func (m *Metrics) BufferBudget(bytes int64) {
	if m != nil {
		m.budgetSize.Set(float64(bytes))
	}
}

// BufferBudgetInUse adds delta bytes, negative when given back, to what
// the buffer budget has lent. Adding keeps the gauge exact whatever the
// order of concurrent calls.
func (m *Metrics) BufferBudgetInUse(delta int64) {
	if m != nil {
		m.budgetInUse.Add(float64(delta))
	}
}

// BufferBudgetExhausted counts a body the buffer budget had no room for.
func (m *Metrics) BufferBudgetExhausted() {
	if m != nil {
		m.budgetExhausted.Inc()
	}
}
