// Package front is signpost's own HTTP/1.1 server: it parses plain
// HTTP/1.1 requests itself and answers them as net/http's server would,
// field for field, at less cost per request, and hands every other
// connection, with the bytes read so far, to a net/http server.
package front

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/internal/rawconn"
)

// Server serves the agents' HTTP/1.1 connections itself, the way
// net/http's Server would, at less cost per request: no goroutine and read
// per request watching for the caller to leave, no context tree, one buffer
// for the response. A connection that sends anything but a plain HTTP/1.1
// request (HTTP/1.0, a chunked body, Expect, Upgrade, headers larger than
// the read buffer, or a request net/http would refuse) is handed, with the
// bytes read so far, to fallback, which serves it from then on; a request
// net/http would refuse with a 400 is answered with Refuse instead, when
// it is set and the front has read enough of the head to tell.
type Server struct {
	handler http.Handler
	// fallback serves the connections handed off; its Handler, timeouts
	// and ErrorLog are the front's too.
	fallback *http.Server

	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout time.Duration
	maxHeaderBytes                                            int
	errorLog                                                  *log.Logger

	// Refuse renders the 400s the front answers itself; nil answers them
	// in plain text, and leaves a malformed request line or field to
	// net/http. Set it before Serve.
	Refuse Refusal

	handoff  handoffListener
	shutting atomic.Bool

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*frontConn]struct{}
}

// New returns a front configured from srv: its handler, timeouts, header
// limit and error log. srv itself serves the connections the front hands
// off.
func New(srv *http.Server) *Server {
	s := &Server{
		handler:           srv.Handler,
		fallback:          srv,
		readHeaderTimeout: srv.ReadHeaderTimeout,
		readTimeout:       srv.ReadTimeout,
		writeTimeout:      srv.WriteTimeout,
		idleTimeout:       srv.IdleTimeout,
		maxHeaderBytes:    srv.MaxHeaderBytes,
		errorLog:          srv.ErrorLog,
		listeners:         map[net.Listener]struct{}{},
		conns:             map[*frontConn]struct{}{},
	}
	s.handoff.init()
	connContext := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if connContext != nil {
			ctx = connContext(ctx, c)
		}
		if rc, ok := c.(*replayConn); ok {
			ctx = context.WithValue(ctx, handoffKey{}, &handoffState{sawFirst: rc.sawHead})
		}
		return ctx
	}
	if s.readHeaderTimeout <= 0 {
		s.readHeaderTimeout = s.readTimeout
	}
	if s.idleTimeout <= 0 {
		s.idleTimeout = s.readTimeout
	}
	if s.maxHeaderBytes <= 0 {
		s.maxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	// It returns http.ErrServerClosed once shut down, which is all it can.
	go func() { _ = srv.Serve(&s.handoff) }()
	return s
}

func (s *Server) logf(format string, args ...any) {
	if s.errorLog != nil {
		s.errorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// Serve accepts connections on ln until Shutdown or Close, and returns
// http.ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	var delay time.Duration
	for {
		rwc, err := ln.Accept()
		if err != nil {
			if s.shutting.Load() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) ||
				errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ECONNABORTED) {
				// Out of descriptors or a transient failure: back off as
				// net/http does, rather than spin.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.logf("http: Accept error: %v; retrying in %v", err, delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		c := &frontConn{s: s, rwc: rwc, accepted: time.Now()}
		c.state.Store(connNew)
		if !s.track(c) {
			rwc.Close()
			return http.ErrServerClosed
		}
		go c.serve()
	}
}

// track adds c to the connections Shutdown waits for, unless shutdown has
// begun.
func (s *Server) track(c *frontConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) forget(c *frontConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// closeListeners stops accepting connections, on every listener and on
// the hand-off queue.
func (s *Server) closeListeners() {
	s.mu.Lock()
	s.shutting.Store(true)
	for ln := range s.listeners {
		ln.Close()
		delete(s.listeners, ln)
	}
	s.mu.Unlock()
}

// closeIdle closes the connections waiting for a request and reports
// whether none is left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.state.CompareAndSwap(connIdle, connClosed) ||
			time.Since(c.accepted) > newConnGrace && c.state.CompareAndSwap(connNew, connClosed) {
			c.rwc.Close()
		}
	}
	return len(s.conns) == 0
}

