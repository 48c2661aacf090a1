package upstream

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
)

// TestResendsOnlyWhereTransportWould: whether a request that got no answer
// goes again, by what is known of it, as http.Transport's
// shouldRetryRequest judges.
func TestResendsOnlyWhereTransportWould(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	const get, post, keyed = true, false, true // whether each may be replayed
	for _, tc := range []struct {
		name       string
		e          noAnswer
		reused     bool
		replayable bool
		resendable bool
		want       bool
	}{
		{"found stale before writing, fresh connection", noAnswer{err: errStale, stale: true, unsent: true}, false, post, false, true},
		{"found stale before writing, a streamed body", noAnswer{err: errStale, stale: true, unsent: true}, true, post, false, true},
		{"nothing written, body resendable", noAnswer{err: reset, unsent: true}, true, post, true, true},
		{"nothing written, body streamed", noAnswer{err: reset, unsent: true}, true, post, false, false},
		{"nothing written on a fresh connection", noAnswer{err: reset, unsent: true}, false, post, true, false},
		{"POST written, then reset", noAnswer{err: reset}, true, post, true, false},
		{"POST written, then closed", noAnswer{err: io.EOF}, true, post, true, false},
		{"GET written, then reset", noAnswer{err: reset}, true, get, true, true},
		{"GET written, then closed", noAnswer{err: io.EOF}, true, get, true, true},
		{"GET written, then cut mid-answer", noAnswer{err: io.ErrUnexpectedEOF}, true, get, true, false},
		{"GET on a fresh connection", noAnswer{err: io.EOF}, false, get, true, false},
		{"POST with an idempotency key, then reset", noAnswer{err: reset}, true, keyed, true, true},
	} {
		send := &fixedRequest{replay: tc.replayable, resend: tc.resendable}
		if got := tc.e.mayResend(tc.reused, send); got != tc.want {
			t.Errorf("%s: may send again = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fixedRequest is a Request that may, or may not, be replayed, and whose
// body can, or cannot, be written again.
type fixedRequest struct{ replay, resend bool }

func (f *fixedRequest) WriteRequest(*bufio.Writer) error      { return nil }
func (f *fixedRequest) Streams() bool                         { return !f.resend }
func (f *fixedRequest) Informational(code int, h http.Header) {}
func (f *fixedRequest) Resendable() bool                      { return f.resend }
func (f *fixedRequest) Replayable() bool                      { return f.replay }

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
