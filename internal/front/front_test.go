package front

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/httpwire"
)

// frontHandler answers by path, exercising what a handler may do with a
// ResponseWriter, and says in X-Served-By whether net/http served it.
func frontHandler(w http.ResponseWriter, r *http.Request) {
	by := "net/http"
	if _, ok := w.(*frontResponse); ok {
		by = "front"
	}
	w.Header().Set("X-Served-By", by)
	switch r.URL.Path {
	case "/small":
		io.WriteString(w, "small body")
	case "/html":
		io.WriteString(w, "<!DOCTYPE html><html><body>sniffed</body></html>")
	case "/large":
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("0123456789", 1000)))
	case "/length":
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "fives")
	case "/short":
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "five!")
	case "/over":
		w.Header().Set("Content-Length", "3")
		_, err := io.WriteString(w, "four")
		w.Header().Set("X-Late", "ignored")
		fmt.Fprint(w, errors.Is(err, http.ErrContentLength))
	case "/nocontent":
		w.WriteHeader(http.StatusNoContent)
		_, err := io.WriteString(w, "dropped")
		w.Header().Set("X-Err", fmt.Sprint(err))
	case "/notmodified":
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "7")
		w.WriteHeader(http.StatusNotModified)
	case "/flush":
		io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		io.WriteString(w, "second")
	case "/trailer":
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "with trailers")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	case "/early":
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "after hints")
	case "/close":
		w.Header().Set("Connection", "close")
		io.WriteString(w, "closing")
	case "/echo":
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %q %v", len(b), clipString(string(b)), err)
	case "/ignore":
		io.WriteString(w, "body ignored")
	case "/emptyencoding":
		// An empty Content-Encoding is none: the type is still sniffed.
		w.Header()["Content-Encoding"] = []string{""}
		io.WriteString(w, "<!DOCTYPE html><html><body>sniffed</body></html>")
	case "/context":
		// The keys net/http's server sets, which handlers such as
		// httputil.ReverseProxy read.
		_, isServer := r.Context().Value(http.ServerContextKey).(*http.Server)
		_, isAddr := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		fmt.Fprintf(w, "server %v, local address %v", isServer, isAddr)
	case "/headers":
		// What the handler sees of the request: every field, the query,
		// the length and whether it asked to close.
		var lines []string
		for k, vv := range r.Header {
			lines = append(lines, k+"="+strings.Join(vv, ","))
		}
		slices.Sort(lines)
		fmt.Fprintf(w, "%s %q %d %v %s", r.Method, r.URL.RawQuery, r.ContentLength, r.Close, strings.Join(lines, ";"))
	case "/status":
		w.WriteHeader(599)
	case "/newline":
		w.Header()["X-Bad"] = []string{"a\r\nInjected: yes"}
		w.Header()["Bad Name"] = []string{"dropped"}
		io.WriteString(w, "ok")
	case "/latetrailer":
		w.Write([]byte(strings.Repeat("t", 5000)))
		w.Header().Set(http.TrailerPrefix+"X-Sum", "abc")
	case "/sniffsplit", "/sniffsplitlength":
		if r.URL.Path == "/sniffsplitlength" {
			w.Header().Set("Content-Length", "3006")
		}
		io.WriteString(w, "      ")
		io.WriteString(w, "<html>"+strings.Repeat("x", 2994))
	case "/abort":
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	default:
		http.NotFound(w, r)
	}
}

func clipString(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// startFront serves h on a front over loopback and returns its address.
func startFront(t *testing.T, h http.Handler) (string, *Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String(), s
}

// startNetHTTP serves h on a plain net/http server over loopback.
func startNetHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

// exchangeRaw writes raw on a new connection to addr and reads every
// response until the connection closes or goes quiet, each as its status
// line, header fields but Date and X-Served-By sorted, body and trailers.
func exchangeRaw(t *testing.T, addr, raw string) (answers []string, by []string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		req, _ := http.NewRequest(methodOf(raw, len(answers)), "/", nil)
		res, err := http.ReadResponse(br, req)
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, io.EOF), errors.As(err, &ne) && ne.Timeout():
				if errors.Is(err, io.EOF) {
					answers = append(answers, "closed")
				}
			default:
				answers = append(answers, "error: "+err.Error())
			}
			return answers, by
		}
		body, err := io.ReadAll(res.Body)
		var lines []string
		for k, vv := range res.Header {
			if k == "Date" || k == "X-Served-By" {
				continue
			}
			lines = append(lines, k+": "+strings.Join(vv, ", "))
		}
		slices.Sort(lines)
		var trailers []string
		for k, vv := range res.Trailer {
			trailers = append(trailers, k+": "+strings.Join(vv, ", "))
		}
		slices.Sort(trailers)
		answers = append(answers, fmt.Sprintf("%s %s\n%s\n\n%q %v chunked=%v length=%d trailers=%v",
			res.Proto, res.Status, strings.Join(lines, "\n"), body, err, slices.Contains(res.TransferEncoding, "chunked"), res.ContentLength, trailers))
		if b := res.Header.Get("X-Served-By"); b != "" {
			by = append(by, b)
		}
	}
}

