package test

import (
	"io"
	"net/http"
	"testing"
)

// TestMalformedRequestLineIsAnsweredInJSON: a request line net/http would
// answer with a bare 400 in plain text gets signpost's own JSON body,
// naming the line and the rule it broke.
func TestMalformedRequestLineIsAnsweredInJSON(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(*http.Request, []byte) string { return answer(200, "ok") })
	sp := startSignpost(t, ticketsConfig, up)
	for _, tc := range []struct{ name, raw, want string }{
		{"a space in the target", "GET /tickets/T 1 HTTP/1.1\r\nHost: api\r\n\r\n",
			`{"error":"invalid_request_line","field":"request-line","message":"the request line must end with the protocol, HTTP/1.1, after one space; a space or control character in the target is written percent-encoded (%20), e.g. GET /tickets/T-1 HTTP/1.1","received":"GET /tickets/T 1 HTTP/1.1","retryable":false}`},
		{"no protocol", "GET /tickets\r\nHost: api\r\n\r\n",
			`{"error":"invalid_request_line","field":"request-line","message":"the request line must be a method, a target and a protocol, separated by single spaces, e.g. GET /tickets/T-1 HTTP/1.1","received":"GET /tickets","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dialSignpost(t, sp)
			res, body := roundTrip(t, c, br, "GET", tc.raw)
			if res.StatusCode != 400 || res.Header.Get("Content-Type") != "application/json" || body != tc.want {
				t.Errorf("got %d %s %s\nwant 400 application/json %s", res.StatusCode, res.Header.Get("Content-Type"), body, tc.want)
			}
		})
	}
}

// TestMalformedHeadIsAnsweredInJSON: a head net/http would answer with a
// bare 400 in plain text for its fields gets signpost's own JSON body,
// naming the field, what was received and the rule broken, and the
// connection ends after it.
func TestMalformedHeadIsAnsweredInJSON(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(*http.Request, []byte) string { return answer(200, "ok") })
	sp := startSignpost(t, ticketsConfig, up)
	for _, tc := range []struct{ name, raw, want string }{
		{"no Host", "GET /tickets/T-1 HTTP/1.1\r\nAccept: application/json\r\n\r\n",
			`{"error":"missing_host","field":"Host","message":"an HTTP/1.1 request carries a Host field naming the service, e.g. Host: api.example.com","received":"","retryable":false}`},
		{"a NUL in a value", "GET /tickets/T-1 HTTP/1.1\r\nHost: api\r\nX-Note: a\x00b\r\n\r\n",
			`{"error":"invalid_header","field":"X-Note","message":"a field value holds no control character but tab: no NUL, CR, LF or DEL within it; percent-encode such bytes, e.g. X-Note: two words","received":"a\u0000b","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dialSignpost(t, sp)
			res, body := roundTrip(t, c, br, "GET", tc.raw)
			if res.StatusCode != 400 || res.Header.Get("Content-Type") != "application/json" || !res.Close || body != tc.want {
				t.Errorf("got %d %s (close %v) %s\nwant 400 application/json, closing, %s", res.StatusCode, res.Header.Get("Content-Type"), res.Close, body, tc.want)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("after the answer: %v; want the connection closed", err)
			}
		})
	}
}
