package proxy

import (
	"sync"

	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// tokenCounter counts the tokens of written error bodies off the request
// path: tokenizing costs tens of microseconds, which a caller should not
// wait for. When counting falls behind, bodies are left uncounted and that
// is counted instead.
type tokenCounter struct {
	jobs chan tokenJob
	done sync.WaitGroup
	// mu guards closed: observe may run for a request still in flight
	// after close, and must then drop its body rather than send.
	mu     sync.RWMutex
	closed bool
}

type tokenJob struct {
	route string
	body  []byte
}

const tokenQueue = 1024

func newTokenCounter(m *metrics.Metrics) *tokenCounter {
	tc := &tokenCounter{jobs: make(chan tokenJob, tokenQueue)}
	tc.done.Add(1)
	go func() {
		defer tc.done.Done()
		for j := range tc.jobs {
			if n := rules.Tokens(string(j.body)); n >= 0 {
				m.BodyTokens(j.route, n)
			}
		}
	}()
	return tc
}

// observe queues body, which must not change afterwards, for counting.
func (tc *tokenCounter) observe(m *metrics.Metrics, route string, body []byte) {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	if tc.closed {
		m.Uncounted()
		return
	}
	select {
	case tc.jobs <- tokenJob{route, body}:
	default:
		m.Uncounted()
	}
}

// close counts what is queued and stops.
func (tc *tokenCounter) close() {
	tc.mu.Lock()
	if !tc.closed {
		tc.closed = true
		close(tc.jobs)
	}
	tc.mu.Unlock()
	tc.done.Wait()
}