// methodOf returns the method of the i-th request in raw, so that the
// answer to a HEAD is read without a body.
func methodOf(raw string, i int) string {
	methods := []string{}
	for _, line := range strings.Split(raw, "\n") {
		for _, m := range []string{"GET ", "HEAD ", "POST ", "PUT ", "PATCH ", "OPTIONS "} {
			if strings.HasPrefix(line, m) {
				methods = append(methods, strings.TrimSpace(m))
			}
		}
	}
	if i < len(methods) {
		return methods[i]
	}
	return "GET"
}

// TestFrontAnswersAsNetHTTP sends the same bytes to the front and to a
// plain net/http server with the same handler: every answer must be the
// same, field for field, and each request must be served by the front, or
// handed to net/http, as expected.
func TestFrontAnswersAsNetHTTP(t *testing.T) {
	h := http.HandlerFunc(frontHandler)
	front, _ := startFront(t, h)
	plain := startNetHTTP(t, h)
	get := func(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: example.test\r\n\r\n" }
	big := strings.Repeat("b", 300<<10)
	tests := []struct {
		name   string
		raw    string
		served string // who answers each request: "front" or "net/http"
	}{
		{"small body gets a length", get("/small"), "front"},
		{"sniffed type", get("/html"), "front"},
		{"large body is chunked", get("/large"), "front"},
		{"declared length", get("/length"), "front"},
		{"fewer bytes than declared closes", get("/short") + get("/small"), "front"},
		{"more bytes than declared", get("/over"), "front"},
		{"204 has no body", get("/nocontent"), "front"},
		{"304 drops type and length", get("/notmodified"), "front"},
		{"flush goes chunked", get("/flush"), "front"},
		{"trailers", get("/trailer"), "front"},
		{"early hints", get("/early"), "front front"},
		{"handler closes", get("/close") + get("/small"), "front"},
		{"unknown status", get("/status"), "front"},
		{"header values cleaned", get("/newline"), "front"},
		{"not found", get("/nowhere"), "front"},
		{"keep-alive", get("/small") + get("/length") + get("/large"), "front front front"},
		{"context keys", get("/context"), "front"},
		{"empty content encoding", get("/emptyencoding"), "front"},
		{"close among other tokens", "GET /small HTTP/1.1\r\nHost: a\r\nConnection: keep-alive close\r\n\r\n" + get("/small"), "front"},
		{"host with user info", "GET /small HTTP/1.1\r\nHost: user@example.test\r\n\r\n", ""},
		{"each request of a connection has its own fields", "POST /headers?a=1 HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nX-B: 2\r\nX-B: 3\r\nContent-Length: 2\r\n\r\nhi" +
			"GET /headers HTTP/1.1\r\nHost: b\r\nX-C: 4\r\n\r\n" + get("/headers") +
			"GET /headers HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-Many: m\r\n", 40) + "\r\n" + get("/headers"), "front front front front front"},
		{"HEAD", "HEAD /small HTTP/1.1\r\nHost: a\r\n\r\n" + get("/length"), "front front"},
		{"HEAD of a declared length", "HEAD /length HTTP/1.1\r\nHost: a\r\n\r\n", "front"},
		{"caller asks to close", "GET /small HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" + get("/small"), "front"},
		{"body read", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + get("/small"), "front front"},
		{"body ignored, drained", "POST /ignore HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + get("/small"), "front front"},
		{"large body ignored closes", "POST /ignore HTTP/1.1\r\nHost: a\r\nContent-Length: " + fmt.Sprint(len(big)) + "\r\n\r\n" + big, "front"},
		{"large body read", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: " + fmt.Sprint(len(big)) + "\r\n\r\n" + big + get("/small"), "front front"},
		{"trailer set after the header went out", get("/latetrailer"), "front"},
		{"type sniffed across writes", get("/sniffsplit"), "front"},
		{"type sniffed across writes, length declared", get("/sniffsplitlength"), "front"},
		{"caller closes, its body not sent", "POST /ignore HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 10\r\n\r\n", "front"},
		{"bad content length", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n", ""},
		{"two content lengths", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", ""},
		{"HTTP/1.0", "GET /small HTTP/1.0\r\n\r\n", "net/http"},
		{"chunked request", "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "net/http"},
		{"expect", "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello", "net/http"},
		{"absolute form", "GET http://a/small HTTP/1.1\r\nHost: a\r\n\r\n", "net/http"},
		{"asterisk form", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", ""}, // net/http answers it itself
		{"bare LF", "GET /small HTTP/1.1\nHost: a\n\n", "net/http"},
		{"missing host", "GET /small HTTP/1.1\r\n\r\n", ""},
		{"two hosts", "GET /small HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", ""},
		{"malformed host", "GET /small HTTP/1.1\r\nHost: a b\r\n\r\n", ""},
		{"space before colon", "GET /small HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n", ""},
		{"control byte in a value", "GET /small HTTP/1.1\r\nHost: a\r\nX-A: a\x01b\r\n\r\n", ""},
		{"headers over the buffer", "GET /small HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("x", 5000) + "\r\n\r\n", "net/http"},
		{"upgrade", "GET /small HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", "net/http"},
		{"served, then handed off", get("/small") + "GET /small HTTP/1.0\r\n\r\n", "front net/http"},
		{"head cut short", "GET /small HTTP/1.1\r\nHost: a\r\nX-A:", ""},
		{"a CRLF after a POST's body", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\r\n" + get("/small"), "front front"},
		{"four CR or LF after a POST's body", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\r\n\n\r" + get("/small"), "front front"},
		{"five CR or LF after a POST's body", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n\n" + get("/small"), "front"},
		{"a CRLF after a GET", get("/small") + "\r\n" + get("/small"), "front"},
		{"an unfinished head with a NUL line", "GET /small HTTP/1.1\r\nHost: a\r\n\x00\r\n", ""},
		{"an unfinished head with a bad version", "GET /small HTTP/1.\r\nHost: a\r\n", ""},
		{"an unfinished head with a bad escape in its target", "GET /small%0 HTTP/1.1\r\n", ""},
		{"an unfinished head with a line without a colon", "GET /small HTTP/1.1\r\nHost: a\r\nno colon\r\n", ""},
		{"an unfinished head in HTTP/1.0", "GET /small HTTP/1.0\r\nHost: a\r\n", ""},
		{"garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, _ := exchangeRaw(t, plain, tt.raw)
			got, by := exchangeRaw(t, front, tt.raw)
			if !slices.Equal(got, want) {
				t.Errorf("the front answered\n%s\nnet/http answered\n%s", strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n"))
			}
			if served := strings.Join(by, " "); served != tt.served {
				t.Errorf("served by %q, want %q", served, tt.served)
			}
		})
	}
}

func TestFrontAbortCutsTheResponse(t *testing.T) {
	front, _ := startFront(t, http.HandlerFunc(frontHandler))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /abort HTTP/1.1\r\nHost: a\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	if string(body) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("body %q, %v; want the partial body cut short", body, err)
	}
}

// TestFrontNoticesTheCallerLeaving has a handler wait on its context: the
// caller hanging up must cancel it.
func TestFrontNoticesTheCallerLeaving(t *testing.T) {
	cancelled := make(chan error, 1)
	front, _ := startFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran := make(chan struct{})
		context.AfterFunc(r.Context(), func() { close(ran) })
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		select {
		case <-ran:
			cancelled <- r.Context().Err()
		case <-time.After(time.Second):
			cancelled <- errors.New("a function given to context.AfterFunc did not run")
		}
	}))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(2 * watchAfter)
	c.Close()
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("context ended with %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the request's context was not cancelled 2s after the caller left")
	}
}

// TestFrontKeepsWhatTheWatchRead sends the next request while the first is
// still served, past watchAfter: the byte the watch reads belongs to it.
func TestFrontKeepsWhatTheWatchRead(t *testing.T) {
	front, _ := startFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(5 * watchAfter)
		}
		io.WriteString(w, r.URL.Path)
	}))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
	time.Sleep(2 * watchAfter)
	io.WriteString(c, "GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	for _, want := range []string{"/slow", "/next"} {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the answer to %s: %v", want, err)
		}
		body, _ := io.ReadAll(res.Body)
		if string(body) != want {
			t.Errorf("answer %q, want %q", body, want)
		}
	}
}

