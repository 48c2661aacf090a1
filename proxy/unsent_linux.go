package proxy

import (
	"net"

	"golang.org/x/sys/unix"
)

// tcpClose is TCP_CLOSE (linux/tcp_states.h): a socket the peer reset.
const tcpClose = 7

// neverReceived reports whether the peer's kernel cannot have taken what
// was sent on c: some of it is still unacknowledged, or the peer reset the
// connection after closing it, which it does to data that arrives once its
// side is closed. A request it never took, its server cannot have acted
// on.
func neverReceived(c net.Conn) bool {
	rc := rawConnOf(c)
	if rc == nil {
		return false
	}
	never := false
	_ = rc.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		never = err == nil && (info.Unacked > 0 || info.State == tcpClose)
	})
	return never
}
