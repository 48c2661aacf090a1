package rawconn

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Nonblocking returns c reading and writing its socket with raw system
// calls, where c has one. Go's sockets are non-blocking, so each call
// returns at once, and nothing is gained by telling the scheduler a system
// call is under way: that bookkeeping, and the thread hand-offs the
// scheduler's monitor makes when a call spans one of its ticks, cost more
// than the call on a busy proxy. A call that would block parks the
// goroutine on the poller, deadlines included, as net.Conn's own does.
func Nonblocking(c net.Conn) net.Conn {
	rc := Of(c)
	if rc == nil {
		return c
	}
	n := &nonblockingConn{Conn: c, rc: rc}
	n.r.trap, n.w.trap = syscall.SYS_READ, syscall.SYS_WRITE
	n.r.fn, n.w.fn = n.r.call, n.w.call
	return n
}

// nonblockingConn is a socket read and written with raw system calls. A
// read and a write may run at once, as on any net.Conn; two reads may
// not, nor two writes, which no caller here makes.
type nonblockingConn struct {
	net.Conn
	rc   syscall.RawConn
	r, w rawCall
}

// rawCall is one direction's call in progress, and the function that makes
// it, bound once.
type rawCall struct {
	trap  uintptr
	p     []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// call makes the call on fd for the buffer in progress, and reports false
// to wait on the poller when the socket is not ready.
func (c *rawCall) call(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(c.trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(c.p))), uintptr(len(c.p)))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.n, c.errno = int(n), errno
		return true
	}
}

// start readies the call for p.
func (c *rawCall) start(p []byte) { c.p, c.n, c.errno = p, 0, 0 }

// end forgets the buffer and returns the call's result.
func (c *rawCall) end() (int, syscall.Errno) {
	c.p = nil
	return c.n, c.errno
}

func (c *nonblockingConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Read(p)
	}
	c.r.start(p)
	err := c.rc.Read(c.r.fn)
	n, errno := c.r.end()
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *nonblockingConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		c.w.start(p[done:])
		err := c.rc.Write(c.w.fn)
		n, errno := c.w.end()
		if err != nil {
			return done, err
		}
		if errno != 0 {
			return done, c.opError("write", errno)
		}
		done += n
	}
	return done, nil
}

// opError wraps errno as net.Conn's own methods do.
func (c *nonblockingConn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}

// SyscallConn returns the socket's raw access, as the wrapped connection
// does.
func (c *nonblockingConn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }
