// Package budget bounds the memory that upstream error bodies being
// examined, and request bodies being read, hold at once, across requests
// and reloads, and lends the buffers error bodies are read into.
package budget

import (
	"errors"
	"io"
	"math/bits"
	"sync"
	"time"
)

// Meter receives what a budget measures: its size, the bytes it lends as
// they change, and each refusal. Its methods must be safe to call on a nil
// receiver of the concrete type, which measures nothing.
type Meter interface {
	BufferBudget(bytes int64)
	BufferBudgetInUse(delta int64)
	BufferBudgetExhausted()
}

// Default is the memory all requests together may hold in buffered
// upstream error bodies, raw and decoded.
const Default = 64 << 20

// Budget bounds the bytes that upstream error bodies being examined hold
// at once, across requests and reloads: each request's bound
// (limits.error_body) alone would let many concurrent errors hold many
// times that. A buffer is charged before it is allocated; a request that
// cannot get the bytes treats its body as one too large to read.
//
// Buffers given back are kept for the next bodies, within the same bound,
// and on unix live outside the collected heap: a budget's worth of error
// bodies then neither leaves garbage at every turn nor raises the
// collector's goal by half as much again, so the resident set stays near
// the budget plus the process's own. Kept buffers go back to the system
// once none has moved for keepIdle.
type Budget struct {
	size    int64
	metrics Meter

	mu   sync.Mutex
	lent int64            // charged to requests
	kept int64            // held in free, for reuse
	free map[int][][]byte // given-back buffers, by capacity
	idle *time.Timer      // drops free once no buffer moves for keepIdle
}

// keepIdle is how long given-back buffers are kept for reuse.
const keepIdle = 10 * time.Second

// New returns a budget of size bytes, Default when size is zero or less.
// m, when not nil, receives its size, use and exhaustions.
func New(size int64, m Meter) *Budget {
	if size <= 0 {
		size = Default
	}
	b := &Budget{size: size, metrics: m, free: map[int][][]byte{}}
	if m != nil {
		m.BufferBudget(size)
	}
	return b
}

// InUse is the bytes charged to requests now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lent
}

// take charges n bytes that are not a buffer of the budget's, or nothing
// and false when they would pass the bound.
func (b *Budget) take(n int64) bool {
	b.mu.Lock()
	ok := b.room(n)
	if ok {
		b.lent += n
	}
	b.mu.Unlock()
	b.count(ok, n)
	return ok
}

// give returns n bytes that take charged.
func (b *Budget) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.lent -= n
	b.mu.Unlock()
	if b.metrics != nil {
		b.metrics.BufferBudgetInUse(-n)
	}
}

// buffer lends an empty buffer of capacity at least n: a kept one when
// one fits, else a new one. It returns nil when the budget has no room.
// The usual error body, a few hundred bytes, gets one of its own size
// from the heap, never kept.
func (b *Budget) buffer(n int64) []byte {
	if n <= maxSmall {
		if !b.take(n) {
			return nil
		}
		return make([]byte, 0, n)
	}
	size := classOf(n)
	b.mu.Lock()
	var buf []byte
	if list := b.free[size]; len(list) > 0 {
		buf = list[len(list)-1]
		list[len(list)-1] = nil
		b.free[size] = list[:len(list)-1]
		b.kept -= int64(size)
		b.lent += int64(size)
	} else if b.room(int64(size)) {
		b.lent += int64(size)
	} else {
		size = 0
	}
	b.mu.Unlock()
	b.count(size > 0, int64(size))
	if size == 0 {
		return nil
	}
	if buf == nil {
		buf = newBuffer(size)
	}
	return buf[:0]
}

// put takes back a buffer that buffer lent, to keep for reuse.
func (b *Budget) put(buf []byte) {
	size := cap(buf)
	if size <= maxSmall {
		b.give(int64(size))
		return
	}
	b.mu.Lock()
	b.lent -= int64(size)
	b.free[size] = append(b.free[size], buf)
	b.kept += int64(size)
	if b.idle == nil {
		b.idle = time.AfterFunc(keepIdle, b.dropKept)
	} else {
		b.idle.Reset(keepIdle)
	}
	b.mu.Unlock()
	if b.metrics != nil {
		b.metrics.BufferBudgetInUse(-int64(size))
	}
}

// room reports whether n more bytes can be lent, dropping kept buffers
// to make room when they are in the way. b.mu is held.
func (b *Budget) room(n int64) bool {
	if b.lent+n > b.size {
		return false
	}
	if b.lent+b.kept+n <= b.size {
		return true
	}
	for size, list := range b.free {
		if b.lent+b.kept+n <= b.size {
			break
		}
		for len(list) > 0 && b.lent+b.kept+n > b.size {
			freeBuffer(list[len(list)-1])
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			b.kept -= int64(size)
		}
		b.free[size] = list
	}
	return true
}

// dropKept returns the kept buffers to the system.
func (b *Budget) dropKept() {
	b.mu.Lock()
	free := b.free
	b.free, b.kept = map[int][][]byte{}, 0
	b.mu.Unlock()
	for _, list := range free {
		for _, buf := range list {
			freeBuffer(buf)
		}
	}
}

