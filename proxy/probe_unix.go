//go:build unix

package proxy

import (
	"net"
	"syscall"
)

// stillOpen reports whether the peer has neither closed an idle connection
// nor sent anything on it, by peeking at the socket without waiting.
func stillOpen(c net.Conn) bool {
	if _, ok := c.(syscall.Conn); !ok {
		return true
	}
	rc := rawConnOf(c)
	if rc == nil {
		return false
	}
	open := false
	err := rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read yet is the one sign of a healthy idle connection:
		// a byte is a response nobody asked for, zero bytes a close.
		open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
