package proxy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/httpwire"
)

// A caller's request body, where signpost needs it: read whole before the
// upstream is called, on a route with body fields in enforce mode; copied
// as it streams to the upstream, in observe mode. Either way memory grows
// only as bytes arrive, charged to the process-wide buffer budget, so that
// callers that announce a large body and send none of it hold next to
// nothing.

// DefaultRequestBodyTimeout bounds the arrival of a request body signpost
// reads before it calls the upstream.
const DefaultRequestBodyTimeout = 30 * time.Second

// firstBodyBuffer is the capacity a body that has yet to arrive starts
// with; it doubles as bytes come, up to the body's length or the bound.
const firstBodyBuffer = 4 << 10

// errBodyTimeout is a request body that did not arrive within its
// deadline.
var errBodyTimeout = errors.New("the request body did not arrive in time")

// bufferRequest reads the body of r up to limit, so that its fields can be
// checked and echoed, and gives r an identical body to forward. A body
// over the limit yields errTooLarge, unread past the limit. One that has
// yet to arrive must do so within p.requestBodyTimeout (errBodyTimeout),
// in a buffer grown as it comes and charged to ex's hold on the budget;
// when the budget has no more room, r keeps what was read and the rest,
// to stream to the upstream, and the error is budget.ErrSpent.
func (p *Proxy) bufferRequest(w http.ResponseWriter, r *http.Request, ex *exchange, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errTooLarge
	}
	var head []byte
	var err error
	if r.ContentLength >= 0 && arrived(r.Body) {
		// In the connection's read buffer already: one copy of exactly
		// its length, with nothing to wait for.
		head = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, head)
	} else {
		rc := http.NewResponseController(w)
		deadline := p.requestBodyTimeout > 0 && rc.SetReadDeadline(time.Now().Add(p.requestBodyTimeout)) == nil
		ex.held.Budget = p.budget
		head, err = readGrowing(r.Body, r.ContentLength, limit, &ex.held)
		if deadline {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if errors.Is(err, budget.ErrSpent) {
			r.Body = putBack(head, r.Body, nil)
			return nil, err
		}
		if deadline && timedOut(err) {
			return nil, errBodyTimeout
		}
	}
	if err != nil {
		return nil, err
	}
	if int64(len(head)) > limit {
		return nil, errTooLarge
	}
	r.Body.Close()
	ex.callerBody.Reset(head)
	r.Body = &ex.callerBody
	r.ContentLength = int64(len(head))
	r.TransferEncoding = nil
	return head, nil
}

// arrived reports whether body is already read whole from the connection,
// so that reading it cannot wait on the caller.
func arrived(body io.Reader) bool {
	b, ok := body.(httpwire.ArrivedBody)
	return ok && b.Arrived()
}

// timedOut reports whether err is a read deadline that ran out.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readGrowing reads r, size bytes when size is known and otherwise up to
// limit and one byte more, into a buffer that starts small and doubles as
// bytes arrive, each growth charged to c first. When c's budget refuses a
// growth it returns what it read with budget.ErrSpent.
func readGrowing(r io.Reader, size, limit int64, c *budget.Charge) ([]byte, error) {
	bound := limit + 1
	if size >= 0 {
		bound = min(size, bound)
	}
	var buf []byte
	for {
		if int64(len(buf)) == bound {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			old := int64(cap(buf))
			grown := min(max(2*old, firstBodyBuffer), bound)
			if !c.Grow(grown) {
				return buf, budget.ErrSpent
			}
			buf = append(make([]byte, 0, grown), buf...)
			c.Shrink(old)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if size >= 0 && int64(len(buf)) < size {
				return buf, io.ErrUnexpectedEOF
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// teeBody passes a request body on to the upstream as it comes, and keeps
// a copy of it, up to a bound, for observe mode's record: signpost makes
// the caller wait for nothing. The copy grows as bytes pass, charged to
// the exchange's hold on the budget; past the bound, or refused by the
// budget, the copy is dropped and the body passes on alone. The upstream
// transport may read it on another goroutine.
type teeBody struct {
	body  io.ReadCloser
	size  int64 // the declared length, -1 when unknown
	limit int64

	mu     sync.Mutex
	c      *budget.Charge
	copied []byte
	eof    bool // the body was read to its end
	off    bool // the copy is dropped, or let go
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	t.mu.Lock()
	if n > 0 && !t.off {
		t.keep(p[:n])
	}
	if err == io.EOF {
		t.eof = true
	}
	t.mu.Unlock()
	return n, err
}

// keep appends p to the copy, growing it as readGrowing grows its buffer.
// t.mu is held.
func (t *teeBody) keep(p []byte) {
	need := int64(len(t.copied) + len(p))
	if need > t.limit {
		t.drop()
		return
	}
	if need > int64(cap(t.copied)) {
		old := int64(cap(t.copied))
		grown := max(2*old, firstBodyBuffer, need)
		if t.size >= 0 {
			grown = min(grown, max(t.size, need))
		}
		grown = min(grown, t.limit)
		if !t.c.Grow(grown) {
			t.drop()
			return
		}
		t.copied = append(make([]byte, 0, grown), t.copied...)
		t.c.Shrink(old)
	}
	t.copied = append(t.copied, p...)
}

// drop gives up the copy for good. t.mu is held.
func (t *teeBody) drop() {
	t.off = true
	t.c.Shrink(int64(cap(t.copied)))
	t.copied = nil
}

// Arrived passes on whether the body is already read whole from the
// connection, by which the direct path sends it with the head.
func (t *teeBody) Arrived() bool { return arrived(t.body) }

func (t *teeBody) Close() error { return t.body.Close() }

// whole returns the copy once the body was read to its end within the
// bound, and nil while it was not.
func (t *teeBody) whole() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.off || !t.eof && (t.size < 0 || int64(len(t.copied)) < t.size) {
		return nil
	}
	if t.copied == nil {
		return []byte{}
	}
	return t.copied
}

// letGo ends the copy once the exchange is answered, giving back its
// charge; the transport may still be reading the body.
func (t *teeBody) letGo() {
	t.mu.Lock()
	if !t.off {
		t.drop()
	}
	t.mu.Unlock()
}
