// Package buffers lends the copy buffers bodies stream through, in two
// sizes, so that streaming a body costs no buffer allocation and many
// small bodies in flight do not each pin a large buffer.
package buffers

import "sync"

// Pool lends copy buffers of one size. It is an httputil.BufferPool.
type Pool struct{ p sync.Pool }

// Sizes of the pooled buffers: small bodies, the usual answer of a JSON
// API, borrow a small one.
const (
	SmallSize = 4 << 10
	LargeSize = 32 << 10
)

// Small and Large are the two pools.
var (
	Small = newPool(SmallSize)
	Large = newPool(LargeSize)
)

func newPool(size int) *Pool {
	return &Pool{p: sync.Pool{New: func() any { b := make([]byte, size); return &b }}}
}

// Get lends a buffer, for httputil.ReverseProxy; Put gives it back.
// Each Put allocates the pointer the pool holds it by, which Borrow and
// Return, used everywhere else, do not.
func (bp *Pool) Get() []byte { return *bp.Borrow() }

// Put gives back a buffer Get lent.
func (bp *Pool) Put(b []byte) { bp.p.Put(&b) }

// Borrow lends a buffer by the pointer the pool keeps it by.
func (bp *Pool) Borrow() *[]byte { return bp.p.Get().(*[]byte) }

// Return gives back a buffer Borrow lent, whole: b's length is not
// changed by its user.
func (bp *Pool) Return(b *[]byte) { bp.p.Put(b) }

// For returns the pool to copy a body of length n with; -1 is an unknown
// length.
func For(n int64) *Pool {
	if n >= 0 && n <= SmallSize {
		return Small
	}
	return Large
}
