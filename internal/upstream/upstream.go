// Package upstream is signpost's HTTP/1.1 client for plain-http upstreams:
// a pool of kept-alive connections, each exchange carried on the goroutine
// of the caller it serves, sent again only where http.Transport would send
// it again, and every connection checked for bytes nobody asked for before
// a request is written on it.
package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/internal/rawconn"
)

// Pool speaks HTTP/1.1 to plain-http upstreams over kept-alive
// connections, on the goroutine that serves the caller. http.Transport runs
// two goroutines per connection and hands every request and response
// between them over channels; a sidecar with one upstream on loopback pays
// for that on every call and needs none of it.
type Pool struct {
	dialer        net.Dialer
	headerTimeout time.Duration

	mu     sync.Mutex
	idle   map[string][]*upConn // by host:port, most recently used last
	closed bool
}

// Pool sizes. Idle connections past maxIdlePerHost are closed, and one idle
// longer than idleTimeout is closed instead of reused. Every connection is
// checked just before a request is written on it, for a close from the
// upstream or bytes it sent unasked, however briefly it was idle.
const (
	maxIdlePerHost = 256
	idleTimeout    = 90 * time.Second
	max1xx         = 8 // informational responses skipped before the final one
)

// New returns a pool whose connections are dialled within dial and whose
// answers' heads must come within headerTimeout; both are positive.
func New(dial, headerTimeout time.Duration) *Pool {
	return &Pool{
		dialer:        net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second},
		headerTimeout: headerTimeout,
		idle:          make(map[string][]*upConn),
	}
}

// upConn is one connection to an upstream. Its buffers are lent from pools
// only while it carries an exchange, so an idle connection costs a socket.
type upConn struct {
	net.Conn
	addr      string
	idleSince time.Time
	// taken is when the connection was taken from the idle list, which
	// the exchange it was taken for counts as its start: one reading of
	// the clock, not two.
	taken  time.Time
	reused bool
	// deadline is the one in force on the connection; zero is none. It
	// may be one an earlier exchange set, sooner than the exchange's own
	// bound, full: the header timeout until the answer's head is in, then
	// none (zero), since a body takes as long as the upstream does. A read
	// that runs out of it renews it to full, rather than set it at every
	// turn.
	deadline time.Time
	full     time.Time
	// cutOff says the exchange's caller left: no deadline is renewed.
	cutOff atomic.Bool
	br     *bufio.Reader
	rc     syscall.RawConn
	cut    func() // cutShort, made once
	// written counts the bytes written on the connection: a request none
	// of whose bytes were written cannot have been read by the upstream.
	written int64
	// sending is the request being sent, which write writes; sendOnce,
	// made once as onRead, sends it from within a raw read, and keeps
	// what came of it in sent and werr.
	sending *Request
	onRead  func(uintptr) bool
	sent    bool
	werr    error
	// headLeft, while positive, is what http.ReadResponse may still read
	// of an answer's head; reads past it fail with errHeadTooLarge.
	headLeft    int64
	readingHead bool
}

// maxResponseHead bounds an answer's head, as http.Transport's
// MaxResponseHeaderBytes does by default.
const maxResponseHead = 10 << 20

// errHeadTooLarge is an answer whose head is over maxResponseHead.
var errHeadTooLarge = errors.New("the upstream's response headers exceeded 10 MiB")

// Read reads the connection, within what is left of the head's bound while
// a head is read. A deadline kept from an earlier exchange that runs out
// before this one's bound is renewed to it, and the read goes on.
func (c *upConn) Read(p []byte) (int, error) {
	for {
		n, err := c.read(p)
		if n > 0 || err == nil || !c.renew(err) {
			return n, err
		}
	}
}

// renew reports whether err is a deadline sooner than the exchange's own
// bound, kept from an earlier exchange or from the wait for the head, run
// out before that bound has: it then sets the bound, or none.
func (c *upConn) renew(err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) || c.cutOff.Load() || c.deadline.IsZero() {
		return false
	}
	if !c.full.IsZero() && (!c.deadline.Before(c.full) || !time.Now().Before(c.full)) {
		return false
	}
	c.deadline = c.full
	if c.SetDeadline(c.full) != nil {
		return false
	}
	if c.cutOff.Load() {
		// The caller left while the deadline was set: its cut stands.
		c.cutShort()
		return false
	}
	return true
}

