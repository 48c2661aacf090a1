package budget

import (
	"bytes"
	"errors"
	"testing"
)

// TestRead: a buffer is charged before it is allocated, for its
// whole capacity, and a read the budget cannot pay for stops with what it
// has.
func TestRead(t *testing.T) {
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
		{"known length over the budget", 32 << 10, 64 << 10, int64(len(body)), 0, ErrSpent, 0},
		{"unknown length, budget spent mid-body", 40 << 10, 64 << 10, -1, 20 << 10, ErrSpent, 20 << 10},
		{"longer than it said: a small buffer grows", 1 << 20, 64 << 10, 100, len(body), nil, 68 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.budget, nil)
			c := &Charge{Budget: b}
			got, err := c.Read(bytes.NewReader(body), tc.limit, tc.size)
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
			c.End()
			c.End()
			if b.InUse() != 0 {
				t.Errorf("budget in use after release: %d, want 0", b.InUse())
			}
		})
	}
}

// TestBudgetReuse: a buffer given back serves the next body of its size,
// kept buffers make room for others, and none outlives the budget.
func TestBudgetReuse(t *testing.T) {
	b := New(100<<10, nil)
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
