package differential

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Received is one request the upstream parsed.
type Received struct {
	// Seq counts the upstream's requests from 1; the answer carries it in
	// X-Upstream-Seq.
	Seq int
	// Key is the case the request belongs to, by its target's prefix or
	// its X-Forwarded-Host; -1 when it names none.
	Key                   Key
	Method, Target, Proto string
	Header                http.Header
	Body                  []byte
	// Conn numbers the upstream's connections from 1, in the order
	// accepted; Index is the request's place on its connection, from 0.
	Conn, Index int
	// HeadAt is when the request's head was parsed.
	HeadAt time.Time
	// Mode is the misbehaviour the target asked for, "" for none.
	Mode string
	// Status is the status the upstream answered with, 0 for none.
	Status int
	// LateAt is when the upstream wrote the bytes its misbehaviour sends
	// after the answer, zero until it has.
	LateAt time.Time
}

// Upstream is a raw HTTP/1.1 server that records every request it parses
// and answers each with 200, a JSON body naming the request and
// X-Upstream-Seq, unless the request's path asks for a misbehaviour with
// /mis/<mode> (see the Mode constants).
type Upstream struct {
	// Addr is the host:port it listens on.
	Addr string

	ln   net.Listener
	done chan struct{}
	wg   sync.WaitGroup

	mu           sync.Mutex
	seq, conns   int
	byKey        map[Key][]Received
	unattributed []Received
	counts       map[string]int
	open         map[net.Conn]struct{}
}

// Misbehaviours, selected by a request path holding /mis/<mode>.
const (
	// ModeUnsolicited answers, then 5 ms later sends a second, complete
	// response nobody asked for: INJECTED.
	ModeUnsolicited = "unsolicited"
	// ModeLateBody204, ModeLateBody304 and ModeLateBodyHead answer with a
	// status that has no body (or, for the last, a head to a HEAD), then
	// 5 ms later send bytes as if they were its body: a response INJECTED.
	ModeLateBody204  = "late-body-204"
	ModeLateBody304  = "late-body-304"
	ModeLateBodyHead = "late-body-head"
	// ModeEarly answers at once without reading the body (CL.0), then
	// parses the body as the next request and answers that too, 5 ms on.
	ModeEarly = "early"
	// ModeResetAfterRead reads the whole request, then resets the
	// connection without answering; ModeResetAfterHead does so having read
	// only the head. A second delivery of the same target is answered.
	ModeResetAfterRead = "reset-after-read"
	ModeResetAfterHead = "reset-after-head"
	// ModeCloseBeforeAnswer reads the request and closes cleanly without
	// answering; a second delivery of the same target is answered.
	ModeCloseBeforeAnswer = "close-before-answer"
	// ModeStatus099 answers with the status line HTTP/1.1 099 X.
	ModeStatus099 = "status-099"
	// ModeEarly413 answers 413 with Connection: close before reading the
	// body, then drains and closes the connection as net/http does.
	ModeEarly413 = "early-413"
	// ModeSlow answers after the delay its query gives in ms (?ms=300).
	ModeSlow = "slow"
	// ModeLateError and ModeLateErrorChunked answer 400 with a JSON body
	// framed by its length, or chunked, the head at once and the body
	// LateBody later, past the upstream timeout.
	ModeLateError        = "late-error"
	ModeLateErrorChunked = "late-error-chunked"
	// ModeUntyped and ModeUntypedChunked answer 200 with an HTML body and
	// no Content-Type, framed by its length, or chunked.
	ModeUntyped        = "untyped"
	ModeUntypedChunked = "untyped-chunked"
	// ModeBrokenBody answers 200 with a Content-Length of 1000, sends a
	// part of the body, and closes.
	ModeBrokenBody = "broken-body"
)

// LateBody is how long after its head ModeLateError sends its body: past
// UpstreamTimeout, with room to spare.
const LateBody = UpstreamTimeout + 500*time.Millisecond

// LateErrorBody is the body ModeLateError sends late.
const LateErrorBody = `{"error":"the upstream's own words, late"}`

// UntypedBody is the body ModeUntyped sends with no Content-Type, which
// net/http's server would sniff as text/html.
const UntypedBody = "<html><body>no type</body></html>"

// injected is the response ModeUnsolicited and the late bodies send: its
// X-Upstream-Seq is 0, the answer to no request.
const injected = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Upstream-Seq: 0\r\nContent-Length: 8\r\n\r\nINJECTED"

// misbehaviourGap is how long the upstream waits before the bytes of a
// misbehaviour that come after an answer.
const misbehaviourGap = 5 * time.Millisecond

// StartUpstream starts an Upstream on 127.0.0.1, closed at t's cleanup.
func StartUpstream(t testing.TB) *Upstream {
	t.Helper()
	u, err := NewUpstream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	return u
}