// TestFrontShutdown closes an idle connection at once, lets a request in
// flight finish with Connection: close, and returns when both are done.
func TestFrontShutdown(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Bool
	front, s := startFront(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started.Store(true)
			<-release
		}
		io.WriteString(w, "done")
	}))
	idle, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n")
	idleBR := bufio.NewReader(idle)
	if res, err := http.ReadResponse(idleBR, nil); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, res.Body)
	}
	busy, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
	for !started.Load() {
		time.Sleep(time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()

	idle.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := idleBR.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the idle connection: read %v, want EOF", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	busy.SetReadDeadline(time.Now().Add(2 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Close {
		t.Error("the answer in flight at shutdown lacks Connection: close")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Shutdown did not return once the request finished")
	}
	if _, err := net.DialTimeout("tcp", front, time.Second); err == nil {
		t.Error("the listener still accepts connections after Shutdown")
	}
}

// requestHeads are request heads, the plain kind the front parses and
// every kind it hands to net/http.
var requestHeads = []struct {
	name, raw string
	parsed    bool
}{
	{"plain GET", "GET /tickets/T-1 HTTP/1.1\r\nHost: example.test\r\nUser-Agent: x\r\n\r\n", true},
	{"query", "GET /tickets?status=open&x=%20y HTTP/1.1\r\nHost: a:8080\r\n\r\n", true},
	{"body", "PATCH /tickets/T-1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n", true},
	{"close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n", true},
	{"repeated and lower-case fields", "GET / HTTP/1.1\r\nhost: a\r\nx-a: 1\r\nX-A: 2\r\naccept:  */* \r\n\r\n", true},
	{"escaped path", "GET /caf%C3%A9/a%2Fb HTTP/1.1\r\nHost: a\r\n\r\n", true},
	{"extension method", "PURGE /x HTTP/1.1\r\nHost: a\r\n\r\n", true},
	{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\n\r\n", false},
	{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\n", false},
	{"no host", "GET / HTTP/1.1\r\n\r\n", false},
	{"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", false},
	{"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", false},
	{"bad host", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", false},
	{"chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	{"two lengths", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", false},
	{"signed length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", false},
	{"expect", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", false},
	{"pragma", "GET / HTTP/1.1\r\nHost: a\r\nPragma: no-cache\r\n\r\n", false},
	{"absolute form", "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", false},
	{"folded", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", false},
	{"space before colon", "GET / HTTP/1.1\r\nHost: a\r\nX-A : 1\r\n\r\n", false},
	{"bad method", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", false},
	{"two spaces", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", false},
	{"lone CR", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r2\r\n\r\n", false},
	{"empty", "\r\n", false},
}

func TestParseHead(t *testing.T) {
	for _, tt := range requestHeads {
		t.Run(tt.name, func(t *testing.T) {
			if parsed := compareHeadParses(t, tt.raw); parsed != tt.parsed {
				t.Errorf("parsed: %v, want %v", parsed, tt.parsed)
			}
		})
	}
}

// testHead is the head every parse of compareHeadParses writes over, as a
// connection's requests do: what one head leaves in it must not show in the
// next.
var testHead = func() (h reusedHead) { h.init(context.Background()); return h }()

// compareHeadParses parses raw with parseHead and, where it parses, with
// http.ReadRequest and the checks net/http's server adds: both must read
// the same request.
func compareHeadParses(t *testing.T, raw string) bool {
	t.Helper()
	end, crlf := httpwire.HeadEnd([]byte(raw))
	if end == 0 || !crlf {
		return false
	}
	got, err := parseHead([]byte(raw[:end]), 1<<20, &testHead)
	if err != nil {
		return false
	}
	want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw[:end])))
	if err != nil {
		t.Fatalf("parseHead parsed what http.ReadRequest refuses: %v", err)
	}
	for k, vv := range want.Header {
		for _, v := range vv {
			if !httpwire.ValidFieldName(k) || strings.ContainsAny(v, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f") {
				t.Fatalf("parseHead parsed a field net/http's server refuses: %q: %q", k, v)
			}
		}
	}
	type view struct {
		Method, URL, Proto, Host, RequestURI string
		Header                               http.Header
		ContentLength                        int64
		Close                                bool
	}
	see := func(r *http.Request) view {
		return view{r.Method, r.URL.String(), r.Proto, r.Host, r.RequestURI, r.Header, r.ContentLength, r.Close}
	}
	if g, w := see(got), see(want); !reflect.DeepEqual(g, w) {
		t.Errorf("parseHead read\n%+v\nhttp.ReadRequest read\n%+v", g, w)
	}
	return true
}

// FuzzParseHead checks that whatever parseHead parses, net/http parses the
// same.
func FuzzParseHead(f *testing.F) {
	for _, tt := range requestHeads {
		f.Add(tt.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		compareHeadParses(t, raw)
	})
}

// TestFrontTimeouts checks that a connection idle past the idle timeout is
// closed, and that a head started but not finished is closed at the header
// timeout, on a connection's first request and on a later one.
func TestFrontTimeouts(t *testing.T) {
	const header, idle = 300 * time.Millisecond, 2 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{Handler: http.HandlerFunc(frontHandler), ReadHeaderTimeout: header,
		IdleTimeout: idle, ErrorLog: log.New(io.Discard, "", 0)})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	addr := ln.Addr().String()
	request := "GET /small HTTP/1.1\r\nHost: a\r\n\r\n"

	// closedAfter writes send, answered first by the answers to the whole
	// requests in it, and reports how long the connection then took to close.
	closedAfter := func(t *testing.T, send string, answers int) time.Duration {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		io.WriteString(c, send)
		c.SetReadDeadline(time.Now().Add(3 * idle))
		br := bufio.NewReader(c)
		for range answers {
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			start = time.Now()
		}
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("read %v, want the connection closed", err)
		}
		return time.Since(start)
	}
	tests := []struct {
		name     string
		send     string
		answers  int
		min, max time.Duration
	}{
		{"idle after a request", request, 1, idle - 100*time.Millisecond, idle + time.Second},
		{"first head unfinished", "GET /small HTTP/1.1\r\nHo", 0, header - 100*time.Millisecond, header + time.Second},
		{"later head unfinished", request + "GET /small HT", 1, header - 100*time.Millisecond, header + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if d := closedAfter(t, tt.send, tt.answers); d < tt.min || d > tt.max {
				t.Errorf("closed after %v, want between %v and %v", d, tt.min, tt.max)
			}
		})
	}
}

// TestFrontReadTimeoutCountsFromTheHead sends a head in two parts and its
// body after the read timeout has passed since the head began, though not
// since it ended: as net/http's server does, the front must count the
// timeout from the head's start, and the body must not be read whole.
func TestFrontReadTimeoutCountsFromTheHead(t *testing.T) {
	const timeout, step = 600 * time.Millisecond, 400 * time.Millisecond
	for _, server := range []string{"front", "net/http"} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(frontHandler), ReadTimeout: timeout, ErrorLog: log.New(io.Discard, "", 0)}
			if server == "front" {
				s := New(srv)
				go s.Serve(ln)
				t.Cleanup(func() { s.Close() })
			} else {
				go srv.Serve(ln)
				t.Cleanup(func() { srv.Close() })
			}
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, part := range []string{"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n", "\r\n", "hello"} {
				if _, err := io.WriteString(c, part); err != nil {
					break // the server may have closed already
				}
				time.Sleep(step)
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			answer, _ := io.ReadAll(c)
			if strings.Contains(string(answer), `5 "hello" <nil>`) {
				t.Errorf("the body, sent %v after the head began, was read whole; the read timeout is %v:\n%s", 2*step, timeout, answer)
			}
		})
	}
}

