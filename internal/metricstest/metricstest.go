// Package metricstest reads series from a Prometheus gatherer, for tests
// that check what signpost counted.
package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Counter returns the value of the counter name whose labels include the
// name and value pairs given, 0 when there is none.
func Counter(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	if m := find(t, g, name, labels); m != nil {
		return m.GetCounter().GetValue()
	}
	return 0
}

// Histogram returns the sample count and sum of the histogram series name
// whose labels include the pairs given.
func Histogram(t testing.TB, g prometheus.Gatherer, name string, labels ...string) (uint64, float64) {
	t.Helper()
	if m := find(t, g, name, labels); m != nil {
		return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	}
	return 0, 0
}

func find(t testing.TB, g prometheus.Gatherer, name string, labels []string) *dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			if labelsMatch(m.Label, labels) {
				return m
			}
		}
	}
	return nil
}

func labelsMatch(have []*dto.LabelPair, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		found := false
		for _, lp := range have {
			if lp.GetName() == want[i] && lp.GetValue() == want[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
