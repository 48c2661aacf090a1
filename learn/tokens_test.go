package learn

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// TestTokenCounterRemembersBodies counts a recurring body once and a new
// one again, with every observation in the histogram.
func TestTokenCounterRemembersBodies(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	tc := newTokenCounter(m)
	defer tc.close()
	bodies := []string{
		`{"error":"invalid_status","field":"status","received":"OPEN"}`,
		`{"error":"invalid_status","field":"status","received":"OPEN"}`,
		`{"error":"invalid_status","field":"status","received":"Open"}`,
		`{"error":"invalid_status","field":"status","received":"OPEN"}`,
	}
	var want float64
	for i, b := range bodies {
		tc.observe(m, "update_ticket", []byte(b))
		want += float64(rules.Tokens(b))
		deadline := time.Now().Add(2 * time.Second)
		for {
			n, sum := metricstest.Histogram(t, reg, "signpost_error_body_tokens", "route", "update_ticket")
			if n == uint64(i+1) {
				if sum != want {
					t.Fatalf("after %d bodies the token sum is %v; want %v", i+1, sum, want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %d bodies the histogram has %d samples", i+1, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	tc.knownMu.Lock()
	remembered := len(tc.known)
	tc.knownMu.Unlock()
	if remembered != 2 {
		t.Errorf("%d counts remembered; want 2, one per distinct body", remembered)
	}
}

// TestTokenCounterCopiesQueuedBodies observes bodies written one after
// another into one buffer, as the proxy writes them: each is counted as it
// was when observed, not as the buffer reads later.
func TestTokenCounterCopiesQueuedBodies(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	tc := newTokenCounter(m)
	buf := make([]byte, 0, 256)
	var want float64
	const bodies = 20
	for i := range bodies {
		body := `{"error":"invalid_status","received":"` + strings.Repeat("OPEN ", i+1) + `"}`
		buf = append(buf[:0], body...)
		tc.observe(m, "update_ticket", buf)
		want += float64(rules.Tokens(body))
	}
	clear(buf[:cap(buf)])
	tc.close() // counts what is queued
	if n, sum := metricstest.Histogram(t, reg, "signpost_error_body_tokens", "route", "update_ticket"); n != bodies || sum != want {
		t.Errorf("histogram: %d samples summing %v; want %d summing %v", n, sum, bodies, want)
	}
}

// TestTokenCounterCountsDigitsAlike: bodies that differ only in their
// digits, as a caller's repeated answers do, are tokenized once per shape,
// and every count is still exact.
func TestTokenCounterCountsDigitsAlike(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	tc := newTokenCounter(m)
	defer tc.close()
	var want float64
	n := 0
	for _, r := range []string{"2", "3", "9", "10", "57", "99", "100", "4096", "65535"} {
		b := `{"error":"invalid_status","field":"status","message":"this value was already rejected","received":"T-8841","repeated":` + r + `}`
		tc.observe(m, "update_ticket", []byte(b))
		want += float64(rules.Tokens(b))
		n++
		deadline := time.Now().Add(2 * time.Second)
		for {
			if got, _ := metricstest.Histogram(t, reg, "signpost_error_body_tokens", "route", "update_ticket"); got == uint64(n) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("body %d not counted within 2s", n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if _, sum := metricstest.Histogram(t, reg, "signpost_error_body_tokens", "route", "update_ticket"); sum != want {
		t.Errorf("token sum %v; want %v, each body counted exactly", sum, want)
	}
	tc.knownMu.Lock()
	remembered := len(tc.known)
	tc.knownMu.Unlock()
	if remembered != 5 {
		t.Errorf("%d counts remembered; want 5, one per length of the count (1 to 5 digits)", remembered)
	}
}