// postLate serves h on the front or on net/http, and sends it a POST whose
// five-byte body follows its head after late; it returns the connection.
func postLate(t *testing.T, server string, h http.Handler, late time.Duration) net.Conn {
	t.Helper()
	c := dialServed(t, server, h)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n")
	time.Sleep(late)
	io.WriteString(c, "hello")
	return c
}

// TestFrontWatchWaitsForTheBody has a caller send its body after the watch
// would first look, then leave while the handler waits: the front must
// watch once the body is read, and cancel the request's context, as
// net/http's server does.
func TestFrontWatchWaitsForTheBody(t *testing.T) {
	for _, server := range []string{"front", "net/http"} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			seen := make(chan string, 1)
			c := postLate(t, server, readThenAwaitLeaving(seen), 3*watchAfter)
			time.Sleep(3 * watchAfter)
			c.Close()
			if got := <-seen; got != "canceled" {
				t.Errorf("the caller left after sending its body late; the handler's context was %s", got)
			}
		})
	}
}

// dialServed serves h on the front or on net/http, and returns a
// connection to it.
func dialServed(t *testing.T, server string, h http.Handler) net.Conn {
	t.Helper()
	var addr string
	if server == "front" {
		addr, _ = startFront(t, h)
	} else {
		addr = startNetHTTP(t, h)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readThenAwaitLeaving reads the request's body, then says on seen
// whether its context was canceled, the caller having left, within 2s.
func readThenAwaitLeaving(seen chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
			seen <- "canceled"
		case <-time.After(2 * time.Second):
			seen <- "not canceled within 2s"
		}
	})
}

