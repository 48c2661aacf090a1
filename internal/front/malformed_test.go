package front

import (
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestFrontRefusesAMalformedRequestLine: a request line net/http answers
// with a bare 400 in plain text is answered by the front with the server's
// Refusal, naming the code, the line and the rule broken, and the
// connection ends. A line net/http reads otherwise is left to it.
func TestFrontRefusesAMalformedRequestLine(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(&http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)})
	s.Refuse = func(code, field, value, rule string) (string, []byte) {
		return "application/json", []byte(`{"error":"` + code + `","field":"` + field + `","received":` + strconv.Quote(value) + `,"message":"` + rule + `"}`)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	const (
		spaces  = "the request line must be a method, a target and a protocol, separated by single spaces, e.g. GET /tickets/T-1 HTTP/1.1"
		method  = "the method must be a token such as GET or PATCH, e.g. GET /tickets/T-1 HTTP/1.1"
		version = "the request line must end with the protocol, HTTP/1.1, after one space; a space or control character in the target is written percent-encoded (%20), e.g. GET /tickets/T-1 HTTP/1.1"
		target  = "the target must be a path such as /tickets/T-1, with any control character or stray % percent-encoded, e.g. GET /tickets/T-1 HTTP/1.1"
	)
	answer := func(line, rule string) string {
		body := `{"error":"invalid_request_line","field":"request-line","received":` + strconv.Quote(line) + `,"message":"` + rule + `"}`
		n := strconv.Itoa(len(body))
		return "HTTP/1.1 400 Bad Request\nContent-Length: " + n + "\nContent-Type: application/json\n\n" + strconv.Quote(body) + " <nil> chunked=false length=" + n + " trailers=[]"
	}
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
			answers, _ := exchangeRaw(t, ln.Addr().String(), tc.raw)
			// The connection ends after the answer: nothing more is read.
			if want := answer(tc.line, tc.rule); len(answers) != 2 || answers[0] != want || strings.HasPrefix(answers[1], "HTTP/") {
				t.Errorf("answers %q\nwant [%q, then the end of the connection]", answers, want)
			}
		})
	}
	for _, raw := range []string{"GET /tickets HTTP/1.0\r\n\r\n", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "GET http://a/tickets HTTP/1.1\r\nHost: a\r\n\r\n"} {
		if answers, _ := exchangeRaw(t, ln.Addr().String(), raw); len(answers) < 1 || !strings.Contains(answers[0], " 200 OK") {
			t.Errorf("%q: %q; want it left to net/http, which answers 200", raw, answers)
		}
	}
}
