package proxy

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/upstream"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

// Defaults of the upstream's bounds.
const (
	DefaultUpstreamTimeout = 30 * time.Second
	DefaultDialTimeout     = 5 * time.Second
)

// Shared is what outlives a reload: every proxy built from the rules in
// force uses the same learned state, observe mode's record, upstream
// connections and buffer budget, so that a reload loses nothing learned,
// keeps the connections warm, and counts the buffers of requests still
// served by old rules. NewShared builds it once; its owner closes it after
// the last proxy using it is done.
type Shared struct {
	// State carries learned aliases, recoveries and repeated failures.
	State *learn.State
	// Observed records the exchanges of routes in observe mode, and
	// Answers what enforce mode would have answered on them.
	Observed *observe.Record
	Answers  *observe.Answers
	// Pool carries exchanges with a plain-http upstream, and Fallback the
	// rest (upgrades, https).
	Pool     *upstream.Pool
	Fallback *http.Transport
	// Budget bounds the bytes all requests together hold in buffers.
	Budget *budget.Budget

	// tokens keeps what upstreams handed out in handshakes.
	tokens tokens
}

// SharedOptions size what NewShared builds.
type SharedOptions struct {
	// UpstreamTimeout bounds the wait for an upstream's response headers;
	// zero means 30 seconds. DialTimeout bounds connecting to it; zero
	// means 5 seconds.
	UpstreamTimeout, DialTimeout time.Duration
	// BufferBudget bounds the bytes all requests together hold in
	// upstream error bodies being examined, raw and decoded, and in
	// request bodies being read. Zero means 64 MiB.
	BufferBudget int64
	// Metrics records the budget and what is learned; nil records nothing.
	Metrics *metrics.Metrics
	// Log receives what the learned state reports; nil is silent.
	Log *slog.Logger
}

// NewShared builds what the proxies of cfg and of every reload share; the
// learned state keeps cfg's learn: settings, and observe mode's record
// its recovery window.
func NewShared(cfg *rules.Config, o SharedOptions) *Shared {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Shared{
		State:    learn.New(cfg.Learn, o.Metrics, log),
		Observed: observe.New(observe.Options{Window: cfg.Learn.RecoveryWindow}),
		Answers:  observe.NewAnswers(0),
		Pool:     upstream.New(orDefault(o.DialTimeout, DefaultDialTimeout), orDefault(o.UpstreamTimeout, DefaultUpstreamTimeout)),
		Fallback: NewTransportWith(o.DialTimeout, o.UpstreamTimeout),
		Budget:   budget.New(o.BufferBudget, o.Metrics),
	}
}

// Close stops the learned state and closes the idle upstream connections.
// A request still served after Close may use the state: it drops what it
// is given then.
func (s *Shared) Close() {
	s.State.Close()
	s.Pool.CloseIdle()
	s.Fallback.CloseIdleConnections()
}

func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// NewTransport returns an upstream transport sized for a sidecar: many idle
// connections to one host, no transparent compression (bodies pass through
// as the upstream encoded them), and no proxy from the environment.
func NewTransport(headerTimeout time.Duration) *http.Transport {
	if headerTimeout <= 0 {
		headerTimeout = DefaultUpstreamTimeout
	}
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: headerTimeout,
		DisableCompression:    true,
	}
}

// NewTransportWith is NewTransport with a bound on connecting to the
// upstream: dial, zero meaning 5 seconds.
func NewTransportWith(dial, headerTimeout time.Duration) *http.Transport {
	t := NewTransport(headerTimeout)
	if dial <= 0 {
		dial = DefaultDialTimeout
	}
	t.DialContext = (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext
	return t
}

// tokens keeps the tokens handshakes hand out, at most maxTokens: past
// that it starts again empty, each caller fetching its own anew.
type tokens struct {
	mu sync.Mutex
	m  map[string]string
}

// maxTokens bounds the tokens kept: callers with credentials of their
// own each have one.
const maxTokens = 4096

func (t *tokens) get(k string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.m[k]
	return tok, ok
}

func (t *tokens) put(k, tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m) >= maxTokens {
		t.m = make(map[string]string)
	}
	t.m[k] = tok
}

// validToken reports whether a token can be sent back as a header value:
// visible ASCII and spaces, at most 4 KiB.
func validToken(s string) bool {
	if len(s) > 4<<10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return true
}
