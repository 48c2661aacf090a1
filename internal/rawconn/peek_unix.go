//go:build unix && !linux

package rawconn

import "syscall"

// NothingToRead reports whether the socket fd has nothing waiting to be
// read and is not closed by its peer: the one sign of a healthy connection
// between exchanges, where a byte is an answer nobody asked for and zero
// bytes a close.
func NothingToRead(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}