// Shutdown stops accepting connections, closes idle ones, lets requests in
// flight finish, each answered with Connection: close, and returns once
// every connection is closed or ctx is done, as http.Server.Shutdown does.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeListeners()
	fallback := make(chan error, 1)
	go func() { fallback <- s.fallback.Shutdown(ctx) }()
	wait := time.Millisecond
	t := time.NewTimer(wait)
	defer t.Stop()
	for !s.closeIdle() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			wait = min(2*wait, 100*time.Millisecond)
			t.Reset(wait)
		}
	}
	return <-fallback
}

// Close closes the listeners and every connection at once.
func (s *Server) Close() error {
	s.closeListeners()
	s.mu.Lock()
	for c := range s.conns {
		c.state.Store(connClosed)
		c.rwc.Close()
	}
	s.mu.Unlock()
	return s.fallback.Close()
}

// Connection states, for Shutdown: an idle connection waits for its next
// request and may be closed at once; an active one is serving a request.
const (
	connIdle int32 = iota
	connActive
	connClosed
	connNew // accepted, its first request not yet begun
)

// newConnGrace is how long shutdown lets a new connection that has sent no
// request be, as net/http does, before it counts as idle.
const newConnGrace = 5 * time.Second

// watchAfter is how long a request runs before its connection is watched
// for the caller leaving: a read that most requests, answered sooner, never
// pay for.
const watchAfter = 20 * time.Millisecond

// maxDrainBytes bounds the unread request body read and dropped after a
// response so that the connection can serve another request, as net/http
// bounds it.
const maxDrainBytes = 256 << 10

// frontConn is one agent connection served by the front.
type frontConn struct {
	s        *Server
	rwc      net.Conn
	remote   string
	state    atomic.Int32
	accepted time.Time

	br *bufio.Reader // reads through in, which replays a byte the watch read
	in connReader
	bw *bufio.Writer
	io net.Conn // rwc, read and written with raw system calls where it can be

	ctx  callerContext
	res  frontResponse
	head reusedHead

	// deadline is the read deadline in force; idleSet says it is one the
	// idle wait set, and headerDeadline that the head being read has one.
	deadline       time.Time
	idleSet        bool
	headerDeadline bool
	// headStart is when the request being read began, once its first
	// bytes were in: a read timeout counts from there, as net/http's does.
	// It is only taken when there is a read timeout.
	headStart time.Time
	// blankLeft is how many CR or LF bytes may still be dropped before the
	// next request line: four after a POST, as net/http drops them, for
	// clients that end a body with a CRLF (RFC 9112, section 2.2).
	blankLeft int

	// The watch: after watchAfter, a read on the idle connection notices
	// a caller that leaves while its request is still served.
	mu      sync.Mutex
	timer   *time.Timer
	serving bool       // a handler runs; the watch may read
	body    *frontBody // the request's body, nil when it has none
	// watchDue says the watch found the body still to be read: its end
	// starts the watch, which meanwhile sleeps rather than poll.
	watchDue bool
	watching chan struct{} // set while the watch reads; closed when it returns
	stopping bool          // the watch's read is being cut short on purpose
	// deadlineCleared says the watch cleared a read deadline that ran out.
	deadlineCleared bool
}

// connReader reads the connection, first giving back the byte a watch read
// while it looked for the caller leaving.
type connReader struct {
	c       net.Conn
	hasByte bool
	b       byte
}

func (r *connReader) Read(p []byte) (int, error) {
	if r.hasByte && len(p) > 0 {
		p[0] = r.b
		r.hasByte = false
		return 1, nil
	}
	return r.c.Read(p)
}

// drainBuffers lend the buffer a body left unread is drained through.
var drainBuffers = sync.Pool{New: func() any { return new([drainBuffer]byte) }}

const drainBuffer = 4 << 10

// aLongTimeAgo is a deadline that has passed, to wake a blocked read at
// once.
var aLongTimeAgo = time.Unix(1, 0)

// connReaders and connWriters lend the buffers a connection reads and
// writes through: a reader for its life, a writer while it answers.
var (
	connReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
	connWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}
)

// errHandoff says a request is for the fallback server to serve.
var errHandoff = errors.New("handed off")

