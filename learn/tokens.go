package learn

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// tokenCounter counts the tokens of written error bodies off the request
// path: tokenizing costs tens of microseconds, which a caller should not
// wait for. When counting falls behind, bodies are left uncounted and that
// is counted instead. Agents repeat their mistakes, so the same bodies
// recur: their counts are remembered, and a body seen before is counted on
// the spot for the price of a hash.
type tokenCounter struct {
	jobs chan tokenJob
	done sync.WaitGroup
	// mu guards closed: observe may run for a request still in flight
	// after close, and must then drop its body rather than send.
	mu     sync.RWMutex
	closed bool

	seed    maphash.Seed
	knownMu sync.Mutex
	known   map[uint64]int // token counts by body hash
}

type tokenJob struct {
	route string
	body  []byte
	hash  uint64
}

const (
	tokenQueue = 1024
	// knownBodies bounds the remembered counts; past it, they are
	// forgotten all at once and learned again.
	knownBodies = 4096
)

func newTokenCounter(m *metrics.Metrics) *tokenCounter {
	tc := &tokenCounter{jobs: make(chan tokenJob, tokenQueue), seed: maphash.MakeSeed(), known: make(map[uint64]int)}
	tc.done.Add(1)
	go func() {
		defer tc.done.Done()
		for j := range tc.jobs {
			n := rules.Tokens(string(j.body))
			tc.remember(j.hash, n)
			if n >= 0 {
				m.BodyTokens(j.route, n)
			}
		}
	}()
	return tc
}

func (tc *tokenCounter) remember(hash uint64, n int) {
	tc.knownMu.Lock()
	if len(tc.known) >= knownBodies {
		clear(tc.known)
	}
	tc.known[hash] = n
	tc.knownMu.Unlock()
}

func (tc *tokenCounter) lookup(hash uint64) (int, bool) {
	tc.knownMu.Lock()
	n, ok := tc.known[hash]
	tc.knownMu.Unlock()
	return n, ok
}

// shapeHash hashes body with every digit read as 0. o200k_base cuts a run
// of digits into pieces of up to three, each one token whatever its
// digits, so bodies that differ only in digits (a repeat count, an id, a
// number sent) cost the same: one count serves them all, and a caller
// repeating a call, whose every answer carries a new count, is not
// tokenized again each time.
func (tc *tokenCounter) shapeHash(body []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(tc.seed)
	var buf [256]byte
	for len(body) > 0 {
		n := copy(buf[:], body)
		for i, c := range buf[:n] {
			if '1' <= c && c <= '9' {
				buf[i] = '0'
			}
		}
		h.Write(buf[:n])
		body = body[n:]
	}
	return h.Sum64()
}

// observe queues body, which must not change afterwards, for counting.
func (tc *tokenCounter) observe(m *metrics.Metrics, route string, body []byte) {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	if tc.closed {
		m.Uncounted()
		return
	}
	hash := tc.shapeHash(body)
	if n, ok := tc.lookup(hash); ok {
		if n >= 0 {
			m.BodyTokens(route, n)
		}
		return
	}
	select {
	case tc.jobs <- tokenJob{route, bytes.Clone(body), hash}: // body's buffer is reused once sent
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
