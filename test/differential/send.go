package differential

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"time"
)

// Answer is one final response a caller read.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Close says the response announced the connection's end.
	Close bool
	// AfterHalfClose says it came only once the caller had half-closed.
	AfterHalfClose bool
	// Err says why its body could not be read to its end; "" when it was.
	Err string
	// At is when it was read.
	At time.Time
}

// Seq returns the X-Upstream-Seq the answer carries, and whether it
// carries one: whether the upstream made it, rather than the proxy.
func (a Answer) Seq() (int, bool) {
	v := a.Header.Values("X-Upstream-Seq")
	if len(v) != 1 {
		return 0, false
	}
	n, err := strconv.Atoi(v[0])
	return n, err == nil
}

// FromUpstream reports whether the upstream made the answer.
func (a Answer) FromUpstream() bool {
	_, ok := a.Seq()
	return ok
}

// Result is what a caller saw on one connection.
type Result struct {
	// Sent is the bytes written.
	Sent []byte
	// Written is when each piece of Sent was written.
	Written []time.Time
	// Answers are the final responses read, in order; 1xx are skipped.
	Answers []Answer
	// Closed says the server closed the connection: it was read to its
	// end, or reset. It is false when the reads ran out of time first.
	Closed bool
	// HalfClosed says the caller half-closed the connection, and
	// HalfCloseAfter how long after its last write.
	HalfClosed     bool
	HalfCloseAfter time.Duration
	// Unparsed is what arrived after the last answer that is none.
	Unparsed []byte
	// Stopped says why reading stopped.
	Stopped string
	// LastRead is how long the last read took.
	LastRead time.Duration
}

// Send writes raw on a fresh connection to addr and reads what comes back
// without waiting for a quiet period: it reads as many final answers as
// net/http's server would send before the caller says more (one for each
// request in raw that it reads to its end, and one for a request it
// refuses), each within limit; then it half-closes the connection and
// reads what else comes until the server closes it, within limit again.
func Send(addr string, raw []byte, limit time.Duration) Result {
	return exchange(addr, [][]byte{raw}, 0, limit, false, 0)
}

// SendHalfClosed writes raw and half-closes the connection at once, then
// reads every answer until the server closes it, within limit.
func SendHalfClosed(addr string, raw []byte, limit time.Duration) Result {
	return exchange(addr, [][]byte{raw}, 0, limit, true, 0)
}

// SendHeld writes raw and, before it half-closes, reads whatever answers
// come within hold, however many net/http's server would send: a server
// that answers a request whose body the caller holds back is seen to.
func SendHeld(addr string, raw []byte, hold, limit time.Duration) Result {
	return exchange(addr, [][]byte{raw}, 0, limit, false, hold)
}

// SendTrickled is Send for a request whose head is written at once and
// whose body follows piece bytes at a time, every gap.
func SendTrickled(addr string, head, body []byte, piece int, gap, limit time.Duration) Result {
	pieces := [][]byte{head}
	for len(body) > 0 {
		n := min(piece, len(body))
		pieces, body = append(pieces, body[:n]), body[n:]
	}
	return exchange(addr, pieces, gap, limit, false, 0)
}

// exchange writes pieces, gap apart, and reads the answers, as Send says;
// halfCloseAtOnce half-closes once the pieces are written, before any
// answer, and a hold above zero reads answers for that long before it
// half-closes, as SendHeld says.
func exchange(addr string, pieces [][]byte, gap, limit time.Duration, halfCloseAtOnce bool, hold time.Duration) Result {
	sent := bytes.Join(pieces, nil)
	res := Result{Sent: sent}
	c, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		res.Stopped = "dial: " + err.Error()
		return res
	}
	defer c.Close()
	span := gap * time.Duration(len(pieces)-1)
	_ = c.SetWriteDeadline(time.Now().Add(span + limit))
	written := make(chan []time.Time, 1)
	go func() {
		var at []time.Time
		for i, b := range pieces {
			if i > 0 {
				time.Sleep(gap)
			}
			if _, err := c.Write(b); err != nil {
				break
			}
			at = append(at, time.Now())
		}
		written <- at
	}()

	parsed := parseRequests(sent)
	r := &reader{c: c, res: &res, reqs: parsed.requests}
	r.br = bufio.NewReader(io.TeeReader(c, r))
	switch {
	case hold > 0:
		deadline := time.Now().Add(span + hold)
		for r.next(deadline) {
		}
	case !halfCloseAtOnce:
		deadline := time.Now().Add(span + limit)
		for i := 0; i < parsed.answeredAtOnce() && r.next(deadline); i++ {
			deadline = time.Now().Add(limit)
		}
	}
	res.Written = <-written
	if res.Closed || len(res.Unparsed) > 0 {
		return res
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	res.HalfClosed = true
	if n := len(res.Written); n > 0 {
		res.HalfCloseAfter = time.Since(res.Written[n-1])
	}
	deadline := time.Now().Add(limit)
	for r.next(deadline) {
	}
	return res
}

// reader reads answers into a Result, keeping every byte it reads so that
// what is no answer can be shown.
type reader struct {
	c    net.Conn
	br   *bufio.Reader
	res  *Result
	reqs []callerRequest
	all  []byte
}

func (r *reader) Write(p []byte) (int, error) {
	r.all = append(r.all, p...)
	return len(p), nil
}