func (c *frontConn) serve() {
	s := c.s
	c.remote = c.rwc.RemoteAddr().String()
	c.io = rawconn.Nonblocking(c.rwc)
	c.in.c = c.io
	c.br = connReaders.Get().(*bufio.Reader)
	c.br.Reset(&c.in)
	c.ctx.init()
	c.ctx.server, c.ctx.local = s.fallback, c.rwc.LocalAddr()
	c.head.init(&c.ctx)
	c.res.c = c
	handedOff := false
	defer func() {
		if err := recover(); err != nil && err != http.ErrAbortHandler {
			const size = 64 << 10
			buf := make([]byte, size)
			buf = buf[:runtime.Stack(buf, false)]
			s.logf("http: panic serving %v: %v\n%s", c.remote, err, buf)
		}
		if c.timer != nil {
			c.timer.Stop()
		}
		c.endWatch() // a handler that panicked left it running
		c.ctx.cancel(context.Canceled)
		if c.bw != nil {
			// What the handler wrote before it gave up goes out, without
			// the ending that would make the response look whole.
			_ = c.bw.Flush()
			c.releaseWriter()
		}
		if !handedOff {
			c.state.Store(connClosed)
			c.rwc.Close()
			c.br.Reset(nil)
			connReaders.Put(c.br)
		}
		s.forget(c)
	}()
	for first := true; ; first = false {
		if c.br.Buffered() < 4 && !first {
			// Wait for the next request as an idle connection, which
			// shutdown may close, until four bytes of it are in, as
			// net/http waits: a connection that ends with fewer is
			// closed unanswered.
			c.idleDeadline()
			if !c.state.CompareAndSwap(connActive, connIdle) {
				return
			}
			if s.shutting.Load() {
				return
			}
			_, err := c.br.Peek(4)
			if !c.state.CompareAndSwap(connIdle, connActive) || err != nil {
				return
			}
		}
		if s.readTimeout > 0 {
			c.headStart = time.Now()
		}
		req, n, err := c.readRequest()
		if first && !c.state.CompareAndSwap(connNew, connActive) {
			return // closed by shutdown before its first request began
		}
		if err != nil {
			if errors.Is(err, errHandoff) {
				if c.refusesRequestLine() || c.refusesHead() || c.refusesFraming() {
					return
				}
				handedOff = c.handOff()
			}
			return
		}
		if !c.serveRequest(req, n) {
			return
		}
	}
}

// setReadDeadline sets the connection's read deadline to d, unless it is
// d already: setting one costs a timer update.
func (c *frontConn) setReadDeadline(d time.Time) {
	if !d.Equal(c.deadline) {
		c.deadline = d
		_ = c.rwc.SetReadDeadline(d)
	}
	c.idleSet = false
}

// idleDeadline bounds the wait for the next request by the idle timeout.
// The deadline set for an earlier wait is kept while three quarters of the
// timeout remain, so that a busy connection seldom sets one.
func (c *frontConn) idleDeadline() {
	idle := c.s.idleTimeout
	if idle <= 0 {
		c.setReadDeadline(time.Time{})
		return
	}
	now := time.Now()
	if !c.idleSet || c.deadline.Sub(now) < idle*3/4 {
		c.setReadDeadline(now.Add(idle))
		c.idleSet = true
	}
}

// handOff gives the connection, and what was read of it, to the fallback
// server, telling it whether the front saw the whole head of the request
// it hands over.
func (c *frontConn) handOff() bool {
	buf, _ := c.br.Peek(c.br.Buffered())
	end, _ := httpwire.HeadEnd(buf)
	return c.s.handoff.push(&replayConn{Conn: c.rwc, r: c.br, sawHead: end > 0})
}

// refusesFraming answers a request whose framing net/http would read in a
// way another server might not, and ends the connection: an HTTP/1.0
// request with a Transfer-Encoding field, which net/http drops, framing the
// body by its Content-Length, where nginx refuses it. It reports whether it
// did. Only the lines of the head that arrived are looked at; a request
// whose head is not seen whole is kept from smuggling by the fallback,
// which closes the connection after it.
func (c *frontConn) refusesFraming() bool {
	buf, _ := c.br.Peek(c.br.Buffered())
	te, ok := http10TransferEncoding(buf)
	if !ok {
		return false
	}
	c.refuse(CodeFraming, "Transfer-Encoding", te,
		"an HTTP/1.0 request cannot carry Transfer-Encoding (RFC 9112, section 6.1), so where its body ends is ambiguous; "+
			"send it as HTTP/1.1, or frame the body by its length alone, e.g. Content-Length: 42")
	return true
}

// Refusal renders the body of a 400 the front answers itself, to the
// request r (see Refused): its media type and bytes. It is called once
// per refusal, so it may count and log them too.
type Refusal func(r Refused) (contentType string, body []byte)