// TestFrontClosesWithoutAResetOverAnUnreadBody has a handler ask to close
// and leave unread a small body that came after the head: the caller must
// read the answer and then the end of the connection, not a reset, on the
// front as on net/http.
func TestFrontClosesWithoutAResetOverAnUnreadBody(t *testing.T) {
	for _, server := range []string{"front", "net/http"} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(100 * time.Millisecond) // the body is in by now, unread
				w.Header().Set("Connection", "close")
				io.WriteString(w, "denied")
			})
			c := postLate(t, server, h, 30*time.Millisecond)
			defer c.Close()
			time.Sleep(300 * time.Millisecond) // the answer, and what follows it, are in
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			b, err := io.ReadAll(c)
			if err != nil || !strings.Contains(string(b), "denied") {
				t.Errorf("read %q, %v; want the answer, then the end of the connection", b, err)
			}
		})
	}
}

// TestFrontWatchOutlivesTheHeaderDeadline has a caller leave after its
// request's header deadline passed: the handler must still see it go.
func TestFrontWatchOutlivesTheHeaderDeadline(t *testing.T) {
	cancelled := make(chan bool, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
				cancelled <- true
			case <-time.After(3 * time.Second):
				cancelled <- false
			}
		})})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: a\r\n")
	time.Sleep(50 * time.Millisecond) // the head arrives in two parts: a header deadline is set
	io.WriteString(c, "\r\n")
	time.Sleep(600 * time.Millisecond)
	c.Close()
	if !<-cancelled {
		t.Error("the caller left after the header deadline and the handler never saw it")
	}
}

