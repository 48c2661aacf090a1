package front

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFrontRefusesAMalformedRequestLine: a request line net/http answers
// with a bare 400 in plain text is answered by the front with the server's
// Refusal, naming the code, the line and the rule broken, and the
// connection ends. A line net/http reads otherwise is left to it.
func TestFrontRefusesAMalformedRequestLine(t *testing.T) {
	addr := startRefusingFront(t)
	const (
		spaces  = "the request line must be a method, a target and a protocol, separated by single spaces, e.g. GET /tickets/T-1 HTTP/1.1"
		method  = "the method must be a token such as GET or PATCH, e.g. GET /tickets/T-1 HTTP/1.1"
		version = "the request line must end with the protocol, HTTP/1.1, after one space; a space or control character in the target is written percent-encoded (%20), e.g. GET /tickets/T-1 HTTP/1.1"
		target  = "the target must be a path such as /tickets/T-1, with any control character or stray % percent-encoded, e.g. GET /tickets/T-1 HTTP/1.1"
	)
	for _, tc := range []struct{ name, raw, line, rule string }{
		{"no protocol", "GET /tickets\r\nHost: a\r\n\r\n", "GET /tickets", spaces},
		{"one word", "HELLO\r\n\r\n", "HELLO", spaces},
		{"a space in the target", "GET /tickets/T 1 HTTP/1.1\r\nHost: a\r\n\r\n", "GET /tickets/T 1 HTTP/1.1", version},
		{"a method not a token", "GE(T /tickets HTTP/1.1\r\nHost: a\r\n\r\n", "GE(T /tickets HTTP/1.1", method},
		{"a bad escape in the target", "GET /tickets/%zz HTTP/1.1\r\nHost: a\r\n\r\n", "GET /tickets/%zz HTTP/1.1", target},
		{"a target not a path", "GET tickets HTTP/1.1\r\nHost: a\r\n\r\n", "GET tickets HTTP/1.1", target},
		{"the head not yet whole", "GET /tickets\r\nHost: a\r\n", "GET /tickets", spaces},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers, _ := exchangeRaw(t, addr, tc.raw)
			// The connection ends after the answer: nothing more is read.
			if want := refusalAnswer("invalid_request_line", "request-line", tc.line, tc.rule); len(answers) != 2 || answers[0] != want || strings.HasPrefix(answers[1], "HTTP/") {
				t.Errorf("answers %q\nwant [%q, then the end of the connection]", answers, want)
			}
		})
	}
	for _, raw := range []string{"GET /tickets HTTP/1.0\r\n\r\n", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "GET http://a/tickets HTTP/1.1\r\nHost: a\r\n\r\n"} {
		if answers, _ := exchangeRaw(t, addr, raw); len(answers) < 1 || !strings.Contains(answers[0], " 200 OK") {
			t.Errorf("%q: %q; want it left to net/http, which answers 200", raw, answers)
		}
	}
}

// startRefusingFront serves a handler that answers "served" on a front
// whose Refusal renders a JSON body, and returns its address.
func startRefusingFront(t *testing.T) string {
	t.Helper()
	return startFrontWith(t, func(r Refused) (string, []byte) {
		return "application/json", []byte(`{"error":"` + r.Code + `","field":"` + r.Field + `","received":` + strconv.Quote(r.Value) + `,"message":"` + r.Rule + `"}`)
	})
}

// startFrontWith serves a handler that answers "served" on a front whose
// Refusal is refuse, and returns its address.
func startFrontWith(t *testing.T, refuse Refusal) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)})
	s.Refuse = refuse
	go s.Serve(ln)
	t.Cleanup(func() {
		s.Close()
		// A refused connection lingers before it ends: wait for it, so
		// that no goroutine outlives the test.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			s.mu.Lock()
			n := len(s.conns)
			s.mu.Unlock()
			if n == 0 {
				break
			}
		}
	})
	return ln.Addr().String()
}

// refusalAnswer is the answer exchangeRaw reads for a refusal of
// startRefusingFront's.
func refusalAnswer(code, field, value, rule string) string {
	body := `{"error":"` + code + `","field":"` + field + `","received":` + strconv.Quote(value) + `,"message":"` + rule + `"}`
	n := strconv.Itoa(len(body))
	return "HTTP/1.1 400 Bad Request\nContent-Length: " + n + "\nContent-Type: application/json\n\n" + strconv.Quote(body) + " <nil> chunked=false length=" + n + " trailers=[]"
}

