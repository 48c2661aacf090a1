//go:build !linux

package proxy

import "net"

// nonblocking returns c: raw system calls are used on Linux alone.
func nonblocking(c net.Conn) net.Conn { return c }
