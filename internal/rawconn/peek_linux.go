package rawconn

import (
	"syscall"
	"unsafe"
)

// NothingToRead reports whether the socket fd has nothing waiting to be
// read and is not closed by its peer: the one sign of a healthy connection
// between exchanges, where a byte is an answer nobody asked for and zero
// bytes a close. It peeks without waiting, with a raw system call, as the
// connection's own reads and writes are made (see nonblocking): a
// scheduler's system call here, on every request, costs several times the
// call.
func NothingToRead(fd uintptr) bool {
	var b [1]byte
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return errno == syscall.EAGAIN
}