// TestFrontBodyReadByAnotherGoroutine puts httputil.ReverseProxy, whose
// Transport reads the request body on a goroutine of its own, in front of
// an upstream that answers before it reads the body, which arrives in two
// parts: the answer must come, and the body's reads must not race the
// front's (run with -race). Whether the front or the Transport reads the
// rest first decides what becomes of the connection: drained, it serves
// the next request; read elsewhere, it ends after the answer.
func TestFrontBodyReadByAnotherGoroutine(t *testing.T) {
	up := startNetHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "early")
	}))
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: up})
	rp.ErrorLog = log.New(io.Discard, "", 0)
	front, _ := startFront(t, rp)
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /early HTTP/1.1\r\nHost: a\r\nContent-Length: 20\r\n\r\n0123456789")
	rest := time.AfterFunc(50*time.Millisecond, func() { io.WriteString(c, "abcdefghij") })
	defer rest.Stop()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if b, _ := io.ReadAll(res.Body); string(b) != "early" {
		t.Errorf("answer %q, want early", b)
	}
	if res.Close {
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("after an answer saying close: %v, want the connection closed", err)
		}
		return
	}
	time.Sleep(100 * time.Millisecond) // the rest of the body is in
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if res, err := http.ReadResponse(br, nil); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("the next request on a connection kept open: %v", err)
	}
}