// count records a charge of n bytes, or a refusal.
func (b *Budget) count(ok bool, n int64) {
	switch {
	case b.metrics == nil:
	case ok:
		b.metrics.BufferBudgetInUse(n)
	default:
		b.metrics.BufferBudgetExhausted()
	}
}

// Buffer capacities are a power of two from 16 KiB, plus a page for the
// byte a bounded read takes to tell a body longer than its bound: few
// sizes, so that given-back buffers fit the next bodies, each a whole
// number of pages.
const (
	minClass  = 16 << 10
	classPage = 4 << 10
	// maxSmall is the largest buffer lent from the heap at its own size.
	maxSmall = 4 << 10
)

// classOf is the capacity of the buffer lent for n bytes.
func classOf(n int64) int {
	if n <= minClass+classPage {
		return minClass + classPage
	}
	return 1<<bits.Len64(uint64(n-classPage-1)) + classPage
}

// ErrSpent is a read stopped because the budget had no more bytes.
var ErrSpent = errors.New("the buffer budget is spent")

// Charge is what one exchange holds of a budget: buffers and bytes. A nil
// Budget charges nothing and never refuses. It is released once, when the
// exchange's buffers are no longer used.
type Charge struct {
	Budget *Budget
	bufs   [][]byte
	first  [2][]byte // bufs' storage for the usual one or two
	bytes  int64
	once   sync.Once
	// kept is set when a body still reads the buffers once the exchange's
	// examination ends: closing it releases them.
	kept bool
}

// buffer lends an empty buffer of capacity at least n, or nil when the
// budget refuses.
func (c *Charge) buffer(n int64) []byte {
	if c.Budget == nil {
		return make([]byte, 0, n)
	}
	buf := c.Budget.buffer(n)
	if buf != nil {
		if c.bufs == nil {
			c.bufs = c.first[:0]
		}
		c.bufs = append(c.bufs, buf)
	}
	return buf
}

// giveBack returns a buffer that c lent and nothing uses any more.
func (c *Charge) giveBack(buf []byte) {
	if c.Budget == nil {
		return
	}
	for i, b := range c.bufs {
		if cap(b) == cap(buf) && &b[:1][0] == &buf[:1][0] {
			c.bufs = append(c.bufs[:i], c.bufs[i+1:]...)
			c.Budget.put(buf)
			return
		}
	}
}

// Grow charges n bytes that are not a buffer, reporting false when the
// budget refuses them.
func (c *Charge) Grow(n int64) bool {
	if c.Budget == nil {
		return true
	}
	if !c.Budget.take(n) {
		return false
	}
	c.bytes += n
	return true
}

// Shrink gives back n bytes that Grow charged.
func (c *Charge) Shrink(n int64) {
	if c.Budget != nil {
		c.bytes -= n
		c.Budget.give(n)
	}
}

// release gives back everything c holds. Later calls do nothing.
func (c *Charge) release() {
	c.once.Do(func() {
		if c.Budget == nil {
			return
		}
		for _, b := range c.bufs {
			c.Budget.put(b)
		}
		c.bufs = nil
		c.Budget.give(c.bytes)
	})
}

// End releases what c holds, unless a body kept it.
func (c *Charge) End() {
	if !c.kept {
		c.release()
	}
}

// KeepUntilClosed returns body, holding c until it is closed.
func (c *Charge) KeepUntilClosed(body io.ReadCloser) io.ReadCloser {
	if c.Budget == nil {
		return body
	}
	c.kept = true
	return releasingBody{body, c}
}

// releasingBody is a body whose buffers stay charged until it is closed.
type releasingBody struct {
	io.ReadCloser
	c *Charge
}

func (b releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.c.release()
	return err
}

// firstBuffer is the capacity a read of unknown length starts with.
const firstBuffer = minClass + classPage

// Read reads up to limit+1 bytes of r, enough to tell a body longer than
// limit, into a buffer c lends. size is the length the body announced, -1
// when unknown: a known length gets one buffer, an unknown one a buffer
// that doubles as bytes arrive. When the budget refuses a buffer, it
// returns what it read with ErrSpent.
func (c *Charge) Read(r io.Reader, limit, size int64) ([]byte, error) {
	want := min(limit+1, firstBuffer)
	if size >= 0 && size <= limit {
		want = size + 1 // the extra byte tells a body longer than it said
	}
	buf := c.buffer(want)
	if buf == nil {
		return nil, ErrSpent
	}
	for {
		if int64(len(buf)) > limit {
			return buf[:limit+1], nil
		}
		if len(buf) == cap(buf) {
			next := 2 * int64(cap(buf))
			if cap(buf) > maxSmall {
				next = 2*int64(cap(buf)-classPage) + classPage // the next class
			}
			grown := c.buffer(min(next, limit+1))
			if grown == nil {
				return buf, ErrSpent
			}
			grown = append(grown, buf...)
			c.giveBack(buf)
			buf = grown
		}
		end := min(int64(cap(buf)), limit+1)
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
