package buffers

import "testing"

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want int
	}{
		{0, SmallSize}, {SmallSize, SmallSize}, {SmallSize + 1, LargeSize}, {-1, LargeSize}, {1 << 30, LargeSize},
	} {
		p := For(tc.n)
		b := p.Get()
		if len(b) != tc.want {
			t.Errorf("For(%d) lends %d bytes, want %d", tc.n, len(b), tc.want)
		}
		p.Put(b)
	}
}

// Borrow and Return lend and take back a buffer without an allocation,
// once the pool holds one.
func TestBorrowReturnAllocateNothing(t *testing.T) {
	Small.Return(Small.Borrow())
	allocs := testing.AllocsPerRun(100, func() {
		b := Small.Borrow()
		if len(*b) != SmallSize {
			t.Fatalf("Borrow lent %d bytes, want %d", len(*b), SmallSize)
		}
		Small.Return(b)
	})
	if allocs != 0 {
		t.Errorf("Borrow and Return allocate %.1f times a loan, want 0", allocs)
	}
}
