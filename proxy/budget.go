package proxy

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/signpost-proxy/signpost/metrics"
)

// DefaultBufferBudget is the memory all requests together may hold in
// buffered upstream error bodies, raw and decoded.
const DefaultBufferBudget = 64 << 20

// Budget bounds the bytes that upstream error bodies being examined hold
// at once, across requests and reloads: each request's bound
// (limits.error_body) alone would let many concurrent errors hold many
// times that. A buffer is charged before it is allocated; a request that
// cannot get the bytes treats its body as one too large to read.
type Budget struct {
	size    int64
	used    atomic.Int64
	metrics *metrics.Metrics
}

// NewBudget returns a budget of size bytes, DefaultBufferBudget when size
// is zero or less. m, when not nil, receives its size, use and exhaustions.
func NewBudget(size int64, m *metrics.Metrics) *Budget {
	if size <= 0 {
		size = DefaultBufferBudget
	}
	b := &Budget{size: size, metrics: m}
	if m != nil {
		m.BufferBudget(size)
	}
	return b
}

// Size is the budget's bound in bytes.
func (b *Budget) Size() int64 { return b.size }

// InUse is the bytes charged now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// take charges n bytes, or nothing and false when they would pass the
// bound.
func (b *Budget) take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.size {
			if b.metrics != nil {
				b.metrics.BufferBudgetExhausted()
			}
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			if b.metrics != nil {
				b.metrics.BufferBudgetInUse(n)
			}
			return true
		}
	}
}

func (b *Budget) give(n int64) {
	if n == 0 {
		return
	}
	b.used.Add(-n)
	if b.metrics != nil {
		b.metrics.BufferBudgetInUse(-n)
	}
}

// errNoBudget is a read stopped because the budget had no more bytes.
var errNoBudget = errors.New("the buffer budget is spent")

// charge is what one exchange holds of a budget; a nil budget charges
// nothing and never refuses. It is released once, when the exchange's
// buffers are no longer used.
type charge struct {
	budget *Budget
	held   int64
	once   sync.Once
	// kept is set when a body still reads the buffers once the exchange's
	// examination ends: closing it releases them.
	kept bool
}

// grow charges n more bytes, reporting false when the budget refuses them.
func (c *charge) grow(n int64) bool {
	if c.budget == nil {
		return true
	}
	if !c.budget.take(n) {
		return false
	}
	c.held += n
	return true
}

// shrink gives back n bytes of what c holds.
func (c *charge) shrink(n int64) {
	if c.budget != nil {
		c.held -= n
		c.budget.give(n)
	}
}

// release gives back everything c holds. Later calls do nothing.
func (c *charge) release() {
	c.once.Do(func() {
		if c.budget != nil {
			c.budget.give(c.held)
		}
	})
}

// end releases what c holds, unless a body kept it.
func (c *charge) end() {
	if !c.kept {
		c.release()
	}
}

// keepUntilClosed returns body, holding c until it is closed.
func (c *charge) keepUntilClosed(body io.ReadCloser) io.ReadCloser {
	if c.budget == nil {
		return body
	}
	c.kept = true
	return releasingBody{body, c}
}

// releasingBody is a body whose buffer stays charged until it is closed.
type releasingBody struct {
	io.ReadCloser
	c *charge
}

func (b releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.c.release()
	return err
}

// firstBuffer is the capacity a read of unknown length starts with.
const firstBuffer = 16 << 10

// readCharged reads up to limit+1 bytes of r, as readHead does, into a
// buffer whose capacity is charged to c before it is allocated. size is
// the length the body announced, -1 when unknown: a known length gets one
// exact buffer, an unknown one a buffer that doubles as bytes arrive. When
// the budget refuses a buffer, it returns what it read with errNoBudget.
func readCharged(r io.Reader, limit, size int64, c *charge) ([]byte, error) {
	want := min(limit+1, firstBuffer)
	if size >= 0 && size <= limit {
		want = size + 1 // the extra byte tells a body longer than it said
	}
	if !c.grow(want) {
		return nil, errNoBudget
	}
	buf := make([]byte, 0, want)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, nil
			}
			next := min(int64(cap(buf))*2, limit+1)
			if !c.grow(next) {
				return buf, errNoBudget
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			c.shrink(int64(cap(buf)))
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
