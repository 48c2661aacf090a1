package proxy

import "sync"

// bufferPool lends copy buffers of one size, so that streaming a body costs
// no buffer allocation.
type bufferPool struct {
	p sync.Pool
}

// Sizes of the pooled copy buffers: small bodies, the usual answer of a
// JSON API, borrow a small one, so that many connections in flight do not
// each pin 32 KiB.
const (
	smallBuffer = 4 << 10
	largeBuffer = 32 << 10
)

var (
	smallBuffers = newBufferPool(smallBuffer)
	largeBuffers = newBufferPool(largeBuffer)
)

func newBufferPool(size int) *bufferPool {
	return &bufferPool{p: sync.Pool{New: func() any { b := make([]byte, size); return &b }}}
}

func (bp *bufferPool) Get() []byte { return *bp.p.Get().(*[]byte) }

func (bp *bufferPool) Put(b []byte) { bp.p.Put(&b) }

// buffersFor returns the pool to copy a body of length n from; -1 is an
// unknown length.
func buffersFor(n int64) *bufferPool {
	if n >= 0 && n <= smallBuffer {
		return smallBuffers
	}
	return largeBuffers
}
