package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// upstreamConns speaks HTTP/1.1 to plain-http upstreams over kept-alive
// connections, on the goroutine that serves the caller. http.Transport runs
// two goroutines per connection and hands every request and response
// between them over channels; a sidecar with one upstream on loopback pays
// for that on every call and needs none of it.
type upstreamConns struct {
	dialer        net.Dialer
	headerTimeout time.Duration

	mu     sync.Mutex
	idle   map[string][]*upConn // by host:port, most recently used last
	closed bool
}

// Pool sizes. Idle connections past maxIdlePerHost are closed; one idle
// longer than idleTimeout is closed instead of reused, and one idle longer
// than probeAfter is checked for a close from the upstream first.
const (
	maxIdlePerHost = 256
	idleTimeout    = 90 * time.Second
	probeAfter     = time.Second
	max1xx         = 8 // informational responses skipped before the final one
	// boundedBody is the largest response body that must arrive within the
	// upstream timeout, like the headers before it.
	boundedBody = 64 << 10
)

func newUpstreamConns(dial, headerTimeout time.Duration) *upstreamConns {
	return &upstreamConns{
		dialer:        net.Dialer{Timeout: orDefault(dial, DefaultDialTimeout), KeepAlive: 30 * time.Second},
		headerTimeout: orDefault(headerTimeout, DefaultUpstreamTimeout),
		idle:          make(map[string][]*upConn),
	}
}

// upConn is one connection to an upstream. Its buffers are lent from pools
// only while it carries an exchange, so an idle connection costs a socket.
type upConn struct {
	net.Conn
	addr      string
	idleSince time.Time
	reused    bool
	// deadline is the one in force on the connection; zero is none.
	deadline time.Time
	br       *bufio.Reader
	// quiet is set while the connection is fresh or was idle too briefly
	// for the upstream to have closed it: nothing is waiting to be read.
	quiet bool
	rc    syscall.RawConn
	cut   func() // cutShort, made once
	// sending is the request being sent, which write writes; sendOnce,
	// made once as onRead, sends it from within a raw read, and keeps
	// what came of it in sent and werr.
	sending requestWriter
	onRead  func(uintptr) bool
	sent    bool
	werr    error
}

// requestWriter writes a request for the upstream, each time it is asked:
// a request may go again on a fresh connection.
type requestWriter interface {
	writeTo(bw *bufio.Writer) error
}

// cutShort ends the exchange in progress at once: its caller left.
func (c *upConn) cutShort() { _ = c.SetDeadline(aLongTimeAgo) }

// afterFunc is context.AfterFunc, without its allocations for a context
// that registers functions itself, as the front's does.
func afterFunc(ctx context.Context, f func()) (stop func() bool) {
	if a, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}

// raw returns the connection's raw descriptor access, or nil when it has
// none.
func (c *upConn) raw() syscall.RawConn {
	if c.rc == nil {
		c.rc = rawConnOf(c.Conn)
	}
	return c.rc
}

// rawConnOf returns c's raw descriptor access, or nil when it has none.
func rawConnOf(c net.Conn) syscall.RawConn {
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

var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}
)

// get returns an idle connection to addr, or dials a new one. With probe,
// an idle connection is checked for a close from the upstream however
// briefly it was idle: for a request that could not be sent again.
func (u *upstreamConns) get(ctx context.Context, addr string, mustBeFresh, probe bool) (*upConn, error) {
	if !mustBeFresh {
		if c := u.takeIdle(addr, probe); c != nil {
			return c, nil
		}
	}
	nc, err := u.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &upConn{Conn: nonblocking(nc), addr: addr, quiet: true}, nil
}

func (u *upstreamConns) takeIdle(addr string, probe bool) *upConn {
	now := time.Now()
	for {
		u.mu.Lock()
		list := u.idle[addr]
		if len(list) == 0 {
			u.mu.Unlock()
			return nil
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		u.idle[addr] = list[:len(list)-1]
		u.mu.Unlock()
		idle := now.Sub(c.idleSince)
		if idle < probeAfter && !probe || idle < idleTimeout && stillOpen(c.Conn) {
			c.reused, c.quiet = true, idle < probeAfter
			return c
		}
		c.Close()
	}
}

// put returns a connection whose exchange ended cleanly to the idle list.
func (u *upstreamConns) put(c *upConn) {
	if c.br != nil {
		if c.br.Buffered() > 0 {
			// Bytes past the end of a response: the upstream is out of
			// step, and the connection cannot carry another exchange.
			c.release()
			c.Close()
			return
		}
		c.release()
	}
	c.idleSince = time.Now()
	u.mu.Lock()
	if u.closed || len(u.idle[c.addr]) >= maxIdlePerHost {
		u.mu.Unlock()
		c.Close()
		return
	}
	u.idle[c.addr] = append(u.idle[c.addr], c)
	u.mu.Unlock()
}

func (c *upConn) release() {
	c.br.Reset(nil)
	readerPool.Put(c.br)
	c.br = nil
}

// discard closes a connection that cannot be reused.
func (c *upConn) discard() {
	if c.br != nil {
		c.release()
	}
	c.Close()
}

// closeIdle closes every idle connection, and any returned later.
func (u *upstreamConns) closeIdle() {
	u.mu.Lock()
	idle := u.idle
	u.idle, u.closed = make(map[string][]*upConn), true
	u.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.Close()
		}
	}
}

// aLongTimeAgo is a deadline that has passed, to wake a blocked read or
// write at once.
var aLongTimeAgo = time.Unix(1, 0)

