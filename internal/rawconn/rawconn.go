// Package rawconn reads and writes sockets with raw system calls, and
// peeks at them without waiting: the socket work of signpost's HTTP/1.1
// front and upstream client, kept apart from the HTTP they speak.
package rawconn

import (
	"net"
	"syscall"
)

// Of returns c's raw descriptor access, or nil when it has none.
func Of(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
