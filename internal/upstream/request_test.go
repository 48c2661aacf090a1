package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRequestURI: a query goes on as httputil.ReverseProxy forwards it, a
// semicolon or a malformed escape making it write the query again without
// the parameters net/url cannot parse.
func TestRequestURI(t *testing.T) {
	for _, tc := range []struct{ target, want string }{
		{"/q", "/q"},
		{"/q?a=1&b=2", "/q?a=1&b=2"},
		{"/q?b=2&a=%20", "/q?b=2&a=%20"},
		{"/q?", "/q?"},
		{"/q?a=1;b=2", "/q"},
		{"/q?a=1;b=2&c=3", "/q?c=3"},
		{"/q?c=3&a=%zz", "/q?c=3"},
		{"/q?a=%2", "/q"},
		{"/p%20x?a=1;b", "/p%20x"},
	} {
		u, err := url.ParseRequestURI(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := requestURI(u); got != tc.want {
			t.Errorf("requestURI(%q) = %q, want %q", tc.target, got, tc.want)
		}
	}
}

// TestWrite: what the upstream receives of a caller's request. The header
// lines after the request line are compared in sorted order, since a
// header is a map.
func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		head   string // the caller's request head, as the front parsed it
		body   string // the body the caller sends
		read   bool   // the body was read whole before
		want   string
		wantOK bool
	}{
		{
			name:   "hop-by-hop and forwarding headers are dropped, the connection's own set",
			head:   "GET /t?x=1 HTTP/1.1\r\nHost: front.test\r\nConnection: keep-alive, X-Secret, X-Request-Id\r\nKeep-Alive: 5\r\nX-Secret: s\r\nX-Forwarded-For: 6.6.6.6\r\nForwarded: for=6.6.6.6\r\nX_Forwarded_For: 6.6.6.6\r\nX_Request_Id: forged\r\nX-Request-Id: r-1\r\nTe: trailers, gzip\r\nAccept: */*\r\n\r\n",
			want:   "GET /t?x=1 HTTP/1.1\r\nAccept: */*\r\nHost: api.test\r\nTe: trailers\r\nX-Forwarded-For: 192.0.2.1\r\nX-Forwarded-Host: front.test\r\nX-Forwarded-Proto: http\r\nX-Request-Id: r-1\r\n\r\n",
			wantOK: true,
		},
		{
			name:   "an empty POST still says its length",
			head:   "POST /t HTTP/1.1\r\nHost: front.test\r\nContent-Length: 0\r\n\r\n",
			want:   "POST /t HTTP/1.1\r\nContent-Length: 0\r\nHost: api.test\r\nX-Forwarded-For: 192.0.2.1\r\nX-Forwarded-Host: front.test\r\nX-Forwarded-Proto: http\r\n\r\n",
			wantOK: true,
		},
		{
			name:   "a body read whole goes with its own length",
			head:   "PATCH /t HTTP/1.1\r\nHost: front.test\r\nContent-Length: 17\r\n\r\n",
			body:   `{"status":"open"}`,
			read:   true,
			want:   "PATCH /t HTTP/1.1\r\nContent-Length: 17\r\nHost: api.test\r\nX-Forwarded-For: 192.0.2.1\r\nX-Forwarded-Host: front.test\r\nX-Forwarded-Proto: http\r\n\r\n" + `{"status":"open"}`,
			wantOK: true,
		},
		{
			name:   "a streamed body of unknown length goes chunked",
			head:   "POST /t HTTP/1.1\r\nHost: front.test\r\nTransfer-Encoding: chunked\r\n\r\n",
			body:   "5\r\nhello\r\n0\r\n\r\n",
			want:   "POST /t HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\nX-Forwarded-For: 192.0.2.1\r\nX-Forwarded-Host: front.test\r\nX-Forwarded-Proto: http\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
			wantOK: true,
		},
		{
			name: "a streamed body shorter than its length is the caller's fault",
			head: "PUT /t HTTP/1.1\r\nHost: front.test\r\nContent-Length: 10\r\n\r\n",
			body: "short",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parsed, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tc.head + tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			parsed.RemoteAddr = "192.0.2.1:1234"
			r := &Request{In: parsed, Host: "api.test", Own: "X-Request-Id"}
			if tc.read {
				r.Body, _ = io.ReadAll(parsed.Body)
			}
			var out bytes.Buffer
			bw := bufio.NewWriter(&out)
			err = r.write(bw)
			bw.Flush()
			if !tc.wantOK {
				if !errors.Is(err, ErrRequestBody) {
					t.Fatalf("write = %v, want an ErrRequestBody", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedHead(out.String()); got != sortedHead(tc.want) {
				t.Errorf("the upstream receives\n%q\nwant\n%q", got, sortedHead(tc.want))
			}
		})
	}
}

// sortedHead is raw with the header lines after the request line sorted.
func sortedHead(raw string) string {
	head, body, _ := strings.Cut(raw, "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	slices.Sort(lines[1:])
	return strings.Join(lines, "\r\n") + "\r\n\r\n" + body
}
