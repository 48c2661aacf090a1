//go:build unix

package budget

import "syscall"

// newBuffer returns an empty buffer of capacity size outside the collected
// heap: its lifetime is the budget's to decide, and a budget's worth of
// kept buffers must not raise the collector's goal (GOGC) by half as much
// again. Where the system will not map it, the heap serves.
func newBuffer(size int) []byte {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, 0, size)
	}
	return b[:0]
}

// freeBuffer returns a buffer newBuffer made to the system. Nothing may
// hold it any more. A buffer from the heap is left to the collector.
func freeBuffer(b []byte) { _ = syscall.Munmap(b[:cap(b)]) }