// TestLinesServable: an unfinished head is handed to net/http as soon as
// one of its complete lines is not of the kind the front parses, so that
// net/http answers a malformed line at once, as it does.
func TestLinesServable(t *testing.T) {
	for _, tc := range []struct {
		buf  string
		want bool
	}{
		{"", true},
		{"GET /a HTTP/1.1", true}, // the line is not complete yet
		{"GET /a HTTP/1.1\r\n", true},
		{"GET /a HTTP/1.1\r\nHost: a\r\nX-A: b", true},
		{"GET /a HTTP/1.1\r\nHost: a\r\nX-A: b\r\n", true},
		{"GET /a HTTP/1.1\r\nHost: a\r\n\x00\r\n", false},
		{"GET /a HTTP/1.\r\n", false},
		{"GET /a HTTP/1.0\r\n", false},
		{"GET * HTTP/1.1\r\n", false},
		{"GET /a HTTP/1.1\n", false},
		{"GET /a HTTP/1.1\r\nHost: a\n", false},
		{"GET /a HTTP/1.1\r\nno colon\r\n", false},
		{"GET /a HTTP/1.1\r\nBad Name: v\r\n", false},
		{"GET /a HTTP/1.1\r\n folded\r\n", false},
		{"GET /a HTTP/1.1\r\nX-A: a\x01b\r\n", false},
		{"GET /a%0 HTTP/1.1\r\n", false},
		{"GET /a%0", true},
	} {
		if got := linesServable([]byte(tc.buf)); got != tc.want {
			t.Errorf("linesServable(%q) = %v, want %v", tc.buf, got, tc.want)
		}
	}
}

// TestHTTP10TransferEncoding finds a Transfer-Encoding field in the
// complete lines of an HTTP/1.0 head, named as net/http reads names.
func TestHTTP10TransferEncoding(t *testing.T) {
	for _, tc := range []struct {
		head, want string
		ok         bool
	}{
		{"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "chunked", true},
		{"POST / HTTP/1.0\r\nHost: a\r\ntransfer-encoding:  gzip, chunked \r\n\r\n", "gzip, chunked", true},
		{"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked", "", false}, // the line is not complete
		{"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n", "chunked", true},
		{"POST / HTTP/1.0\r\nHost: a\r\n\r\nTransfer-Encoding: chunked\r\n", "", false}, // in the body
		{"POST / HTTP/1.0\r\nTransfer_Encoding: chunked\r\n\r\n", "", false},
		{"POST / HTTP/1.0\r\nTransfer-Encoding : chunked\r\n\r\n", "", false}, // net/http refuses the line
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "", false},
		{"POST / HTTP/1.0", "", false},
	} {
		got, ok := http10TransferEncoding([]byte(tc.head))
		if got != tc.want || ok != tc.ok {
			t.Errorf("http10TransferEncoding(%q) = %q, %v; want %q, %v", tc.head, got, ok, tc.want, tc.ok)
		}
	}
}

// TestFrontRefusesHTTP10WithTransferEncoding: net/http drops the field and
// frames the body by its length; the front answers 400, naming the field,
// and ends the connection, so that the body is never read as a request.
// Without the field, the request is net/http's, as before.
func TestFrontRefusesHTTP10WithTransferEncoding(t *testing.T) {
	var served atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "served")
	})
	front, _ := startFront(t, h)
	const smuggling = "POST /a HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n"
	answers, _ := exchangeRaw(t, front, smuggling)
	if len(answers) != 2 || !strings.HasPrefix(answers[0], "HTTP/1.1 400 Bad Request\n") || strings.HasPrefix(answers[1], "HTTP/") ||
		!strings.Contains(answers[0], "Content-Type: text/plain; charset=utf-8") || !strings.Contains(answers[0], "Transfer-Encoding: an HTTP/1.0 request cannot carry") {
		t.Errorf("answers %q; want one 400 in plain text naming the field, then the connection closed", answers)
	}
	// With a Refusal of its own, the server's body is the refusal's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)})
	s.Refuse = func(r Refused) (string, []byte) {
		return "application/json", []byte(`{"field":"` + r.Field + `","received":"` + r.Value + `"}`)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	answers, _ = exchangeRaw(t, ln.Addr().String(), smuggling)
	if len(answers) != 2 || !strings.Contains(answers[0], "Content-Type: application/json") ||
		!strings.Contains(answers[0], `{\"field\":\"Transfer-Encoding\",\"received\":\"chunked\"}`) {
		t.Errorf("answers %q; want the refusal's JSON body", answers)
	}
	if n := served.Load(); n != 0 {
		t.Errorf("the handler served %d requests; want none", n)
	}
	if answers, _ := exchangeRaw(t, front, "GET /a HTTP/1.0\r\n\r\n"); len(answers) < 1 || !strings.Contains(answers[0], "200 OK") {
		t.Errorf("HTTP/1.0 without the field: %q; want it served", answers)
	}
}