// next reads the next final answer by deadline and reports whether there
// may be another.
func (r *reader) next(deadline time.Time) bool {
	_ = r.c.SetReadDeadline(deadline)
	start := time.Now()
	defer func() { r.res.LastRead = time.Since(start) }()
	for {
		from := len(r.all) - r.br.Buffered()
		if _, err := r.br.Peek(1); err != nil {
			r.stop(err, from)
			return false
		}
		res, err := http.ReadResponse(r.br, r.requestFor(len(r.res.Answers)))
		if err != nil {
			r.stop(err, from)
			return false
		}
		if res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		body, err := io.ReadAll(res.Body)
		a := Answer{Status: res.StatusCode, Header: res.Header, Body: body, Close: res.Close, AfterHalfClose: r.res.HalfClosed, At: time.Now()}
		if err != nil {
			a.Err = err.Error()
		}
		r.res.Answers = append(r.res.Answers, a)
		if err != nil {
			r.stop(err, len(r.all)-r.br.Buffered())
			return false
		}
		if res.StatusCode == http.StatusSwitchingProtocols {
			r.res.Stopped = "101: the connection switched protocols"
			return false
		}
		return true
	}
}

// stop notes why reading stopped at offset from of what was read, and
// keeps what came after it when that is not a clean end.
func (r *reader) stop(err error, from int) {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		r.res.Stopped = "nothing more came within the limit"
	case err == io.EOF:
		r.res.Stopped, r.res.Closed = "closed", true
	default:
		r.res.Stopped = err.Error()
		// The rest of a response cut short or malformed, until the end.
		_, rerr := io.Copy(io.Discard, r.br)
		r.res.Closed = rerr == nil || !errors.Is(rerr, os.ErrDeadlineExceeded)
	}
	if from < len(r.all) {
		r.res.Unparsed = append([]byte(nil), r.all[from:]...)
	}
}

// requestFor returns a request with the method of the caller's i-th, so
// that an answer to a HEAD is read without a body.
func (r *reader) requestFor(i int) *http.Request {
	if i < len(r.reqs) {
		return &http.Request{Method: r.reqs[i].method}
	}
	return nil
}

// callerRequest is one request in a caller's bytes as net/http's server
// reads it.
type callerRequest struct {
	method, target string
	major, minor   int
	// te and cl say the head carried Transfer-Encoding, Content-Length:
	// net/http removes what it ignores, so they are read from the bytes.
	te, cl bool
	// head is the length of the request's head, with its body's when
	// net/http read one.
	head int
	// unfinished says the bytes end within its body: the server waits for
	// the rest, and answers only once the caller half-closes.
	unfinished bool
	// broken says its body is malformed: the server answers it and reads
	// no further.
	broken bool
}

// callerBytes is what net/http's server makes of a caller's bytes.
type callerBytes struct {
	requests []callerRequest
	// malformedTail says that bytes after the requests are refused at once,
	// before the caller says more: a head that cannot be the start of a
	// valid one.
	malformedTail bool
}

// answeredAtOnce is how many answers net/http sends before the caller
// half-closes.
func (b callerBytes) answeredAtOnce() int {
	n := 0
	for _, r := range b.requests {
		if !r.unfinished {
			n++
		}
	}
	if b.malformedTail {
		n++
	}
	return n
}

// parseRequests reads raw as net/http's server reads a connection: each
// request with http.ReadRequest, its body read to its end. After the
// first, the server waits until four bytes of the next are in before it
// reads it; after a POST, it skips up to four CR or LF bytes, as it
// tolerates them.
func parseRequests(raw []byte) callerBytes {
	var out callerBytes
	rest := raw
	afterPOST := false
	for len(rest) > 0 {
		if len(out.requests) > 0 && len(rest) < 4 {
			break
		}
		if afterPOST {
			rest = rest[leadingCRorLF(rest[:4]):]
		}
		er := &endReader{b: rest}
		br := bufio.NewReader(er)
		req, err := http.ReadRequest(br)
		if err != nil {
			// Refused without more bytes: the server answers at once.
			out.malformedTail = !er.hitEnd
			break
		}
		_, berr := io.Copy(io.Discard, req.Body)
		used := len(rest) - len(er.b) - br.Buffered()
		h := rawHeader(rest[:used])
		cr := callerRequest{method: req.Method, target: req.RequestURI, major: req.ProtoMajor, minor: req.ProtoMinor,
			te: h["Transfer-Encoding"] != nil, cl: h["Content-Length"] != nil, head: used}
		if berr != nil {
			cr.unfinished, cr.broken = er.hitEnd, !er.hitEnd
			out.requests = append(out.requests, cr)
			break
		}
		out.requests = append(out.requests, cr)
		rest = rest[used:]
		afterPOST = req.Method == http.MethodPost
	}
	return out
}

// endReader reads b and notes whether a read found nothing left: where a
// server reading a connection would wait for more.
type endReader struct {
	b      []byte
	hitEnd bool
}

func (r *endReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		r.hitEnd = true
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// rawHeader returns the fields of the head at the start of b as sent,
// before net/http drops those it ignores.
func rawHeader(b []byte) http.Header {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(b)))
	if _, err := tp.ReadLine(); err != nil {
		return nil
	}
	h, _ := tp.ReadMIMEHeader()
	return http.Header(h)
}

// leadingCRorLF counts the CR and LF bytes at the start of b.
func leadingCRorLF(b []byte) int {
	n := 0
	for _, c := range b {
		if c != '\r' && c != '\n' {
			break
		}
		n++
	}
	return n
}
