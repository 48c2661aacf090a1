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
	once sync.Once
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
	select {
	case tc.jobs <- tokenJob{route, body}:
	default:
		m.Uncounted()
	}
}

// close counts what is queued and stops.
func (tc *tokenCounter) close() {
	tc.once.Do(func() { close(tc.jobs) })
	tc.done.Wait()
}
