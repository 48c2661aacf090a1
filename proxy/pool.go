package proxy

import "sync"

// bufferPool lends the 32 KiB copy buffers ReverseProxy streams bodies
// through, so a response costs no buffer allocation.
type bufferPool struct{ p sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{p: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}
}

func (bp *bufferPool) Get() []byte { return *bp.p.Get().(*[]byte) }

func (bp *bufferPool) Put(b []byte) { bp.p.Put(&b) }