// exchange sends the request written by send on a connection to addr and
// reads the response headers. The response body reads from the connection
// and, closed, returns it to the pool when the body was read to its end, or
// closes it. A connection that turns out to have been closed by the upstream
// while idle is replaced once, when the request can be sent again. A
// response of the common kind is read into into, when it is not nil.
func (u *upstreamConns) exchange(ctx context.Context, addr string, send requestWriter, replayable bool, req *http.Request, into *reusedResponse) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		c, err := u.get(ctx, addr, attempt > 0, !replayable)
		if err != nil {
			return nil, err
		}
		res, err := u.roundTrip(ctx, c, send, req, into)
		if err == nil {
			return res, nil
		}
		c.discard()
		if attempt == 0 && c.reused && replayable && closedWhileIdle(err) && ctx.Err() == nil {
			continue
		}
		return nil, err
	}
}

// sendThenWait writes the request from within a raw read of the
// connection, so that the poller watches for the answer from before the
// request leaves: the read that would only find the answer not come yet,
// which with the upstream on the same CPU it never has, is skipped, and
// the goroutine parks until the answer arrives. Only a connection with
// nothing unread may be used so: readiness from before the write is lost.
func (c *upConn) sendThenWait(raw syscall.RawConn) error {
	if c.onRead == nil {
		c.onRead = c.sendOnce
	}
	c.sent, c.werr = false, nil
	rerr := raw.Read(c.onRead)
	werr := c.werr
	c.werr = nil
	if werr != nil {
		return werr
	}
	return rerr
}

// sendOnce is sendThenWait's read callback: the first call writes the
// request, and the next ones, once the connection is readable, end the
// wait.
func (c *upConn) sendOnce(uintptr) bool {
	if c.sent {
		return true
	}
	c.sent = true
	c.werr = c.write()
	return c.werr != nil
}

// write writes the request being sent through a pooled buffer.
func (c *upConn) write() error {
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(c)
	err := c.sending.writeTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writerPool.Put(bw)
	return err
}

// closedWhileIdle reports whether err is how a reused connection fails when
// the upstream closed it before the request arrived.
func closedWhileIdle(err error) bool {
	return errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (u *upstreamConns) roundTrip(ctx context.Context, c *upConn, send requestWriter, req *http.Request, into *reusedResponse) (*http.Response, error) {
	// One deadline bounds writing the request and waiting for the answer's
	// headers; a caller that leaves ends both at once. Setting it costs a
	// timer update, so a deadline set for an earlier exchange is kept while
	// at least three quarters of the timeout remain.
	if now := time.Now(); c.deadline.IsZero() || c.deadline.Sub(now) < u.headerTimeout*3/4 {
		c.deadline = now.Add(u.headerTimeout)
		if err := c.SetDeadline(c.deadline); err != nil {
			return nil, err
		}
	}
	if c.cut == nil {
		c.cut = c.cutShort
	}
	stop := afterFunc(ctx, c.cut)
	c.sending = send
	var err error
	if raw := c.raw(); raw != nil && c.quiet {
		err = c.sendThenWait(raw)
	} else {
		err = c.write()
	}
	c.sending = nil
	if err != nil {
		stop()
		return nil, err
	}
	c.br = readerPool.Get().(*bufio.Reader)
	c.br.Reset(c)
	// A connection the upstream closed while it was idle ends before the
	// first byte; told apart from a response cut short, it may be retried.
	if _, err := c.br.Peek(1); err != nil {
		stop()
		return nil, err
	}
	var res *http.Response
	for i := 0; ; i++ {
		var simple bool
		if res, simple = readSimpleResponse(c.br, req, into); !simple {
			res, err = http.ReadResponse(c.br, req)
		}
		if err != nil {
			stop()
			return nil, err
		}
		if res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols || i == max1xx {
			break
		}
	}
	if res.StatusCode < 200 {
		stop()
		res.Body.Close()
		return nil, errors.New("the upstream answered " + res.Status + " where a final response was due")
	}
	// A small body arrives within the same bound; one of unknown or large
	// size streams for as long as the upstream takes.
	if res.ContentLength < 0 || res.ContentLength > boundedBody {
		c.deadline = time.Time{}
		if err := c.SetDeadline(c.deadline); err != nil {
			stop()
			return nil, err
		}
	}
	body := &upstreamBody{body: res.Body, conns: u, c: c, stop: stop, keep: !res.Close}
	body.eof.Store(res.Body == http.NoBody)
	res.Body = body
	return res, nil
}

// upstreamBody is a response body that gives its connection back once read
// to its end, and closes it otherwise. Close may come from another
// goroutine while a Read waits, as when a stalled body is given up.
type upstreamBody struct {
	body  io.ReadCloser
	conns *upstreamConns
	c     *upConn
	stop  func() bool
	keep  bool
	eof   atomic.Bool
	done  atomic.Bool
	// closing makes a second Close wait for the first: the handler's Close
	// must not return while a stall timer's is still under way, whose stop
	// would otherwise clear what the connection's next request registers
	// on the caller's context.
	closing sync.Mutex
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// arrived reports whether the whole body is already read from the
// connection, so that reading it cannot stall.
func (b *upstreamBody) arrived() bool {
	if b.eof.Load() {
		return true
	}
	f, ok := b.body.(*fixedBody)
	return ok && f.left <= int64(f.r.Buffered())
}

// Close ends the exchange. A body not read to its end closes the
// connection rather than draining what is left of it.
func (b *upstreamBody) Close() error {
	b.closing.Lock()
	defer b.closing.Unlock()
	if !b.done.CompareAndSwap(false, true) {
		return nil
	}
	canceled := !b.stop()
	if !b.eof.Load() || !b.keep || canceled {
		// Closed first, the connection ends the body's drain at once. Its
		// read buffer is left to the collector: a Read racing this Close
		// may still hold it.
		b.c.Close()
		b.body.Close()
		return nil
	}
	b.body.Close()
	b.conns.put(b.c)
	return nil
}
