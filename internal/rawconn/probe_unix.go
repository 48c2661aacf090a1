//go:build unix

package rawconn

import (
	"net"
	"syscall"
)

// StillOpen reports whether the peer has neither closed a connection nor
// sent anything on it that was not read, by peeking at the socket without
// waiting.
func StillOpen(c net.Conn) bool {
	rc := Of(c)
	if rc == nil {
		_, ok := c.(syscall.Conn)
		return !ok // a connection with no socket cannot be peeked at
	}
	open := false
	err := rc.Read(func(fd uintptr) bool {
		open = NothingToRead(fd)
		return true
	})
	return err == nil && open
}
