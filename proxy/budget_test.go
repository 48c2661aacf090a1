package proxy

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestReadCharged: a buffer is charged before it is allocated, for its
// whole capacity, and a read the budget cannot pay for stops with what it
// has.
func TestReadCharged(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 40<<10)
	for _, tc := range []struct {
		name          string
		budget, limit int64
		size          int64 // announced length, -1 unknown
		wantLen       int
		wantErr       error
		wantHeld      int64
	}{
		{"known length, one buffer", 1 << 20, 64 << 10, int64(len(body)), len(body), nil, 68 << 10},
		{"unknown length, doubling", 1 << 20, 64 << 10, -1, len(body), nil, 68 << 10},
		{"unknown length, stops past the limit", 1 << 20, 20 << 10, -1, 20<<10 + 1, nil, 36 << 10},
		{"known length over the budget", 32 << 10, 64 << 10, int64(len(body)), 0, errNoBudget, 0},
		{"unknown length, budget spent mid-body", 40 << 10, 64 << 10, -1, 20 << 10, errNoBudget, 20 << 10},
		{"longer than it said: a small buffer grows", 1 << 20, 64 << 10, 100, len(body), nil, 68 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(tc.budget, nil)
			c := &charge{budget: b}
			got, err := readCharged(bytes.NewReader(body), tc.limit, tc.size, c)
			if !errors.Is(err, tc.wantErr) || len(got) != tc.wantLen {
				t.Fatalf("read %d bytes, %v; want %d, %v", len(got), err, tc.wantLen, tc.wantErr)
			}
			if !bytes.Equal(got, body[:len(got)]) {
				t.Errorf("the bytes read differ from the body's")
			}
			if b.InUse() != tc.wantHeld {
				t.Errorf("budget in use %d; want %d", b.InUse(), tc.wantHeld)
			}
			if err == nil && int64(cap(got)) != b.InUse() {
				t.Errorf("buffer capacity %d, charged %d", cap(got), b.InUse())
			}
			c.end()
			c.end()
			if b.InUse() != 0 {
				t.Errorf("budget in use after release: %d, want 0", b.InUse())
			}
		})
	}
}

// TestBudgetReuse: a buffer given back serves the next body of its size,
// kept buffers make room for others, and none outlives the budget.
func TestBudgetReuse(t *testing.T) {
	b := NewBudget(100<<10, nil)
	first := b.buffer(40 << 10)
	if cap(first) != 68<<10 {
		t.Fatalf("capacity %d for 40 KiB, want 64 KiB and a page", cap(first))
	}
	b.put(first)
	again := b.buffer(50 << 10)
	if &again[:1][0] != &first[:1][0] {
		t.Errorf("a buffer of the same size was allocated anew, not reused")
	}
	b.put(again)
	// 68 KiB are kept; 20 KiB more fit beside them; 132 KiB never fit.
	small := b.buffer(20 << 10)
	if small == nil || b.kept != 68<<10 {
		t.Fatalf("20 KiB beside 68 KiB kept: buffer %v, kept %d", small != nil, b.kept)
	}
	b.put(small)
	big := b.buffer(80 << 10)
	if big != nil {
		t.Errorf("lent 128 KiB from a 100 KiB budget")
	}
	other := b.buffer(60<<10 + 10)
	if other == nil || b.lent+b.kept > b.size {
		t.Errorf("lent %d and kept %d of %d", b.lent, b.kept, b.size)
	}
	b.put(other)
	// Kept buffers of other sizes give way to a body that needs the room:
	// 68 + 36 KiB do not fit in 100.
	b.dropKept()
	b.put(b.buffer(40 << 10))
	mid := b.buffer(30 << 10)
	if mid == nil || b.kept != 0 || b.lent != 36<<10 {
		t.Errorf("no room made for 36 KiB out of 68 KiB kept: buffer %v, lent %d, kept %d", mid != nil, b.lent, b.kept)
	}
	b.put(mid)
	b.dropKept()
	// A small body gets a buffer of its own size, charged, never kept.
	tiny := b.buffer(300)
	if cap(tiny) != 300 || b.lent != 300 {
		t.Errorf("300 bytes: capacity %d, lent %d", cap(tiny), b.lent)
	}
	b.put(tiny)
	if b.kept != 0 || b.lent != 0 || len(b.free) != 0 {
		t.Errorf("after dropping: lent %d, kept %d, %d sizes", b.lent, b.kept, len(b.free))
	}
}

// spent returns the fixture with a budget of size bytes of which only
// free are left, as when other requests hold the rest.
func spent(t *testing.T, f *fixture, size, free int64) *Budget {
	t.Helper()
	b := NewBudget(size, f.m)
	if !b.take(size - free) {
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
		roomToRead = minClass + classPage + 100 // one buffer, not the inflater
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
		{"wrapped unread", rules.Wrap, nil, match, 16, rejectedBody(400, "")},
		{"passed through unread", rules.Passthrough, nil, match, 16, string(match)},
		{"gzip read, no room to inflate", rules.Wrap, http.Header{"Content-Encoding": {"gzip"}}, gz.Bytes(), roomToRead, rejectedBody(400, "")},
		{"gzip passed through as it came", rules.Passthrough, http.Header{"Content-Encoding": {"gzip"}}, gz.Bytes(), roomToRead, gz.String()},
		{"room enough: rewritten", rules.Wrap, nil, match, roomEnough, rewritten},
		{"room enough, gzip: rewritten", rules.Wrap, http.Header{"Content-Encoding": {"gzip"}}, gz.Bytes(), roomEnough, rewritten},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newProxyWith(t, &roundTrip{status: 400, header: tc.hdr, body: tc.body}, tc.policy)
			const size = 1 << 20
			b := spent(t, f, size, tc.free)
			w := f.do("PATCH", "/tickets/T-1", `{"status":"OPEN"}`)
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
			if used := b.InUse(); used != size-tc.free {
				t.Errorf("budget in use after the answer: %d, want the %d taken before", used, size-tc.free)
			}
		})
	}
}

// TestBudgetHeldWhilePassedOn: a body passed through after it was read
// keeps its buffer charged until the caller has it.
func TestBudgetHeldWhilePassedOn(t *testing.T) {
	body := []byte(`{"error":"Other"}`)
	f := newProxyWith(t, &roundTrip{status: 400, body: body}, rules.Passthrough)
	b := NewBudget(1<<20, f.m)
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