// TestFrontRefusesAMalformedHead: a head net/http refuses with a bare 400
// in plain text for its fields (a malformed field line, a name that is not
// a token, a value with a control byte, no Host or several, a malformed
// Host or Content-Length) is answered by the front with the server's
// Refusal, naming the code, the field, what was received and the rule
// broken, and the connection ends, as net/http ends it. A head net/http
// accepts is served.
func TestFrontRefusesAMalformedHead(t *testing.T) {
	addr := startRefusingFront(t)
	const get = "GET /tickets HTTP/1.1\r\n"
	for _, tc := range []struct{ name, raw, code, field, value, rule string }{
		{"no Host", get + "Accept: */*\r\n\r\n", "missing_host", "Host", "", ruleNoHost},
		{"no Host, absolute form", "GET http://api/tickets HTTP/1.1\r\n\r\n", "missing_host", "Host", "", ruleNoHost},
		{"a Host with a space before its colon is none", get + "Host : api\r\n\r\n", "missing_host", "Host", "", ruleNoHost},
		{"two Hosts", get + "Host: api\r\nhost: other\r\n\r\n", "invalid_host", "Host", "api, other",
			"a request carries one Host field, not 2, e.g. Host: api.example.com"},
		{"two Hosts in HTTP/1.0", "GET /tickets HTTP/1.0\r\nHost: api\r\nHost: api\r\n\r\n", "invalid_host", "Host", "api, api",
			"a request carries one Host field, not 2, e.g. Host: api.example.com"},
		{"a malformed Host", get + "Host: api/evil\r\n\r\n", "invalid_host", "Host", "api/evil", ruleHost},
		{"a line with no colon", get + "Host: api\r\nAccept application/json\r\n\r\n", "invalid_header", "header-line", "Accept application/json", ruleColon},
		{"a line with no colon, the head not yet whole", get + "Host: api\r\nAccept\r\n", "invalid_header", "header-line", "Accept", ruleColon},
		{"a NUL line", get + "Host: api\r\n\x00\r\n", "invalid_header", "header-line", "\x00", ruleColon},
		{"a name that is not a token", get + "Host: api\r\nX(A): 1\r\n\r\n", "invalid_header", "header-line", "X(A): 1", ruleName},
		{"an empty name", get + "Host: api\r\n: 1\r\n\r\n", "invalid_header", "header-line", ": 1", ruleName},
		{"a space inside a name", get + "Host: api\r\nX A: 1\r\n\r\n", "invalid_header", "header-line", "X A: 1", ruleName},
		{"a space before the colon", get + "Host: api\r\nX-Id : 1\r\n\r\n", "invalid_header", "header-line", "X-Id : 1", ruleSpaced},
		{"a tab before the colon", get + "Host: api\r\nX-Id\t: 1\r\n\r\n", "invalid_header", "header-line", "X-Id\t: 1", ruleSpaced},
		{"a first line that continues the request line", get + " Host: api\r\n\r\n", "invalid_header", "header-line", " Host: api", ruleFolded},
		{"a NUL in a value", get + "Host: api\r\nX-Note: a\x00b\r\n\r\n", "invalid_header", "X-Note", "a\x00b", ruleValue},
		{"a CR in a value", get + "Host: api\r\nX-Note: a\rb\r\n\r\n", "invalid_header", "X-Note", "a\rb", ruleValue},
		{"a CR before the line's end", get + "Host: api\r\nX-Note: ab\r\r\n\r\n", "invalid_header", "X-Note", "ab\r", ruleValue},
		{"a DEL in a value", get + "Host: api\r\nx-note: a\x7fb\r\n\r\n", "invalid_header", "X-Note", "a\x7fb", ruleValue},
		{"a vertical tab in a value", get + "Host: api\r\nX-Note: a\vb\r\n\r\n", "invalid_header", "X-Note", "a\vb", ruleValue},
		{"a control byte in a continued value", get + "Host: api\r\nX-Note: a\r\n b\x01\r\n\r\n", "invalid_header", "X-Note", "a b\x01", ruleValue},
		{"a control byte in a value, before bare LFs", "GET /tickets HTTP/1.1\nHost: api\nX-Note: a\x00\n\n", "invalid_header", "X-Note", "a\x00", ruleValue},
		{"a Content-Length not a number", "POST /tickets HTTP/1.1\r\nHost: api\r\nContent-Length: 3x\r\n\r\nabc", "invalid_header", "Content-Length", "3x", ruleLength},
		{"two Content-Lengths that differ", "POST /tickets HTTP/1.1\r\nHost: api\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
			"invalid_header", "Content-Length", "3, 4", ruleLength},
		{"the first fault counts", get + "X A: 1\r\nX-Note: a\x00\r\n\r\n", "invalid_header", "X-Note", "a\x00", ruleValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers, _ := exchangeRaw(t, addr, tc.raw)
			// The connection ends after the answer: nothing more is read.
			if want := refusalAnswer(tc.code, tc.field, tc.value, tc.rule); len(answers) != 2 || answers[0] != want || strings.HasPrefix(answers[1], "HTTP/") {
				t.Errorf("answers %q\nwant [%q, then the end of the connection]", answers, want)
			}
		})
	}
	for _, raw := range []string{
		get + "Host: api\r\nX-Note: a\r\n b\r\n\r\n",          // a continued line
		get + "Host: api\r\nX-Note: caf\xc3\xa9 \xff\r\n\r\n", // bytes past ASCII
		get + "Host: api\r\nX-Note: a\tb\r\nX-Empty:\r\n\r\n", // a tab, an empty value
		get + "Host: api\r\nContent-Length: 0\r\nContent-Length:  0\r\n\r\n",
		get + "Host: \r\n\r\n",                 // an empty Host
		"GET /tickets HTTP/1.0\r\n\r\n",        // no Host in HTTP/1.0
		"CONNECT api:443 HTTP/1.1\r\n\r\n",     // no Host for CONNECT: net/http's to answer
		"GET /tickets HTTP/1.1\nHost: api\n\n", // bare LFs
	} {
		answers, _ := exchangeRaw(t, addr, raw)
		if len(answers) < 1 || strings.Contains(answers[0], "application/json") {
			t.Errorf("%q: %q; want it left to net/http, which takes it", raw, answers)
		}
	}
}

