package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// lateStall answers after delay with an error body that never ends.
type lateStall struct{ delay time.Duration }

func (s lateStall) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(s.delay)
	pr, pw := io.Pipe()
	go pw.Write([]byte(`{"error":"Invalid`))
	return &http.Response{StatusCode: 400, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
}

// TestErrorBodyWaitCountsFromArrival: the upstream timeout bounds headers
// and error body together, so late headers leave the body only what is
// left of it, and the caller has a whole answer within the timeout.
func TestErrorBodyWaitCountsFromArrival(t *testing.T) {
	const timeout = 400 * time.Millisecond
	for _, delay := range []time.Duration{0, 300 * time.Millisecond, 500 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			f := newProxy(t, lateStall{delay})
			f.p.bodyTimeout = timeout
			start := time.Now()
			w := f.do("PATCH", "/tickets/T-1", `{"status":"open"}`)
			elapsed := time.Since(start)
			if w.Code != 400 || !strings.Contains(w.Body.String(), `"upstream_rejected"`) {
				t.Errorf("got %d %s; want the wrapped 400", w.Code, w.Body)
			}
			// Headers later than the timeout still leave the body a moment.
			bound := max(timeout, delay+minBodyWait) + 100*time.Millisecond
			if elapsed > bound {
				t.Errorf("answered after %v; want within %v", elapsed, bound)
			}
		})
	}
}