// refusal renders a refusal with the server's Refusal, or in plain text,
// as net/http words its own 400s.
func (s *Server) refusal(r Refused) (string, []byte) {
	if s.Refuse != nil {
		return s.Refuse(r)
	}
	return "text/plain; charset=utf-8", []byte("400 Bad Request: " + r.Field + ": " + r.Rule)
}

// writeRefusal writes a response the front makes itself, which ends the
// connection.
func writeRefusal(bw *bufio.Writer, status int, contentType string, body []byte) {
	httpwire.WriteStatus(bw, status)
	httpwire.WriteField(bw, "Content-Type", contentType)
	bw.WriteString("Connection: close\r\nContent-Length: ")
	bw.WriteString(strconv.Itoa(len(body)))
	bw.WriteString("\r\nDate: ")
	bw.Write(httpwire.Date())
	bw.WriteString("\r\n\r\n")
	bw.Write(body)
}

// http10TransferEncoding returns the value of the first Transfer-Encoding
// field among the complete lines of head, when its request line is
// HTTP/1.0's; ok is false otherwise. Field names are matched as net/http
// matches them: any case, no space before the colon.
func http10TransferEncoding(head []byte) (value string, ok bool) {
	line, rest, found := bytes.Cut(head, []byte("\n"))
	if !found || !bytes.HasSuffix(bytes.TrimSuffix(line, []byte("\r")), []byte(" HTTP/1.0")) {
		return "", false
	}
	for {
		line, rest, found = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !found || len(line) == 0 {
			return "", false
		}
		if k, v, colon := bytes.Cut(line, []byte(":")); colon && strings.EqualFold(string(k), "Transfer-Encoding") {
			return string(bytes.TrimSpace(v)), true
		}
	}
}

// readRequest reads the head of the next request. It returns errHandoff for
// a request the front does not serve itself, with nothing consumed; n is
// the head's length.
func (c *frontConn) readRequest() (*http.Request, int, error) {
	head, err := c.peekHead()
	if err != nil {
		return nil, 0, err
	}
	req, err := parseHead(head, c.s.maxHeaderBytes, &c.head)
	if err != nil {
		return nil, 0, err
	}
	return req, len(head), nil
}

// peekHead returns the bytes of the next request's head, through the blank
// line that ends it, without consuming them. An unfinished head whose
// complete lines the front would not parse is handed off at once, for
// net/http to answer (400, say) without waiting for the rest; but for a
// field line the front refuses itself once the byte after it is in.
func (c *frontConn) peekHead() ([]byte, error) {
	for {
		buf, _ := c.br.Peek(c.br.Buffered())
		if c.blankLeft > 0 && len(buf) > 0 {
			n := min(httpwire.LeadingCRorLF(buf), c.blankLeft)
			_, _ = c.br.Discard(n)
			buf, c.blankLeft = buf[n:], c.blankLeft-n
			if len(buf) > 0 {
				c.blankLeft = 0 // the request line has begun
			}
		}
		if end, crlf := httpwire.HeadEnd(buf); end > 0 {
			if !crlf {
				return nil, errHandoff
			}
			return buf[:end], nil
		}
		if len(buf) == c.br.Size() || !linesServable(buf) && !c.awaitsFault(buf) {
			// Larger than the buffer (net/http enforces the limit), or
			// a line the front does not parse and will not refuse.
			return nil, errHandoff
		}
		if !c.headerDeadline {
			// More of the head is to come: from here it must come within
			// the header timeout. Most heads arrive whole, and never pay
			// for setting it.
			c.headerDeadline = true
			if c.s.readHeaderTimeout > 0 {
				c.setReadDeadline(time.Now().Add(c.s.readHeaderTimeout))
			} else {
				c.setReadDeadline(time.Time{})
			}
		}
		if _, err := c.br.Peek(len(buf) + 1); err != nil {
			var ne net.Error
			if c.br.Buffered() > 0 && !(errors.As(err, &ne) && ne.Timeout()) {
				// A head cut short: net/http answers it as it does.
				return nil, errHandoff
			}
			return nil, err
		}
	}
}

