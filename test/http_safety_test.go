package test

// Tests of the promises signpost's own HTTP/1.1 front and upstream client
// make where they do by hand what net/http does: no answer reaches a caller
// it was not for, no request that is not idempotent is sent twice once any
// byte of it may have been read, and no answer is sent that nobody wrote.
// Each runs the real binary against an upstream on 127.0.0.1 that writes
// raw bytes, so that it can misbehave as real upstreams do.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scriptedUpstream serves every connection it accepts on 127.0.0.1 with
// serve, which reads requests from br and writes raw bytes to c. It
// returns the upstream's base URL; connections are closed at cleanup.
func scriptedUpstream(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				go func() { <-done; c.Close() }()
				serve(c, bufio.NewReader(c))
			})
		}
	}()
	return "http://" + ln.Addr().String()
}

// respondingUpstream answers each request of each connection with the raw
// bytes respond returns for it, given its body read whole.
func respondingUpstream(t *testing.T, respond func(req *http.Request, body []byte) string) string {
	t.Helper()
	return scriptedUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(req.Body)
			io.WriteString(c, respond(req, body))
		}
	})
}

// answer is a complete upstream answer with a plain-text body.
func answer(status int, body string) string {
	return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// dialSignpost opens a connection to signpost, bounded by waitTimeout.
func dialSignpost(t *testing.T, sp *signpost) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", sp.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(waitTimeout))
	return c, bufio.NewReader(c)
}

// roundTrip writes raw on c and reads one answer to a request of method,
// its body read whole.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, method, raw string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatalf("writing %q: %v", raw, err)
	}
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", clip([]byte(raw)), err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the body of the answer to %q: %v", clip([]byte(raw)), err)
	}
	return res, string(body)
}

// getOn sends GET path to signpost on a connection of its own and returns the answer.
func getOn(t *testing.T, sp *signpost, path string) (*http.Response, string) {
	t.Helper()
	c, br := dialSignpost(t, sp)
	return roundTrip(t, c, br, "GET", "GET "+path+" HTTP/1.1\r\nHost: api\r\n\r\n")
}

// errorCode is the error member of a JSON body, or "" when it has none.
func errorCode(body string) string {
	var v struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &v)
	return v.Error
}

// TestNoCallerGetsBytesTheUpstreamSentUnasked has the upstream write, after
// a complete answer and in a write of its own, bytes nobody asked for: an
// extra response, the body of a 204, a 304 or a HEAD answer, or the answer
// to a request smuggled in a POST's body that it read as a request (the
// "CL.0" desync). The next caller, on a connection of its own, must get its
// own answer: the pooled connection those bytes wait on is never used
// again, as http.Transport drops it.
func TestNoCallerGetsBytesTheUpstreamSentUnasked(t *testing.T) {
	t.Parallel()
	const injected = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nINJECTED"
	smuggled := "GET /SMUGGLED HTTP/1.1\r\nHost: up\r\n\r\n"
	for _, tc := range []struct {
		name, method, raw string
	}{
		{"an extra response", "GET", "GET /extra HTTP/1.1\r\nHost: api\r\n\r\n"},
		{"the body of a 204", "GET", "GET /204 HTTP/1.1\r\nHost: api\r\n\r\n"},
		{"the body of a 304", "GET", "GET /304 HTTP/1.1\r\nHost: api\r\n\r\n"},
		{"the body of a HEAD answer", "HEAD", "HEAD /head HTTP/1.1\r\nHost: api\r\n\r\n"},
		{"a request in a POST's body, read as one", "POST", "POST /early HTTP/1.1\r\nHost: api\r\nContent-Type: text/plain\r\n" +
			"Content-Length: " + strconv.Itoa(len(smuggled)) + "\r\n\r\n" + smuggled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sentUnasked := make(chan struct{}, 1)
			up := scriptedUpstream(t, func(c net.Conn, br *bufio.Reader) {
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					later := ""
					switch req.URL.Path {
					case "/extra":
						io.WriteString(c, answer(200, "ok"))
						later = injected
					case "/204":
						io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
						later = injected
					case "/304":
						io.WriteString(c, "HTTP/1.1 304 Not Modified\r\nContent-Length: 85\r\n\r\n")
						later = injected
					case "/head":
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 85\r\n\r\n")
						later = injected
					case "/early":
						// Answered before the body is read; the body is
						// then read as the next request, on the same
						// connection.
						io.WriteString(c, answer(200, "early"))
						time.Sleep(5 * time.Millisecond)
						continue
					case "/SMUGGLED":
						io.WriteString(c, answer(200, "SMUGGLED"))
						sentUnasked <- struct{}{}
						continue
					default:
						io.Copy(io.Discard, req.Body)
						io.WriteString(c, answer(200, "own answer to "+req.URL.Path))
						continue
					}
					time.Sleep(5 * time.Millisecond)
					io.WriteString(c, later)
					sentUnasked <- struct{}{}
				}
			})
			sp := startSignpost(t, ticketsConfig, up)
			a, abr := dialSignpost(t, sp)
			res, _ := roundTrip(t, a, abr, tc.method, tc.raw)
			if res.StatusCode >= 300 && res.StatusCode != 304 {
				t.Fatalf("caller A got %d", res.StatusCode)
			}
			// After the upstream's second write, well within the time a
			// pooled connection is reused under load. (HTTP/1.1 cannot
			// tell bytes that arrive after a request was written from
			// its answer, for any proxy.)
			select {
			case <-sentUnasked:
			case <-time.After(waitTimeout):
				t.Fatal("the upstream never sent its bytes unasked")
			}
			time.Sleep(20 * time.Millisecond)
			res, body := getOn(t, sp, "/b")
			if res.StatusCode != 200 || body != "own answer to /b" {
				t.Errorf("caller B, on a connection of its own, got %d %q; want its own answer %q", res.StatusCode, body, "own answer to /b")
			}
		})
	}
}

