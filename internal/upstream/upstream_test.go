package upstream

import (
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
)

// TestResendsOnlyWhereTransportWould: whether a request that got no answer
// goes again, by what is known of it, as http.Transport's
// shouldRetryRequest judges.
func TestResendsOnlyWhereTransportWould(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	var (
		get      = outgoing("GET", "")
		post     = outgoing("POST", "read") // its body read whole: it can be written again
		streamed = outgoing("POST", "streamed")
		keyed    = outgoing("POST", "")
	)
	keyed.In.Header.Set("Idempotency-Key", "k-1")
	for _, tc := range []struct {
		name   string
		e      noAnswer
		reused bool
		send   *Request
		want   bool
	}{
		{"found stale before writing, fresh connection", noAnswer{err: errStale, stale: true, unsent: true}, false, streamed, true},
		{"found stale before writing, a streamed body", noAnswer{err: errStale, stale: true, unsent: true}, true, streamed, true},
		{"nothing written, body read whole", noAnswer{err: reset, unsent: true}, true, post, true},
		{"nothing written, body streamed", noAnswer{err: reset, unsent: true}, true, streamed, false},
		{"nothing written on a fresh connection", noAnswer{err: reset, unsent: true}, false, post, false},
		{"POST written, then reset", noAnswer{err: reset}, true, post, false},
		{"POST written, then closed", noAnswer{err: io.EOF}, true, post, false},
		{"GET written, then reset", noAnswer{err: reset}, true, get, true},
		{"GET written, then closed", noAnswer{err: io.EOF}, true, get, true},
		{"GET written, then cut mid-answer", noAnswer{err: io.ErrUnexpectedEOF}, true, get, false},
		{"GET on a fresh connection", noAnswer{err: io.EOF}, false, get, false},
		{"POST with an idempotency key, then reset", noAnswer{err: reset}, true, keyed, true},
		{"POST with a body and an idempotency key, then reset", noAnswer{err: reset}, true, withKey(outgoing("POST", "read")), false},
	} {
		if got := tc.e.mayResend(tc.reused, tc.send); got != tc.want {
			t.Errorf("%s: may send again = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// outgoing is a request of method whose body is none (""), read whole
// ("read") or streamed from the caller ("streamed").
func outgoing(method, body string) *Request {
	r := &Request{In: httptest.NewRequest(method, "http://api.test/tickets", nil), Host: "api.test"}
	switch body {
	case "read":
		r.Body = []byte(`{"status":"open"}`)
	case "streamed":
		r.In.Body = io.NopCloser(strings.NewReader(`{"status":"open"}`))
	}
	return r
}

func withKey(r *Request) *Request {
	r.In.Header.Set("Idempotency-Key", "k-1")
	return r
}

// TestNothingSent: only an exchange that ended before a byte of its
// request was written, or before a connection was made, sent nothing.
func TestNothingSent(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	read := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{dial, true},
		{fmt.Errorf("wrapped: %w", dial), true},
		{noAnswer{err: read, unsent: true}, true},
		{noAnswer{err: errStale, stale: true, unsent: true}, true},
		{noAnswer{err: read}, false},
		{read, false},
		{io.EOF, false},
		{InvalidStatus(99), false},
	} {
		if got := NothingSent(tc.err); got != tc.want {
			t.Errorf("NothingSent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