// linesServable reports whether every complete line of an unfinished head
// is one parseHead accepts: a request line of the front's kind, with a
// target net/url parses, then well-formed fields.
func linesServable(buf []byte) bool {
	for first := true; ; first = false {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return true
		}
		line := buf[:i]
		buf = buf[i+1:]
		if len(line) == 0 || line[len(line)-1] != '\r' || !httpwire.PlainBytes(line[:len(line)-1]) {
			return false
		}
		line = line[:len(line)-1]
		if first {
			// net/http reads the target before any field: one it cannot
			// parse is answered at once.
			_, target, ok := splitRequestLine(string(line))
			if !ok {
				return false
			}
			if _, err := url.ParseRequestURI(target); err != nil {
				return false
			}
			continue
		}
		if colon := bytes.IndexByte(line, ':'); colon <= 0 || !httpwire.ValidFieldName(string(line[:colon])) {
			return false
		}
	}
}

// parseHead parses a request head as net/http's server does, and returns
// errHandoff for any request the front leaves to it: not HTTP/1.1, not in
// origin form, framed or negotiated by fields the front does not handle,
// written in any way but the plainest, or refused by net/http's checks.
// The request, its header and its context are into's, written over.
func parseHead(head []byte, maxHeaderBytes int, into *reusedHead) (*http.Request, error) {
	if len(head) > maxHeaderBytes {
		return nil, errHandoff
	}
	if !httpwire.PlainBytes(head) {
		return nil, errHandoff
	}
	// One string holds the head; the target and every field are parts of
	// it.
	s := string(head[:len(head)-2])
	eol := strings.IndexByte(s, '\n')
	if eol < 1 {
		return nil, errHandoff
	}
	method, target, ok := splitRequestLine(s[:eol-1])
	if !ok {
		return nil, errHandoff
	}
	if parseTarget(target, &into.url) != nil {
		return nil, errHandoff
	}
	n := strings.Count(s[eol+1:], "\n")
	h, values := into.header(n)
	host, hosts := "", 0
	length := int64(0)
	lengths := 0
	for rest := s[eol+1:]; rest != ""; {
		k, v, tail, ok := httpwire.CutField(rest)
		if !ok {
			return nil, errHandoff
		}
		rest = tail
		switch k {
		case "Host":
			host, hosts = v, hosts+1
			continue
		case "Content-Length":
			if lengths++; lengths > 1 || v == "" || len(v) > 18 || strings.Trim(v, "0123456789") != "" {
				return nil, errHandoff
			}
			length, _ = strconv.ParseInt(v, 10, 64)
		case "Transfer-Encoding", "Expect", "Upgrade", "Http2-Settings", "Te", "Pragma":
			return nil, errHandoff
		}
		values = httpwire.AddValue(h, values, k, v)
	}
	if hosts != 1 || host == "" || !httpwire.ValidHost(host) {
		return nil, errHandoff
	}
	req := into.request()
	req.Method = method
	req.URL = &into.url
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.1", 1, 1
	req.Header = h
	req.ContentLength = length
	req.Close = httpwire.Listed(h["Connection"], "close")
	req.Host = host
	req.RequestURI = target
	return req, nil
}

// splitRequestLine splits a request line of the kind the front serves:
// HTTP/1.1, a method that is a token, and a target in origin form. The
// asterisk, absolute and authority forms are left to net/http.
func splitRequestLine(line string) (method, target string, ok bool) {
	sp := strings.IndexByte(line, ' ')
	if sp <= 0 || !httpwire.ValidFieldName(line[:sp]) || len(line) < sp+1+len(" HTTP/1.1") || !strings.HasSuffix(line, " HTTP/1.1") {
		return "", "", false
	}
	method, target = line[:sp], line[sp+1:len(line)-len(" HTTP/1.1")]
	if target == "" || target[0] != '/' || strings.IndexByte(target, ' ') >= 0 {
		return "", "", false
	}
	return method, target, true
}

// reusedHead is the request a connection's heads are parsed into, with its
// URL and header: the handler keeps none of them past its return, so each
// request of the connection writes over the last one's, in place of four
// allocations.
type reusedHead struct {
	req    http.Request
	url    url.URL
	blank  http.Request // zero, but for the connection's context
	h      http.Header
	values []string // one backing array for the header's values
}

// init gives the requests parsed into r the context ctx.
func (r *reusedHead) init(ctx context.Context) {
	r.blank = *new(http.Request).WithContext(ctx)
}

// request returns r's request, cleared but for its context.
func (r *reusedHead) request() *http.Request {
	r.req = r.blank
	return &r.req
}

