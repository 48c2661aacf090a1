package upstream

import (
	"bufio"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// responseHeads are upstream answers, the common kind and every kind
// readSimpleResponse leaves to http.ReadResponse.
var responseHeads = []struct {
	name, raw string
	simple    bool
}{
	{"common", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", true},
	{"no reason", "HTTP/1.1 400\r\nContent-Length: 3\r\n\r\nbad", true},
	{"odd reason", "HTTP/1.1 418 I'm  a teapot \r\nContent-Length: 0\r\n\r\n", true},
	{"empty body", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", true},
	{"repeated field", "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 1\r\n\r\nx", true},
	{"lower-case names", "HTTP/1.1 200 OK\r\ncontent-length: 1\r\nx-request-id: abc\r\n\r\nx", true},
	{"blanks around values", "HTTP/1.1 200 OK\r\nX-A: \t padded \t\r\nContent-Length:1\r\n\r\nx", true},
	{"empty value", "HTTP/1.1 200 OK\r\nX-Empty:\r\nContent-Length: 1\r\n\r\nx", true},
	{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", true},
	{"connection keep-alive", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", true},
	{"close and a name on one line", "HTTP/1.1 200 OK\r\nConnection: close, X-Internal\r\nX-Internal: a\r\nContent-Length: 1\r\n\r\nx", true},
	{"cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfive!", true},
	{"bytes past the body", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n", true},
	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", false},
	{"no length", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close", false},
	{"two connection lines", "HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: X-Internal\r\nX-Internal: a\r\nContent-Length: 1\r\n\r\nx", false},
	{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", false},
	{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", false},
	{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false},
	{"informational", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false},
	{"no content", "HTTP/1.1 204 No Content\r\n\r\n", false},
	{"not modified", "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false},
	{"folded line", "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 1\r\n\r\nx", false},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", false},
	{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx", false},
	{"control byte", "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 1\r\n\r\nx", false},
	{"pragma", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 1\r\n\r\nx", false},
	{"trailer", "HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nContent-Length: 1\r\n\r\nx", false},
	{"head cut short", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n", false},
	{"garbage", "\x00\x01garbage\r\n\r\n", false},
}

// TestReadSimpleResponse reads every head with readSimpleResponse and with
// http.ReadResponse: where the first reads one, both must read the same
// response, body and error included, and leave the same bytes unread.
func TestReadSimpleResponse(t *testing.T) {
	for _, tt := range responseHeads {
		t.Run(tt.name, func(t *testing.T) {
			compareResponseReads(t, tt.raw, "GET", tt.simple)
		})
	}
	t.Run("answer to HEAD", func(t *testing.T) {
		compareResponseReads(t, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n", "HEAD", false)
	})
}

// testResponse is the response every read of compareResponseReads writes
// over, as one exchange's does: what one head leaves in it must not show in
// the next.
var testResponse Reused

// compareResponseReads reports where readSimpleResponse and
// http.ReadResponse differ on raw; simple is whether the first should
// read it, or -1 to take what it does.
func compareResponseReads(t *testing.T, raw, method string, simple any) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://upstream/", nil)
	br := bufio.NewReader(strings.NewReader(raw))
	br.Peek(1)
	buffered := br.Buffered()
	got, ok := readSimpleResponse(br, req, &testResponse)
	if want, given := simple.(bool); given && ok != want {
		t.Fatalf("readSimpleResponse read it: %v, want %v", ok, want)
	}
	if !ok {
		if br.Buffered() != buffered {
			t.Fatalf("readSimpleResponse declined but consumed %d bytes", buffered-br.Buffered())
		}
		return
	}
	want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), req)
	if err != nil {
		t.Fatalf("readSimpleResponse read a response http.ReadResponse refuses: %v", err)
	}
	wantBody, wantErr := io.ReadAll(want.Body)
	gotBody, gotErr := io.ReadAll(got.Body)
	type view struct {
		Status           string
		StatusCode       int
		Proto            string
		Major, Minor     int
		Header           http.Header
		ContentLength    int64
		Close            bool
		TransferEncoding []string
		Body             string
		BodyErr          string
	}
	see := func(r *http.Response, body []byte, err error) view {
		e := ""
		if err != nil {
			e = err.Error()
		}
		return view{r.Status, r.StatusCode, r.Proto, r.ProtoMajor, r.ProtoMinor, r.Header, r.ContentLength, r.Close, r.TransferEncoding, string(body), e}
	}
	if g, w := see(got, gotBody, gotErr), see(want, wantBody, wantErr); !reflect.DeepEqual(g, w) {
		t.Errorf("readSimpleResponse read\n%+v\nhttp.ReadResponse read\n%+v", g, w)
	}
	if (got.Body == http.NoBody) != (want.Body == http.NoBody) {
		t.Errorf("body is NoBody: %v, want %v", got.Body == http.NoBody, want.Body == http.NoBody)
	}
}

// FuzzReadSimpleResponse checks that whatever readSimpleResponse reads,
// http.ReadResponse reads the same.
func FuzzReadSimpleResponse(f *testing.F) {
	for _, tt := range responseHeads {
		f.Add(tt.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		compareResponseReads(t, raw, "GET", nil)
	})
}