// NewUpstream starts an Upstream on 127.0.0.1; Close stops it.
func NewUpstream() (*Upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &Upstream{Addr: ln.Addr().String(), ln: ln, done: make(chan struct{}),
		byKey: map[Key][]Received{}, counts: map[string]int{}, open: map[net.Conn]struct{}{}}
	u.wg.Add(1)
	go u.accept()
	return u, nil
}

// URL is the upstream's base URL.
func (u *Upstream) URL() string { return "http://" + u.Addr }

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (u *Upstream) Close() {
	u.mu.Lock()
	select {
	case <-u.done:
		u.mu.Unlock()
		return
	default:
	}
	close(u.done)
	u.ln.Close()
	for c := range u.open {
		c.Close()
	}
	u.mu.Unlock()
	u.wg.Wait()
}

func (u *Upstream) accept() {
	defer u.wg.Done()
	for {
		c, err := u.ln.Accept()
		if err != nil {
			return
		}
		u.mu.Lock()
		select {
		case <-u.done:
			u.mu.Unlock()
			c.Close()
			return
		default:
		}
		u.conns++
		n := u.conns
		u.open[c] = struct{}{}
		u.wg.Add(1)
		u.mu.Unlock()
		go func() {
			defer u.wg.Done()
			defer u.forget(c)
			u.serve(c, n)
		}()
	}
}

func (u *Upstream) forget(c net.Conn) {
	c.Close()
	u.mu.Lock()
	delete(u.open, c)
	u.mu.Unlock()
}

// Requests returns the requests received so far that belong to k, in the
// order received.
func (u *Upstream) Requests(k Key) []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Received(nil), u.byKey[k]...)
}

// TakeUnattributed returns the requests that belong to no case received
// since the last call.
func (u *Upstream) TakeUnattributed() []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.unattributed
	u.unattributed = nil
	return out
}

// Count returns how many times a request with this target was received.
func (u *Upstream) Count(target string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.counts[target]
}

// record keeps r, numbered, and returns its number and how many times its
// target was received, this time included.
func (u *Upstream) record(r Received) (seq, count int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seq++
	r.Seq = u.seq
	u.counts[r.Target]++
	if r.Key >= 0 {
		u.byKey[r.Key] = append(u.byKey[r.Key], r)
	} else {
		u.unattributed = append(u.unattributed, r)
	}
	return r.Seq, u.counts[r.Target]
}

// wroteLate notes that the bytes request seq's misbehaviour sends after
// its answer were written.
func (u *Upstream) wroteLate(key Key, seq int) {
	u.update(key, seq, func(r *Received) { r.LateAt = time.Now() })
}

// answered notes the status the upstream answered request seq with.
func (u *Upstream) answered(key Key, seq, status int) {
	u.update(key, seq, func(r *Received) { r.Status = status })
}

// update changes the record of request seq, filed under key.
func (u *Upstream) update(key Key, seq int, change func(*Received)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	list := u.byKey[key]
	if key < 0 {
		list = u.unattributed
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Seq == seq {
			change(&list[i])
			return
		}
	}
}

// sleep waits d, or less when the upstream closes.
func (u *Upstream) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-u.done:
	}
}

// serve reads requests from c until it closes or a misbehaviour ends it.
func (u *Upstream) serve(c net.Conn, conn int) {
	br := bufio.NewReader(c)
	delayNext := false
	for index := 0; ; index++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		r := Received{Key: keyOf(req.RequestURI, req.Header.Get("X-Forwarded-Host")),
			Method: req.Method, Target: req.RequestURI, Proto: req.Proto, Header: req.Header,
			Conn: conn, Index: index, HeadAt: time.Now(), Mode: modeOf(req.URL.Path)}
		if readsBody(r.Mode) {
			if expectsContinue(req) {
				if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
					return
				}
			}
			if r.Body, err = io.ReadAll(req.Body); err != nil {
				return
			}
		}
		seq, count := u.record(r)
		if delayNext {
			u.sleep(misbehaviourGap)
			delayNext = false
		}
		if !u.act(c, req, r, seq, count) || req.Close {
			return
		}
		delayNext = r.Mode == ModeEarly
	}
}

