//go:build !linux

package rawconn

import "net"

// Nonblocking returns c: raw system calls are used on Linux alone.
func Nonblocking(c net.Conn) net.Conn { return c }