// resettingUpstream counts the requests for path it receives. The first
// delivery of each is read (whole, or only its head) and the connection is
// then reset without an answer, as an upstream that crashes does; a second
// delivery would be answered 200. Anything else is answered at once.
func resettingUpstream(t *testing.T, path string, headOnly bool) (string, *atomic.Int32) {
	var seen atomic.Int32
	up := scriptedUpstream(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.URL.Path != path {
				io.Copy(io.Discard, req.Body)
				io.WriteString(c, answer(200, "warm"))
				continue
			}
			if !headOnly {
				io.Copy(io.Discard, req.Body)
			}
			if seen.Add(1) == 1 {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
				return
			}
			io.WriteString(c, answer(200, "done twice"))
		}
	})
	return up, &seen
}

// TestRequestsThatAreNotIdempotentAreSentOnce warms a pooled upstream
// connection with a GET, then sends a request that is not idempotent; the
// upstream reads it (whole, or only its head) and resets the connection
// without answering. A reset says only that the peer's socket is gone: the
// upstream may have acted on the request. Signpost must not send it again,
// as http.Transport does not, and must say the call may have taken effect.
func TestRequestsThatAreNotIdempotentAreSentOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, path, body string
		headOnly                 bool
	}{
		{"POST", "POST", "/notes", `{"note":"hi"}`, false},
		{"PATCH, its body read by signpost", "PATCH", "/tickets/T-1", `{"status":"open"}`, false},
		{"an empty POST", "POST", "/notes", "", false},
		{"POST, only its head read", "POST", "/notes", `{"note":"hi"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up, seen := resettingUpstream(t, tc.path, tc.headOnly)
			sp := startSignpost(t, ticketsConfig, up)
			c, br := dialSignpost(t, sp)
			if res, _ := roundTrip(t, c, br, "GET", "GET /warm HTTP/1.1\r\nHost: api\r\n\r\n"); res.StatusCode != 200 {
				t.Fatalf("warm-up GET: %d", res.StatusCode)
			}
			raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				tc.method, tc.path, len(tc.body), tc.body)
			res, body := roundTrip(t, c, br, tc.method, raw)
			if n := seen.Load(); n != 1 {
				t.Errorf("the upstream received the %s %d times; want once", tc.method, n)
			}
			var e struct {
				Error     string `json:"error"`
				Message   string `json:"message"`
				Retryable *bool  `json:"retryable"`
			}
			if json.Unmarshal([]byte(body), &e) != nil || res.StatusCode != 502 || e.Error != "upstream_unavailable" ||
				e.Retryable == nil || *e.Retryable || !strings.Contains(e.Message, "may or may not have taken effect") {
				t.Errorf("caller got %d %s; want 502 upstream_unavailable saying the call may have taken effect, not retryable", res.StatusCode, body)
			}
		})
	}
}

// TestAnIdempotentRequestIsSentAgainOnAFreshConnection: a GET on a pooled
// connection that the upstream resets after reading it is sent again, once,
// on a fresh connection, as http.Transport sends it again.
func TestAnIdempotentRequestIsSentAgainOnAFreshConnection(t *testing.T) {
	t.Parallel()
	up, seen := resettingUpstream(t, "/report", false)
	sp := startSignpost(t, ticketsConfig, up)
	c, br := dialSignpost(t, sp)
	roundTrip(t, c, br, "GET", "GET /warm HTTP/1.1\r\nHost: api\r\n\r\n")
	res, body := roundTrip(t, c, br, "GET", "GET /report HTTP/1.1\r\nHost: api\r\n\r\n")
	if res.StatusCode != 200 || body != "done twice" || seen.Load() != 2 {
		t.Errorf("got %d %q after %d deliveries; want the second delivery's 200", res.StatusCode, body, seen.Load())
	}
}

// TestACallerThatHalfClosesGetsAnAnswerSomebodyWrote: a caller sends its
// request and shuts its sending side while the upstream takes its time.
// Signpost cuts the call short, as net/http does when a caller leaves, but
// the caller is still reading: it must get an answer that says so, never
// a 200 that nobody wrote.
func TestACallerThatHalfClosesGetsAnAnswerSomebodyWrote(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(*http.Request, []byte) string {
		time.Sleep(200 * time.Millisecond)
		return answer(200, "slow")
	})
	sp := startSignpost(t, ticketsConfig, up)
	for _, raw := range []string{
		"GET /slow HTTP/1.1\r\nHost: api\r\n\r\n",
		"POST /slow HTTP/1.1\r\nHost: api\r\nContent-Length: 2\r\n\r\n{}",
	} {
		c, br := dialSignpost(t, sp)
		io.WriteString(c, raw)
		c.(*net.TCPConn).CloseWrite()
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			// Ending the connection unanswered would also be honest;
			// signpost answers.
			t.Errorf("%q: no answer: %v", clip([]byte(raw)), err)
			continue
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 499 || errorCode(string(body)) != "request_cancelled" {
			t.Errorf("%q, then a half-close: got %d %q; want 499 request_cancelled", clip([]byte(raw)), res.StatusCode, body)
		}
	}
}

// TestTheHeadGoesBeforeAStreamedBody sends a POST whose body trickles in
// over a second to an upstream that answers 401 on the head alone: the
// head must reach the upstream at once, as http.Transport flushes it, not
// wait for the body, and the upstream's early answer must reach the
// caller. (As net/http's server does, the front reads what is left of a
// small body before it answers, so that the connection can serve the next
// request.)
func TestTheHeadGoesBeforeAStreamedBody(t *testing.T) {
	t.Parallel()
	heads := make(chan time.Time, 1)
	up := scriptedUpstream(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		heads <- time.Now()
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 12\r\n\r\nunauthorized")
	})
	sp := startSignpost(t, ticketsConfig, up)
	c, br := dialSignpost(t, sp)
	sent := time.Now()
	io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: api\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n")
	go func() {
		for range 10 {
			time.Sleep(100 * time.Millisecond)
			if _, err := io.WriteString(c, "0123456789"); err != nil {
				return
			}
		}
	}()
	select {
	case at := <-heads:
		if d := at.Sub(sent); d > 400*time.Millisecond {
			t.Errorf("the head reached the upstream %v after it was sent; want it at once, before the body's 1 s", d.Round(time.Millisecond))
		}
	case <-time.After(waitTimeout):
		t.Fatal("the head never reached the upstream")
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if res.StatusCode != 401 {
		t.Errorf("caller got %d; want the upstream's 401", res.StatusCode)
	}
}

// TestAnUnfinishedMalformedHeadIsAnsweredAtOnce sends heads with a line
// net/http refuses as soon as it reads it, and no blank line after it: the
// answer must be an immediate 400, as net/http gives it, not silence until
// the header timeout.
func TestAnUnfinishedMalformedHeadIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	up := scriptedUpstream(t, func(c net.Conn, br *bufio.Reader) {})
	sp := startSignpost(t, ticketsConfig, up)
	for _, raw := range []string{
		"GET /f HTTP/1.1\r\nHost: api\r\n\x00\r\n",
		"GET /f HTTP/1.\r\nHost: api\r\n",
		"GET /f HTTP/1.1\r\nHost: api\r\nno colon here\r\n",
	} {
		c, br := dialSignpost(t, sp)
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		start := time.Now()
		io.WriteString(c, raw)
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != 400 {
			t.Errorf("%q: got %v after %v; want 400 at once (the header timeout is 10 s)", raw, statusOf(res, err), time.Since(start).Round(time.Millisecond))
		}
	}
}

func statusOf(res *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return res.Status
}

// TestAHandedOffConnectionIsShutBeforeItCloses sends a head larger than
// --max-header-bytes, which the front hands to net/http with the
// connection; net/http answers 431 and shuts its sending side before it
// closes, so that the caller reads the answer and a clean end rather than
// a reset over its unread bytes. The shut must reach the caller at once.
func TestAHandedOffConnectionIsShutBeforeItCloses(t *testing.T) {
	t.Parallel()
	up := scriptedUpstream(t, func(c net.Conn, br *bufio.Reader) {})
	sp := startSignpost(t, ticketsConfig, up, "--max-header-bytes", "4096")
	c, br := dialSignpost(t, sp)
	go io.WriteString(c, "GET /f HTTP/1.1\r\nHost: api\r\nX-Filler: "+strings.Repeat("f", 64<<10)+"\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 431 {
		t.Fatalf("got %v; want 431", statusOf(res, err))
	}
	answered := time.Now()
	_, err = io.ReadAll(res.Body)
	if err == nil {
		_, err = br.ReadByte()
	}
	if d := time.Since(answered); !errors.Is(err, io.EOF) || d > 250*time.Millisecond {
		t.Errorf("after the 431: %v after %v; want a clean end at once (net/http waits 500 ms before it closes)", err, d.Round(time.Millisecond))
	}
}

// TestTheAsteriskFormIsForOptionsAlone: "GET *" is refused with an
// actionable 400, and nothing reaches the upstream; "OPTIONS *" is
// answered by net/http, as it answers it.
func TestTheAsteriskFormIsForOptionsAlone(t *testing.T) {
	t.Parallel()
	var seen atomic.Int32
	up := respondingUpstream(t, func(*http.Request, []byte) string {
		seen.Add(1)
		return answer(200, "forwarded")
	})
	sp := startSignpost(t, ticketsConfig, up)
	c, br := dialSignpost(t, sp)
	res, body := roundTrip(t, c, br, "GET", "GET * HTTP/1.1\r\nHost: api\r\n\r\n")
	var e struct {
		Error, Field, Message string
		Received              any
	}
	if json.Unmarshal([]byte(body), &e) != nil || res.StatusCode != 400 || e.Error != "invalid_request_target" || e.Received != "*" ||
		!strings.Contains(e.Message, "e.g. GET /tickets/{ticket_id}") {
		t.Errorf("GET *: got %d %s; want 400 invalid_request_target, received \"*\", with an example path", res.StatusCode, body)
	}
	sp.waitLog(t, "refused a malformed request", map[string]any{"code": "invalid_request_target", "field": "request-target",
		"received": "*", "remote_addr": c.LocalAddr().String()})
	sp.wantCounter(t, 1, "signpost_requests_refused_total", "code", "invalid_request_target")
	if res, _ = roundTrip(t, c, br, "OPTIONS", "OPTIONS * HTTP/1.1\r\nHost: api\r\n\r\n"); res.StatusCode != 200 {
		t.Errorf("OPTIONS *: got %d; want net/http's 200", res.StatusCode)
	}
	if n := seen.Load(); n != 0 {
		t.Errorf("the upstream received %d requests in asterisk form; want none", n)
	}
}

// TestAStrayCRLFAfterAPostIsIgnored: a POST whose body is followed by a
// CRLF, as old clients send, then the next request: both are answered, as
// RFC 9112 section 2.2 asks and net/http does.
func TestAStrayCRLFAfterAPostIsIgnored(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(req *http.Request, body []byte) string {
		return answer(200, req.Method+" "+req.URL.Path+" "+string(body))
	})
	sp := startSignpost(t, ticketsConfig, up)
	c, br := dialSignpost(t, sp)
	io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: api\r\nContent-Length: 3\r\n\r\nabc\r\nGET /next HTTP/1.1\r\nHost: api\r\n\r\n")
	for _, want := range []string{"POST /upload abc", "GET /next "} {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("want an answer %q: %v", want, err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(body) != want {
			t.Errorf("got %d %q; want 200 %q", res.StatusCode, body, want)
		}
	}
}

// TestAnUpstreamStatusBelow100IsA502: an answer with status 099, which no
// caller can be sent, is answered 502 upstream_invalid_response, and the
// caller's connection serves its next request.
func TestAnUpstreamStatusBelow100IsA502(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(req *http.Request, _ []byte) string {
		if req.URL.Path == "/odd" {
			return "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"
		}
		return answer(200, "fine")
	})
	sp := startSignpost(t, ticketsConfig, up)
	c, br := dialSignpost(t, sp)
	res, body := roundTrip(t, c, br, "GET", "GET /odd HTTP/1.1\r\nHost: api\r\n\r\n")
	if res.StatusCode != 502 || errorCode(body) != "upstream_invalid_response" || !strings.Contains(body, "099") {
		t.Errorf("status 099: got %d %s; want 502 upstream_invalid_response naming the status", res.StatusCode, body)
	}
	if res, body = roundTrip(t, c, br, "GET", "GET /next HTTP/1.1\r\nHost: api\r\n\r\n"); res.StatusCode != 200 || body != "fine" {
		t.Errorf("the next request on the connection: %d %q", res.StatusCode, body)
	}
	if strings.Contains(sp.stderr.String(), "panic") {
		t.Errorf("signpost panicked:\n%s", sp.stderr)
	}
}

// TestHTTP10WithTransferEncodingIsRefused: net/http ignores
// Transfer-Encoding on an HTTP/1.0 request and frames its body by
// Content-Length; another server before or after signpost may not. As the
// edge in front of a legacy API signpost refuses it, as nginx does, with a
// 400 naming the field, and closes the connection. Behind a request the
// front handed to net/http, where it cannot see the head, the connection
// ends after the HTTP/1.0 request instead: what follows it is never read
// as a request.
func TestHTTP10WithTransferEncodingIsRefused(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	up := respondingUpstream(t, func(req *http.Request, _ []byte) string {
		mu.Lock()
		seen = append(seen, req.Method+" "+req.URL.Path)
		mu.Unlock()
		return answer(200, "ok")
	})
	sp := startSignpost(t, ticketsConfig, up)
	const smuggled = "GET /smuggled HTTP/1.1\r\nHost: api\r\n\r\n"
	const http10 = "POST /upload HTTP/1.0\r\nHost: api\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n" + smuggled

	c, br := dialSignpost(t, sp)
	res, body := roundTrip(t, c, br, "POST", http10)
	var e struct {
		Error, Field string
		Received     any
	}
	if json.Unmarshal([]byte(body), &e) != nil || res.StatusCode != 400 || e.Error != "invalid_framing" ||
		e.Field != "Transfer-Encoding" || e.Received != "chunked" {
		t.Errorf("HTTP/1.0 with Transfer-Encoding: got %d %s; want 400 invalid_framing naming the field and its value", res.StatusCode, body)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the connection stayed open after the refusal")
	}

	// A head over the front's 4 KiB first: the front hands the connection
	// to net/http, which reads the HTTP/1.0 request after it.
	c, br = dialSignpost(t, sp)
	if res, _ := roundTrip(t, c, br, "GET", "GET /big HTTP/1.1\r\nHost: api\r\nX-Filler: "+strings.Repeat("f", 5000)+"\r\n\r\n"); res.StatusCode != 200 {
		t.Fatalf("a large head: %d", res.StatusCode)
	}
	roundTrip(t, c, br, "POST", http10)
	if _, err := http.ReadResponse(br, nil); err == nil {
		t.Error("an answer came after the HTTP/1.0 request: its body was read as a request")
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if s == "GET /smuggled" {
			t.Errorf("the upstream received the request in the HTTP/1.0 request's body; it received %q", seen)
		}
	}
}