// header returns r's header, emptied, and room for n values. A head of
// more than keptFields fields gets a header of its own, so that one large
// head does not grow what the connection holds from then on.
func (r *reusedHead) header(n int) (http.Header, []string) {
	if n > keptFields {
		return make(http.Header, n), make([]string, n)
	}
	if r.h == nil {
		r.h, r.values = make(http.Header, n), make([]string, keptFields)
	}
	clear(r.h)
	clear(r.values) // the last head's strings are not kept alive
	return r.h, r.values[:n]
}

// keptFields bounds the header a connection keeps from one request to the
// next.
const keptFields = 32

// serveRequest serves one request whose head is n bytes long and reports
// whether the connection may serve another.
func (c *frontConn) serveRequest(req *http.Request, n int) bool {
	s := c.s
	_, _ = c.br.Discard(n)
	c.blankLeft = 0
	if req.Method == http.MethodPost {
		c.blankLeft = 4
	}
	req.RemoteAddr = c.remote
	var body *frontBody
	if req.ContentLength > 0 {
		body = &frontBody{c: c, left: req.ContentLength}
		req.Body = body
	} else {
		req.Body = http.NoBody
	}
	c.headerDeadline = false
	if s.readTimeout > 0 {
		c.setReadDeadline(c.headStart.Add(s.readTimeout))
	} else if body != nil && int64(c.br.Buffered()) < req.ContentLength {
		// A body streams as long as it takes. One read with its head
		// never waits on the connection, and keeps the idle deadline.
		c.setReadDeadline(time.Time{})
	}
	if s.writeTimeout > 0 {
		_ = c.rwc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	}
	w := &c.res
	w.reset(req, body)

	c.mu.Lock()
	c.serving, c.body, c.watchDue = true, body, false
	// Set under the lock the watch takes, which may reset it.
	if c.timer == nil {
		c.timer = time.AfterFunc(watchAfter, c.watch)
	} else {
		c.timer.Reset(watchAfter)
	}
	c.mu.Unlock()
	s.handler.ServeHTTP(w, req)
	c.timer.Stop()
	c.endWatch()
	if body != nil {
		body.detach()
	}
	// What the request registered on the context dies with it: a context
	// is done only once its connection ends, and must not gather the
	// registrations of every request the connection carries.
	c.ctx.forget()

	w.finish()
	if body != nil {
		body.close()
	}
	keep := !w.closeAfter && c.ctx.Err() == nil && !s.shutting.Load()
	if err := c.bw.Flush(); err != nil {
		keep = false
	}
	c.releaseWriter()
	if w.bodyLeft || !keep && body != nil && body.unread() && c.ctx.Err() == nil {
		// Closed with the caller's bytes unread, the connection would be
		// reset, and the caller might lose the answer.
		c.lingerClose()
	}
	w.req, w.body = nil, nil
	clear(w.header)
	return keep
}

// lingerClose ends a connection whose request body was left unread: it
// shuts the sending side, then waits a moment before closing, so that the
// caller reads the answer before its unread bytes make the kernel reset
// the connection, as net/http does.
func (c *frontConn) lingerClose() {
	if cw, ok := c.rwc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	time.Sleep(lingerDelay)
}

// lingerDelay is how long lingerClose waits: net/http's rstAvoidanceDelay.
const lingerDelay = 500 * time.Millisecond

// releaseWriter returns the connection's write buffer to the pool between
// responses, so that idle connections hold none.
func (c *frontConn) releaseWriter() {
	c.bw.Reset(nil)
	connWriters.Put(c.bw)
	c.bw = nil
}

// writer returns the buffer the response is written through.
func (c *frontConn) writer() *bufio.Writer {
	if c.bw == nil {
		c.bw = connWriters.Get().(*bufio.Writer)
		c.bw.Reset(c.io)
	}
	return c.bw
}