// TestFrontWaitsForTheLineAfterABadField: net/http answers a field line
// with a control byte only once the byte after it shows whether the line
// goes on; the front, given the line alone, waits for that byte rather
// than hand the connection off, and answers the fault itself.
func TestFrontWaitsForTheLineAfterABadField(t *testing.T) {
	addr := startRefusingFront(t)
	for _, tc := range []struct{ name, first, then, value string }{
		{"the head ends", "X-Note: a\x00b\r\n", "\r\n", "a\x00b"},
		{"another field", "X-Note: a\x00b\r\n", "Accept: */*\r\n\r\n", "a\x00b"},
		{"the line goes on", "X-Note: a\x00b\r\n", " c\r\n\r\n", "a\x00b c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, "GET /tickets HTTP/1.1\r\nHost: api\r\n"+tc.first)
			time.Sleep(50 * time.Millisecond)
			io.WriteString(c, tc.then)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			want := `{"error":"invalid_header","field":"X-Note","received":` + strconv.Quote(tc.value) + `,"message":"` + ruleValue + `"}`
			if res.StatusCode != 400 || string(body) != want || !res.Close {
				t.Errorf("got %d %s (close %v)\nwant 400 %s, closing", res.StatusCode, body, res.Close, want)
			}
		})
	}
}

// FuzzFieldFault checks that every head fieldFault refuses, net/http's
// server refuses too, with a 400, before any handler runs.
func FuzzFieldFault(f *testing.F) {
	for _, raw := range fieldFaultSeeds {
		f.Add(raw)
	}
	var served atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }),
		ReadHeaderTimeout: time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > 4<<10 {
			return
		}
		if _, v := fieldFault([]byte(raw)); v != refused {
			return
		}
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		before := served.Load()
		io.WriteString(c, raw)
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != http.StatusBadRequest || !res.Close || served.Load() != before {
			got, _ := fieldFault([]byte(raw))
			t.Errorf("%q: refused as %+v; net/http answered %v %v", raw, got, res, err)
		}
	})
}

// fieldFaultSeeds are heads net/http refuses for their fields, and heads
// it takes.
var fieldFaultSeeds = []string{
	"GET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX : a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX\r\n",
	"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
	"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
	"GET / HTTP/2.0\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\x01\r\n\r\n",
	"GET / HTTP/1.1\nHost: a\nX: \xff\n\n",
	"CONNECT a:1 HTTP/1.1\r\n\r\n",
	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
}

// TestRefusalIsToldWhoAndWhat: the Refusal is called once per refused
// request with the code, the field, the value as sent, the rule and the
// caller's address; every code is one of RefusalCodes.
func TestRefusalIsToldWhoAndWhat(t *testing.T) {
	told := make(chan Refused, 1)
	addr := startFrontWith(t, func(r Refused) (string, []byte) {
		told <- r
		return "application/json", []byte(`{}`)
	})
	for _, tc := range []struct{ raw, code, field, value string }{
		{"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", CodeRequestLine, "request-line", "GET /a b HTTP/1.1"},
		{"GET /a HTTP/1.1\r\nX-Note: a\x7fb\r\nHost: a\r\n\r\n", CodeHeader, "X-Note", "a\x7fb"},
		{"GET /a HTTP/1.1\r\n\r\n", CodeMissingHost, "Host", ""},
		{"GET /a HTTP/1.1\r\nHost: a/b\r\n\r\n", CodeHost, "Host", "a/b"},
		{"POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", CodeFraming, "Transfer-Encoding", "chunked"},
	} {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tc.raw)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Errorf("%q: %v", tc.raw, err)
		}
		c.Close()
		select {
		case r := <-told:
			if r.Code != tc.code || r.Field != tc.field || r.Value != tc.value || r.Rule == "" || r.Remote != c.LocalAddr().String() {
				t.Errorf("%q: told %+v; want code %s, field %s, value %q, a rule and remote %s", tc.raw, r, tc.code, tc.field, tc.value, c.LocalAddr())
			}
			if !slices.Contains(RefusalCodes(), r.Code) {
				t.Errorf("%q: code %s is not one of RefusalCodes %q", tc.raw, r.Code, RefusalCodes())
			}
		case <-time.After(2 * time.Second):
			t.Errorf("%q: the Refusal was not called", tc.raw)
		}
	}
	// Every fault fieldFault finds carries a code of the closed set.
	for _, raw := range fieldFaultSeeds {
		if f, v := fieldFault([]byte(raw)); v != noFault && !slices.Contains(RefusalCodes(), f.code) {
			t.Errorf("%q: fault code %q is not one of RefusalCodes %q", raw, f.code, RefusalCodes())
		}
	}
}