func (c *upConn) read(p []byte) (int, error) {
	if !c.readingHead {
		return c.Conn.Read(p)
	}
	if c.headLeft <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > c.headLeft {
		p = p[:c.headLeft]
	}
	n, err := c.Conn.Read(p)
	c.headLeft -= int64(n)
	return n, err
}

// Write writes p on the connection, counting what was written.
func (c *upConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written += int64(n)
	return n, err
}

// cutShort ends the exchange in progress at once: its caller left.
func (c *upConn) cutShort() {
	c.cutOff.Store(true)
	_ = c.SetDeadline(aLongTimeAgo)
}

// afterFunc is context.AfterFunc, without its allocations for a context
// that registers functions itself, as the front's does.
func afterFunc(ctx context.Context, f func()) (stop func() bool) {
	if a, ok := ctx.(httpwire.AfterFuncContext); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}

// raw returns the connection's raw descriptor access, or nil when it has
// none.
func (c *upConn) raw() syscall.RawConn {
	if c.rc == nil {
		c.rc = rawconn.Of(c.Conn)
	}
	return c.rc
}

var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}
)

// get returns an idle connection to addr, or dials a new one.
func (u *Pool) get(ctx context.Context, addr string, mustBeFresh bool) (*upConn, error) {
	if !mustBeFresh {
		if c := u.takeIdle(addr); c != nil {
			return c, nil
		}
	}
	nc, err := u.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &upConn{Conn: rawconn.Nonblocking(nc), addr: addr}, nil
}

// takeIdle returns the connection to addr idle the shortest time, closing
// those idle too long; nil when there is none.
func (u *Pool) takeIdle(addr string) *upConn {
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
		if now.Sub(c.idleSince) < idleTimeout {
			c.reused, c.taken = true, now
			return c
		}
		c.Close()
	}
}

// put returns a connection whose exchange ended cleanly to the idle list.
func (u *Pool) put(c *upConn) {
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

// CloseIdle closes every idle connection, and any returned later.
func (u *Pool) CloseIdle() {
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

// Exchange sends the request written by send on a connection to addr and
// reads the response headers. The response body reads from the connection
// and, closed, returns it to the pool when the body was read to its end, or
// closes it. A request goes again, once, on a fresh connection only where
// http.Transport would send it again: the connection was found closed, or
// holding bytes nobody asked for, before any of the request was written;
// none of it was written and its body can be written again; or a reused
// connection ended before the first byte of an answer, and the request may
// be repeated: it has no body, and its method or an idempotency key says so. A
// request that is not idempotent is never sent again once a byte of it may
// have been read. A response of the common kind is read into into, when it
// is not nil.
func (u *Pool) Exchange(ctx context.Context, addr string, send *Request, into *Reused) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		c, err := u.get(ctx, addr, attempt > 0)
		if err != nil {
			return nil, err
		}
		res, err := u.roundTrip(ctx, c, send, into)
		if err == nil {
			return res, nil
		}
		c.discard()
		var none noAnswer
		if attempt > 0 || ctx.Err() != nil || !errors.As(err, &none) || !none.mayResend(c.reused, send) {
			return nil, err
		}
	}
}

// noAnswer is a failure of an exchange before the first byte of an answer:
// the only kind after which a request may be sent again.
type noAnswer struct {
	err error
	// stale says the connection was found closed by the upstream, or
	// holding bytes it sent unasked, before the request was begun: nothing
	// of it was written, nor read from the caller.
	stale bool
	// unsent says no byte of the request was written.
	unsent bool
}

func (e noAnswer) Error() string { return e.err.Error() }
func (e noAnswer) Unwrap() error { return e.err }