// watch runs watchAfter into a request, or once its body is read if that
// comes later: then, when nothing more is buffered, it reads the
// connection, which returns when the caller sends its next request, which
// is kept, or leaves, which cancels the request's context. While the body
// is still to be read, a caller that leaves fails the read instead.
func (c *frontConn) watch() {
	c.mu.Lock()
	if c.serving && c.body != nil && c.body.left > 0 && c.watching == nil {
		// The body is still to be read: its last read starts the watch.
		c.watchDue = true
		c.mu.Unlock()
		return
	}
	if !c.serving || c.body != nil && c.body.left > 0 || c.br.Buffered() > 0 || c.in.hasByte || c.watching != nil {
		c.mu.Unlock()
		return
	}
	done := make(chan struct{})
	c.watching = done
	c.mu.Unlock()

	var b [1]byte
	for {
		n, err := c.rwc.Read(b[:])
		c.mu.Lock()
		var ne net.Error
		if n == 0 && !c.stopping && errors.As(err, &ne) && ne.Timeout() {
			// The deadline of the idle wait or of the head ran out while
			// the request is served; the watch goes on without one.
			_ = c.rwc.SetReadDeadline(time.Time{})
			c.deadlineCleared = true
			c.mu.Unlock()
			continue
		}
		if n == 1 {
			c.in.hasByte, c.in.b = true, b[0]
		} else if !c.stopping {
			c.ctx.cancel(context.Canceled)
		}
		c.watching = nil
		close(done)
		c.mu.Unlock()
		return
	}
}

// endWatch ends the watch of the request just served, cutting its read
// short, before the connection is read again.
func (c *frontConn) endWatch() {
	c.mu.Lock()
	c.serving = false
	done := c.watching
	if done != nil {
		c.stopping = true
		_ = c.rwc.SetReadDeadline(aLongTimeAgo)
	}
	if c.deadlineCleared {
		c.deadlineCleared = false
		c.deadline = time.Time{}
		c.idleSet = false
	}
	c.mu.Unlock()
	if done != nil {
		<-done
		c.mu.Lock()
		c.stopping = false
		c.mu.Unlock()
		c.deadline = aLongTimeAgo
		c.setReadDeadline(time.Time{})
	}
}

// frontBody is a request body of declared length, read from the
// connection's buffer.
type frontBody struct {
	c *frontConn
	// mu serialises reads: a handler may hand the body to a goroutine of
	// its own, as http.Transport's write loop, that reads on after it.
	mu     sync.Mutex
	left   int64 // bytes not yet read; also guarded by c.mu once the watch may run
	closed bool  // closed by the handler or after it returned
	err    error
}

func (b *frontBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.readLocked(p)
}

func (b *frontBody) readLocked(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.c.br.Read(p)
	c := b.c
	c.mu.Lock()
	b.left -= int64(n)
	if b.left == 0 && c.watchDue {
		c.watchDue = false
		c.timer.Reset(0)
	}
	c.mu.Unlock()
	if b.left == 0 {
		return n, io.EOF
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.err = err
	}
	return n, err
}

func (b *frontBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

// detach waits for a read still in flight once the handler returned,
// cutting it short if it waits on the caller, so that the connection is
// the serve goroutine's alone again.
func (b *frontBody) detach() {
	if b.mu.TryLock() {
		b.mu.Unlock()
		return
	}
	_ = b.c.rwc.SetReadDeadline(aLongTimeAgo)
	b.c.deadline = aLongTimeAgo // whatever is set next is set
	b.mu.Lock()
	if b.left > 0 && b.err == nil {
		b.err = errors.New("the request body was read after its handler returned")
	}
	b.mu.Unlock()
}

// close ends the body once the handler returned.
func (b *frontBody) close() { _ = b.Close() }

// Arrived reports whether the rest of the body is already read from the
// connection, so that reading it cannot wait on the caller.
var (
	_ httpwire.ArrivedBody      = (*frontBody)(nil)
	_ httpwire.AfterFuncContext = (*callerContext)(nil)
)

func (b *frontBody) Arrived() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left <= int64(b.c.br.Buffered())
}

// unread reports whether some of the body was neither read nor drained.
func (b *frontBody) unread() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left > 0
}

// What settle found of a request body as the answer's header goes out.
const (
	bodyDone     = iota // read to its end, or drained
	bodyTooLarge        // too much left to drain: the connection must end
	bodyLost            // closed early, broken, or being read elsewhere
)

// settle brings the body to its end as net/http does before an answer's
// header goes out: it drains up to maxDrainBytes of what the handler left.
// A body another goroutine is reading is left alone: where its stream
// stands is unknown, and the connection must end after the answer.
func (b *frontBody) settle() int {
	if !b.mu.TryLock() {
		return bodyLost
	}
	defer b.mu.Unlock()
	switch {
	case b.left == 0:
		return bodyDone
	case b.closed || b.err != nil:
		return bodyLost
	case b.left >= maxDrainBytes:
		return bodyTooLarge
	}
	if !b.drainLocked() {
		return bodyLost
	}
	return bodyDone
}