// TestHeadSeen: the first request of a connection handed off was seen by
// the front when its whole head was; the requests after it never were.
func TestHeadSeen(t *testing.T) {
	var mu sync.Mutex // the requests are served one after another, but by the front's goroutines and net/http's
	var seen []bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, HeadSeen(r))
	})
	front, _ := startFront(t, h)
	exchangeRaw(t, front, "GET /a HTTP/1.1\r\nHost: a\r\n\r\n")
	exchangeRaw(t, front, "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	exchangeRaw(t, front, "GET /a HTTP/1.1\r\nHost: a\r\nX-Big: "+strings.Repeat("x", 5000)+"\r\n\r\n")
	mu.Lock()
	defer mu.Unlock()
	if want := []bool{true, true, false, false}; !slices.Equal(seen, want) {
		t.Errorf("head seen by the front: %v, want %v (served; handed off, then after it; handed off unseen)", seen, want)
	}
}

// TestHandedOffConnectionsShutTheirSendingSide: net/http shuts the sending
// side of a connection before it closes one over unread bytes, as after a
// 431, so that the caller reads the answer and its end, not a reset.
func TestHandedOffConnectionsShutTheirSendingSide(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{Handler: http.HandlerFunc(frontHandler), MaxHeaderBytes: 1024, ErrorLog: log.New(io.Discard, "", 0)})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	go io.WriteString(c, "GET /small HTTP/1.1\r\nHost: a\r\nX-Big: "+strings.Repeat("x", 64<<10)+"\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("got %v, %v; want 431", res, err)
	}
	answered := time.Now()
	_, err = io.ReadAll(br)
	if d := time.Since(answered); err != nil || d > 250*time.Millisecond {
		t.Errorf("after the 431: %v after %v; want the end at once (net/http closes 500 ms later)", err, d.Round(time.Millisecond))
	}
	time.Sleep(lingerDelay + 100*time.Millisecond) // for net/http's wait to end
}

// TestFrontWaitsForABodyWithoutPolling has a caller send a head and hold
// back its body: while the handler waits for it, nothing on the connection
// may wake (no watch timer pending), as net/http's server waits; once the
// body comes, the watch must begin, and see the caller leave.
func TestFrontWaitsForABodyWithoutPolling(t *testing.T) {
	seen := make(chan string, 1)
	addr, s := startFront(t, readThenAwaitLeaving(seen))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /late HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n")
	time.Sleep(10 * watchAfter)
	s.mu.Lock()
	pending := 0
	for fc := range s.conns {
		fc.mu.Lock()
		if fc.timer != nil && fc.timer.Stop() {
			pending++ // stopped here: the watch is started below by the body's end
		}
		fc.mu.Unlock()
	}
	s.mu.Unlock()
	if pending > 0 {
		t.Errorf("%d watch timers pending %v into a wait for the body; want none: the wait must not poll", pending, 10*watchAfter)
	}
	io.WriteString(c, "hello")
	time.Sleep(3 * watchAfter)
	c.Close()
	if got := <-seen; got != "canceled" {
		t.Errorf("the caller left after its late body; the handler's context was %s", got)
	}
}

// TestFrontBodyReadDeadline: a handler bounds the wait for a body with
// http.ResponseController, on the front as on net/http: a body that does
// not come in time fails the read with a timeout.
func TestFrontBodyReadDeadline(t *testing.T) {
	for _, server := range []string{"front", "net/http"} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			got := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rc := http.NewResponseController(w)
				if err := rc.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
					got <- err
					return
				}
				_, err := io.ReadAll(r.Body)
				got <- err
				w.Header().Set("Connection", "close")
				w.WriteHeader(http.StatusRequestTimeout)
			})
			c := dialServed(t, server, h)
			defer c.Close()
			io.WriteString(c, "POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhe")
			var ne net.Error
			select {
			case err := <-got:
				if !errors.As(err, &ne) || !ne.Timeout() {
					t.Fatalf("reading a body that stopped: %v; want a timeout", err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the body's read outlived its deadline by seconds")
			}
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if err != nil || res.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("answer %v, %v; want the handler's 408", res, err)
			}
			if _, err := io.Copy(io.Discard, br); err != nil {
				t.Errorf("after the answer: %v; want the connection's end", err)
			}
		})
	}
}