// mayResend reports whether the request send may go again after e, on a
// connection that was reused or fresh, as http.Transport's
// shouldRetryRequest judges.
func (e noAnswer) mayResend(reused bool, send *Request) bool {
	switch {
	case e.stale:
		return true
	case !reused:
		return false // a fresh connection the upstream will not serve
	case e.unsent:
		return send.resendable()
	}
	return send.replayable() && send.resendable() && closedWhileIdle(e.err)
}

// errStale is a connection found closed by the upstream, or holding bytes
// it sent unasked, just before a request was to be written on it: another
// exchange's leftovers must never be read as this one's answer.
var errStale = errors.New("the upstream connection was closed, or held bytes nobody asked for, before the request was written")

// sendThenWait writes the request from within a raw read of the
// connection, so that the poller watches for the answer from before the
// request leaves: the read that would only find the answer not come yet,
// which with the upstream on the same CPU it never has, is skipped, and
// the goroutine parks until the answer arrives. The connection is checked
// first, in the same read, for anything unread: readiness from before the
// write would be lost, and bytes there are not this request's answer. It
// reports whether the request was written whole, and the error of the
// check, of the write or, after it, of the wait.
func (c *upConn) sendThenWait(raw syscall.RawConn) (written bool, err error) {
	if c.onRead == nil {
		c.onRead = c.sendOnce
	}
	c.sent, c.werr = false, nil
	rerr := raw.Read(c.onRead)
	werr := c.werr
	c.werr = nil
	if werr != nil || !c.sent {
		if werr == nil {
			werr = rerr // the wait ended before the write was tried
		}
		return false, werr
	}
	return true, rerr
}

