package proxy

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/rules"
)

// spent returns the fixture with a budget of size bytes of which only
// free are left, as when other requests hold the rest.
func spent(t *testing.T, f *fixture, size, free int64) *budget.Budget {
	t.Helper()
	b := budget.New(size, f.m)
	held := &budget.Charge{Budget: b}
	if !held.Grow(size - free) {
		t.Fatal("cannot take from a fresh budget")
	}
	f.p.budget = b
	return b
}

// TestBudgetExhausted: an error body the budget has no room for is handled
// as one too large to read, under each policy, counted, and its charge
// given back.
func TestBudgetExhausted(t *testing.T) {
	match := []byte(`{"error":"Invalid status"}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(match)
	zw.Close()
	const (
		roomToRead = 20<<10 + 100 // a first read's buffer, 16 KiB and a page, not the inflater
		roomEnough = 128 << 10
	)
	for _, tc := range []struct {
		name   string
		policy rules.Policy
		hdr    http.Header
		body   []byte
		free   int64
		want   string // the body answered
	}{
		// A body left unread may say anything: it is wrapped, unjudged.
		// One read but not decoded is answered with the request's fault.
		{"wrapped unread", rules.Wrap, nil, match, 16, rejectedBody(400, "")},
		{"passed through unread", rules.Passthrough, nil, match, 16, string(match)},
		{"gzip read, no room to inflate", rules.Wrap, http.Header{"Content-Encoding": {"gzip"}}, gz.Bytes(), roomToRead, rewritten},
		{"gzip passed through as it came", rules.Passthrough, http.Header{"Content-Encoding": {"gzip"}}, gz.Bytes(), roomToRead, gz.String()},
		{"room enough: rewritten", rules.Wrap, nil, match, roomEnough, rewritten},
		{"room enough, gzip: rewritten", rules.Wrap, http.Header{"Content-Encoding": {"gzip"}}, gz.Bytes(), roomEnough, rewritten},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newProxyWith(t, &roundTrip{status: 400, header: tc.hdr, body: tc.body}, tc.policy)
			const size = 1 << 20
			// The request body is charged too, while it is read: room
			// is left for it.
			call := `{"status":"OPEN"}`
			if tc.policy == rules.Passthrough {
				// A field at fault would explain the error: passed through,
				// the request must conform.
				call = `{"status":"open"}`
			}
			free := tc.free + int64(len(call))
			b := spent(t, f, size, free)
			w := f.do("PATCH", "/tickets/T-1", call)
			if w.Code != 400 || w.Body.String() != tc.want {
				t.Fatalf("got %d %q; want 400 %q", w.Code, w.Body, tc.want)
			}
			exhausted := 1.0
			if tc.free == roomEnough {
				exhausted = 0
			}
			if c := f.counter(t, "signpost_buffer_budget_exhausted_total"); c != exhausted {
				t.Errorf("signpost_buffer_budget_exhausted_total = %v, want %v", c, exhausted)
			}
			if used := b.InUse(); used != size-free {
				t.Errorf("budget in use after the answer: %d, want the %d taken before", used, size-free)
			}
		})
	}
}

// TestBudgetHeldWhilePassedOn: a body passed through after it was read
// keeps its buffer charged until the caller has it.
func TestBudgetHeldWhilePassedOn(t *testing.T) {
	body := []byte(`{"error":"Other"}`)
	f := newProxyWith(t, &roundTrip{status: 400, body: body}, rules.Passthrough)
	b := budget.New(1<<20, f.m)
	f.p.budget = b
	res := &http.Response{StatusCode: 400, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body))}
	ex := &exchange{route: f.p.cfg.Routes[0]}
	if err := f.p.modify(res, ex); err != nil {
		t.Fatal(err)
	}
	if b.InUse() == 0 {
		t.Fatalf("nothing charged while the body is still to be sent")
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Equal(got, body) || b.InUse() != 0 {
		t.Errorf("sent %q, %d bytes still charged; want %q and 0", got, b.InUse(), body)
	}
}
