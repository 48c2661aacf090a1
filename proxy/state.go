package proxy

import (
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"sync"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// State is what outlives a reload of the rules: the aliases learned so far,
// recoveries under way, and the worker counting body tokens. Serve makes
// one and hands it to every Proxy it builds.
type State struct {
	callerHeader string // canonical, to index the header map directly
	learner      *learner
	recovery     *recovery
	tokens       *tokenCounter
	metrics      *metrics.Metrics
	closing      sync.Once
}

// NewState makes the state for the caller tracking learn describes. m may
// be nil (nothing is counted) and so may log.
func NewState(learn rules.Learn, m *metrics.Metrics, log *slog.Logger) *State {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &State{callerHeader: textproto.CanonicalMIMEHeaderKey(learn.CallerHeader), metrics: m, learner: newLearner(learn, log)}
	if m != nil {
		s.tokens = newTokenCounter(m)
		s.recovery = newRecovery(learn, m)
	}
	return s
}

// Close stops the state's background work, counting what is queued. It
// may be called more than once.
func (s *State) Close() {
	s.closing.Do(func() {
		if s.tokens != nil {
			s.tokens.close()
		}
		if s.recovery != nil {
			s.recovery.close()
		}
	})
}

// caller identifies who sent a request: the configured header, else the
// client address. Alias learning and recovery tracking share it.
func (s *State) caller(h http.Header, remoteAddr string) string {
	if s.callerHeader != "" {
		if v := httpwire.FirstValue(h[s.callerHeader]); v != "" && len(v) <= 128 {
			return "h:" + v
		}
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	return "a:" + host
}