// sendOnce is sendThenWait's read callback: the first call checks that
// nothing waits to be read and writes the request, and the next ones, once
// the connection is readable, end the wait.
func (c *upConn) sendOnce(fd uintptr) bool {
	if c.sent {
		return true
	}
	if !rawconn.NothingToRead(fd) {
		c.werr = errStale
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
	err := c.sending.write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writerPool.Put(bw)
	return err
}

// earlyAnswerWait bounds the wait for an answer the upstream may have sent
// before a request's write failed, as http.Transport waits for one.
const earlyAnswerWait = 50 * time.Millisecond

// answeredEarly reports whether the upstream answered before the write of
// the request failed with err: one that refuses a body, with a 413 say,
// may answer and close the connection before reading the body to its end.
// The answer is then the exchange's, and c.br holds it.
func (u *Pool) answeredEarly(c *upConn, err error) bool {
	if errors.Is(err, ErrRequestBody) || errors.Is(err, os.ErrDeadlineExceeded) {
		return false // the caller's body broke, or the caller left
	}
	c.deadline = time.Now().Add(earlyAnswerWait)
	c.full = c.deadline
	if c.SetDeadline(c.deadline) != nil {
		return false
	}
	c.br = readerPool.Get().(*bufio.Reader)
	c.br.Reset(c)
	_, perr := c.br.Peek(1)
	return perr == nil
}

// noAnswer returns err as a failure before any answer, unsent when
// nothing was written on c since it had written before.
func (c *upConn) noAnswer(err error, before int64) noAnswer {
	return noAnswer{err: err, unsent: c.written == before}
}

// InvalidStatus is an answer whose status is not one HTTP defines a class
// for: below 100.
type InvalidStatus int

func (s InvalidStatus) Error() string {
	return fmt.Sprintf("the upstream answered with status %03d, which is not an HTTP status (100 to 999)", int(s))
}

// closedWhileIdle reports whether err is how a reused connection fails when
// the upstream closed it before the request arrived.
func closedWhileIdle(err error) bool {
	return errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (u *Pool) roundTrip(ctx context.Context, c *upConn, send *Request, into *Reused) (*http.Response, error) {
	// One deadline bounds writing the request and waiting for the answer's
	// headers; a caller that leaves ends both at once. Setting it costs a
	// timer update, so a deadline set for an earlier exchange is kept while
	// at least three quarters of the timeout remain, and made whole by
	// renew should it run out before the timeout has, on any read of the
	// exchange, its answer's body included. A body streamed
	// from the caller takes as long as the caller takes to send it: the
	// wait for the headers then starts once it is sent, as http.Transport's
	// ResponseHeaderTimeout does.
	start := c.taken
	c.taken = time.Time{}
	if start.IsZero() {
		start = time.Now()
	}
	before := c.written
	streams := send.streams()
	c.cutOff.Store(false)
	c.full = time.Time{}
	if !streams {
		c.full = start.Add(u.headerTimeout)
	}
	switch {
	case streams && !c.deadline.IsZero():
		c.deadline = time.Time{}
		if err := c.SetDeadline(c.deadline); err != nil {
			return nil, c.noAnswer(err, before)
		}
	case !streams && (c.deadline.IsZero() || c.deadline.Sub(start) < u.headerTimeout*3/4):
		c.deadline = start.Add(u.headerTimeout)
		if err := c.SetDeadline(c.deadline); err != nil {
			return nil, c.noAnswer(err, before)
		}
	}
	if c.cut == nil {
		c.cut = c.cutShort
	}
	stop := afterFunc(ctx, c.cut)
	c.sending = send
	var err error
	if raw := c.raw(); raw != nil && !streams {
		var written bool
		if written, err = c.sendThenWait(raw); written && err != nil && c.renew(err) {
			err = nil
		}
	} else if !rawconn.StillOpen(c.Conn) {
		err = errStale
	} else {
		err = c.write()
	}
	c.sending = nil
	early := false
	if err != nil {
		if errors.Is(err, errStale) {
			stop()
			return nil, noAnswer{err: err, stale: true, unsent: true}
		}
		if early = u.answeredEarly(c, err); !early {
			stop()
			return nil, c.noAnswer(err, before)
		}
		err = nil
	} else if streams {
		start = time.Now()
		c.deadline = start.Add(u.headerTimeout)
		c.full = c.deadline
		if err := c.SetDeadline(c.deadline); err != nil {
			stop()
			return nil, c.noAnswer(err, before)
		}
	}
	if c.br == nil {
		c.br = readerPool.Get().(*bufio.Reader)
		c.br.Reset(c)
	}
	// A connection the upstream closed while it was idle ends before the
	// first byte; told apart from a response cut short, it may be retried.
	for {
		_, err := c.br.Peek(1)
		if err == nil {
			break
		}
		if !c.renew(err) {
			stop()
			return nil, c.noAnswer(err, before)
		}
	}
	var res *http.Response
	for i := 0; ; i++ {
		var simple bool
		if res, simple = readSimpleResponse(c.br, send.In, into); !simple {
			c.readingHead, c.headLeft = true, maxResponseHead-int64(c.br.Buffered())
			res, err = http.ReadResponse(c.br, send.In)
			c.readingHead = false
		}
		if err != nil {
			stop()
			return nil, err
		}
		if res.StatusCode < 100 {
			// A status HTTP has no meaning for, which no caller could
			// be sent.
			stop()
			res.Body.Close()
			return nil, InvalidStatus(res.StatusCode)
		}
		if res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols || i == max1xx {
			break
		}
		send.informational(res.StatusCode, res.Header)
	}
	if res.StatusCode < 200 {
		stop()
		res.Body.Close()
		return nil, errors.New("the upstream answered " + res.Status + " where a final response was due")
	}
	if early {
		// The request was not sent whole: the connection ends with the
		// answer.
		res.Close = true
	}
	// The body, of whatever size, takes as long as the upstream takes, as
	// through http.Transport: the deadline in force is cleared only should
	// it run out while the body is read.
	c.full = time.Time{}
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
	conns *Pool
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

// Arrived reports whether the whole body is already read from the
// connection, so that reading it cannot stall.
var _ httpwire.ArrivedBody = (*upstreamBody)(nil)

func (b *upstreamBody) Arrived() bool {
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

// NothingSent reports whether err ended an exchange before any byte of
// its request was written: the connection could not be made, or the
// request's first write failed.
func NothingSent(err error) bool {
	var none noAnswer
	if errors.As(err, &none) {
		return none.unsent
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
