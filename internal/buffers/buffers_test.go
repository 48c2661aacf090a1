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
