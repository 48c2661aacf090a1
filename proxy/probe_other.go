//go:build !unix

package proxy

import "net"

// stillOpen cannot peek at a socket here; a connection the peer closed is
// found when it is used.
func stillOpen(net.Conn) bool { return true }

// nothingToRead cannot peek at a socket here.
func nothingToRead(uintptr) bool { return true }
