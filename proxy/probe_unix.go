//go:build unix

package proxy

import (
	"net"
	"syscall"
)

// stillOpen reports whether the peer has neither closed a connection nor
// sent anything on it that was not read, by peeking at the socket without
// waiting.
func stillOpen(c net.Conn) bool {
	rc := rawConnOf(c)
	if rc == nil {
		_, ok := c.(syscall.Conn)
		return !ok // a connection with no socket cannot be peeked at
	}
	open := false
	err := rc.Read(func(fd uintptr) bool {
		open = nothingToRead(fd)
		return true
	})
	return err == nil && open
}

// nothingToRead reports whether the socket fd has nothing waiting to be
// read and is not closed by its peer: the one sign of a healthy connection
// between exchanges, where a byte is an answer nobody asked for and zero
// bytes a close.
func nothingToRead(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}