// drain reads what the handler left of the body, up to maxDrainBytes, and
// reports whether the connection is positioned at the next request.
func (b *frontBody) drain() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left == 0 {
		return true
	}
	if b.err != nil || b.left > maxDrainBytes {
		return false
	}
	return b.drainLocked()
}

func (b *frontBody) drainLocked() bool {
	buf := drainBuffers.Get().(*[drainBuffer]byte)
	defer drainBuffers.Put(buf)
	for b.left > 0 {
		if _, err := b.readLocked(buf[:]); err != nil && err != io.EOF {
			return false
		}
	}
	return true
}

// handoffListener is the queue of connections handed to the fallback
// server, as a net.Listener it serves.
type handoffListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *handoffListener) init() {
	l.conns = make(chan net.Conn)
	l.closed = make(chan struct{})
}

// push hands c to the fallback server, or reports false once it is closed.
func (l *handoffListener) push(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return handoffAddr{} }

type handoffAddr struct{}

func (handoffAddr) Network() string { return "tcp" }
func (handoffAddr) String() string  { return "handoff" }

// handoffKey keys the handoffState of a connection handed off, in the
// contexts of its requests.
type handoffKey struct{}

// handoffState is what the front knew of a connection it handed off.
type handoffState struct {
	sawFirst bool // the front saw the whole head of its first request
	served   int  // requests begun on it so far
}

// HeadSeen reports whether the front saw the whole head of r, which it
// serves itself or handed off as the first request of its connection; it
// counts r as begun, and must be called once for each request.
func HeadSeen(r *http.Request) bool {
	st, _ := r.Context().Value(handoffKey{}).(*handoffState)
	if st == nil {
		return true
	}
	st.served++
	return st.served == 1 && st.sawFirst
}

// replayConn is a connection handed off: reads return first what the front
// had read of it. sawHead says the front saw the whole head of the first
// request net/http reads from it.
type replayConn struct {
	net.Conn
	r       *bufio.Reader
	sawHead bool
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite shuts the sending side, as net/http does before it closes a
// connection whose request it did not read to its end, so that the caller
// reads the answer before the kernel resets the connection.
func (c *replayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// callerContext is the context of the requests of one connection: done
// once the caller is seen to leave or the connection ends. Once done, the
// connection serves no other request, so one serves them all.
type callerContext struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
	// server and local answer the keys net/http's server sets.
	server *http.Server
	local  net.Addr
	// slot holds the one function most requests register, with no
	// allocation; others go in funcs.
	slot     func()
	stopSlot func() bool
	funcs    map[*registered]struct{}
}

type registered struct{ f func() }

func (c *callerContext) init() {
	c.done = make(chan struct{})
	c.stopSlot = c.clearSlot
}

func (c *callerContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *callerContext) Done() <-chan struct{}       { return c.done }

// Value answers the keys net/http's server sets on its requests' contexts:
// http.ServerContextKey, by which httputil.ReverseProxy knows to abort a
// response whose upstream body broke off rather than end it as whole, and
// http.LocalAddrContextKey.
func (c *callerContext) Value(key any) any {
	switch key {
	case http.ServerContextKey:
		return c.server
	case http.LocalAddrContextKey:
		return c.local
	}
	return nil
}

func (c *callerContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// AfterFunc arranges for f to run once the context is done, as
// context.AfterFunc does; context.AfterFunc calls it rather than start a
// goroutine to wait, and so can callers that know the context.
func (c *callerContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	if c.slot == nil {
		c.slot = f
		return c.stopSlot
	}
	a := &registered{f: f}
	if c.funcs == nil {
		c.funcs = map[*registered]struct{}{}
	}
	c.funcs[a] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.funcs[a]
		delete(c.funcs, a)
		return ok
	}
}

// clearSlot stops the function in the slot. The slot is only taken again
// once its holder stopped it or it ran, so it is the holder's.
func (c *callerContext) clearSlot() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := c.slot != nil
	c.slot = nil
	return ok
}

// forget drops the functions registered by the request just served; their
// stop functions report false from then on.
func (c *callerContext) forget() {
	c.mu.Lock()
	c.slot = nil
	clear(c.funcs)
	c.mu.Unlock()
}

func (c *callerContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
	if c.slot != nil {
		go c.slot()
		c.slot = nil
	}
	for a := range c.funcs {
		go a.f()
	}
	c.funcs = nil
}
