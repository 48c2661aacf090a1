package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// labels are the label values of one series, unused ones empty.
type labels struct{ a, b, c string }

// series caches the series of one vector by their label values. Finding a
// series in client_golang hashes every byte of its labels and compares
// them under a lock; the busiest series, touched on every request, are
// found here with one map lookup instead. Label values are bounded (see
// the package comment), and so is the cache.
type series[M any] struct {
	mu sync.RWMutex
	m  map[labels]M
}

// get returns the series for l, resolved by find the first time.
func (s *series[M]) get(l labels, find func(labels) M) M {
	s.mu.RLock()
	v, ok := s.m[l]
	s.mu.RUnlock()
	if ok {
		return v
	}
	v = find(l)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[labels]M)
	}
	s.m[l] = v
	s.mu.Unlock()
	return v
}

func counterOf(vec *prometheus.CounterVec, n int) func(labels) prometheus.Counter {
	return func(l labels) prometheus.Counter { return vec.WithLabelValues([]string{l.a, l.b, l.c}[:n]...) }
}

func observerOf(vec *prometheus.HistogramVec, n int) func(labels) prometheus.Observer {
	return func(l labels) prometheus.Observer { return vec.WithLabelValues([]string{l.a, l.b, l.c}[:n]...) }
}
