package test

import (
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
