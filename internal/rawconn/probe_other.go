//go:build !unix

package rawconn

import "net"

// StillOpen cannot peek at a socket here; a connection the peer closed is
// found when it is used.
func StillOpen(net.Conn) bool { return true }

// NothingToRead cannot peek at a socket here.
func NothingToRead(uintptr) bool { return true }