// act answers request r, numbered seq and received count times, as its
// mode asks, and reports whether the connection goes on. The status is
// noted before the answer leaves, so that whoever reads the answer finds
// it noted.
func (u *Upstream) act(c net.Conn, req *http.Request, r Received, seq, count int) bool {
	say := func(status int, s string) bool {
		u.answered(r.Key, seq, status)
		return write(c, s)
	}
	switch r.Mode {
	case ModeResetAfterRead, ModeResetAfterHead:
		if count == 1 {
			reset(c)
			return false
		}
	case ModeCloseBeforeAnswer:
		if count == 1 {
			return false
		}
	case ModeStatus099:
		return say(99, fmt.Sprintf("HTTP/1.1 099 X\r\nX-Upstream-Seq: %d\r\nContent-Length: 0\r\n\r\n", seq))
	case ModeEarly413:
		body := `{"error":"too large"}`
		say(413, fmt.Sprintf("HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nX-Upstream-Seq: %d\r\n"+
			"Connection: close\r\nContent-Length: %d\r\n\r\n%s", seq, len(body), body))
		drainAndClose(c)
		return false
	case ModeLateBody204, ModeLateBody304:
		status := map[string]int{ModeLateBody204: 204, ModeLateBody304: 304}[r.Mode]
		return say(status, fmt.Sprintf("HTTP/1.1 %d %s\r\nX-Upstream-Seq: %d\r\n\r\n", status, http.StatusText(status), seq)) &&
			u.later(c, injected, r.Key, seq)
	case ModeLateBodyHead:
		return say(200, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Upstream-Seq: %d\r\nContent-Length: %d\r\n\r\n",
			seq, len(injected))) && u.later(c, injected, r.Key, seq)
	case ModeSlow:
		ms, _ := strconv.Atoi(req.URL.Query().Get("ms"))
		u.sleep(time.Duration(min(max(ms, 0), 5000)) * time.Millisecond)
	case ModeLateError, ModeLateErrorChunked:
		head := fmt.Sprintf("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nX-Upstream-Seq: %d\r\n", seq)
		body := LateErrorBody
		if r.Mode == ModeLateErrorChunked {
			head += "Transfer-Encoding: chunked\r\n\r\n"
			body = fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
		} else {
			head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
		}
		if !say(400, head) {
			return false
		}
		u.sleep(LateBody)
		return write(c, body)
	case ModeUntyped:
		return say(200, fmt.Sprintf("HTTP/1.1 200 OK\r\nX-Upstream-Seq: %d\r\nContent-Length: %d\r\n\r\n%s", seq, len(UntypedBody), UntypedBody))
	case ModeUntypedChunked:
		return say(200, fmt.Sprintf("HTTP/1.1 200 OK\r\nX-Upstream-Seq: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
			seq, len(UntypedBody), UntypedBody))
	case ModeBrokenBody:
		say(200, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Upstream-Seq: %d\r\nContent-Length: 1000\r\n\r\n{\"partial\":", seq))
		return false
	}
	if !say(200, answer(r, seq, req.Method == http.MethodHead)) {
		return false
	}
	return r.Mode != ModeUnsolicited || u.later(c, injected, r.Key, seq)
}

// later writes s misbehaviourGap after the answer to request seq, in a
// write of its own, and notes when it did.
func (u *Upstream) later(c net.Conn, s string, key Key, seq int) bool {
	u.sleep(misbehaviourGap)
	ok := write(c, s)
	u.wroteLate(key, seq)
	return ok
}

// Naming is the JSON body the upstream answers a request with: enough to
// prove that an answer is for that request.
type Naming struct {
	Method     string `json:"method"`
	Target     string `json:"target"`
	BodyLength int    `json:"body_length"`
	BodySHA256 string `json:"body_sha256"`
}

// NameOf returns the body the upstream answers a request with.
func NameOf(method, target string, body []byte) []byte {
	sum := sha256.Sum256(body)
	b, _ := json.Marshal(Naming{Method: method, Target: target, BodyLength: len(body), BodySHA256: hex.EncodeToString(sum[:8])})
	return b
}

// answer is the upstream's 200 to r; without its body for a HEAD.
func answer(r Received, seq int, head bool) string {
	body := NameOf(r.Method, r.Target, r.Body)
	s := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Upstream-Seq: %d\r\nContent-Length: %d\r\n\r\n", seq, len(body))
	if head {
		return s
	}
	return s + string(body)
}

func write(c net.Conn, s string) bool {
	_, err := io.WriteString(c, s)
	return err == nil
}

// modeOf returns the misbehaviour a path asks for: what follows /mis/.
func modeOf(path string) string {
	_, mode, ok := strings.Cut(path, "/mis/")
	if !ok {
		return ""
	}
	mode, _, _ = strings.Cut(mode, "/")
	return mode
}

// readsBody reports whether a mode reads the request's body before it
// acts.
func readsBody(mode string) bool {
	return mode != ModeEarly && mode != ModeResetAfterHead && mode != ModeEarly413
}

// expectsContinue reports whether req waits for 100 Continue before its
// body, which the upstream then sends as net/http's server does.
func expectsContinue(req *http.Request) bool {
	return req.ProtoAtLeast(1, 1) && strings.EqualFold(req.Header.Get("Expect"), "100-continue")
}

// reset closes c with a TCP reset rather than a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// drainAndClose ends a connection whose request body was left unread the
// way net/http's server does: it closes the sending side, reads and drops
// what comes for a while, then closes, so that the answer is not lost to
// a reset.
func drainAndClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, _ = io.Copy(io.Discard, c)
	c.Close()
}
