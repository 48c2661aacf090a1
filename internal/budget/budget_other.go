//go:build !unix

package budget

// newBuffer returns an empty buffer of capacity size.
func newBuffer(size int) []byte { return make([]byte, 0, size) }

// freeBuffer leaves a buffer to the collector.
func freeBuffer([]byte) {}
