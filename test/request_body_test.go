package test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorded is what the upstream got of one request.
type recorded struct {
	body          []byte
	contentLength int64
	header        http.Header
}

// statusBody returns a JSON request body of exactly n bytes with status
// OPEN, padded out with "pad".
func statusBody(n int) []byte {
	const head, tail = `{"status":"OPEN","pad":"`, `"}`
	return []byte(head + strings.Repeat("p", n-len(head)-len(tail)) + tail)
}

// TestRequestBodyForwarded checks that the body of a request on a route
// with body fields reaches the upstream byte-identical once signpost has
// buffered it to check and echo its fields, and that a body over
// limits.request_body gets a 413 naming the limit and never reaches the
// upstream.
func TestRequestBodyForwarded(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]recorded{}
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("upstream: reading the request body: %v", err)
		}
		mu.Lock()
		got[r.Header.Get("X-Case")] = recorded{body, r.ContentLength, r.Header.Clone()}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"Invalid status"}`))
	}))
	procs := map[string]*signpost{
		ticketsConfig:                startSignpost(t, ticketsConfig, up.URL),
		"testdata/small_limits.yaml": startSignpost(t, "testdata/small_limits.yaml", up.URL),
	}

	const withReceived = `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`
	// A body that is not one JSON object is the fault, whatever field the
	// upstream named.
	notJSON := func(what string) string {
		return `{"error":"invalid_json_body","message":"the request body ` + what + `; send one JSON object with the fields status","retryable":false}`
	}
	tooLarge := func(limit string) string {
		return `{"error":"request_body_too_large","message":"the request body is over ` + limit + `, the most signpost reads to check its fields; send a smaller body","retryable":false}`
	}
	tests := []struct {
		name, config string
		body         []byte
		chunked      bool // sent without Content-Length
		want         string
	}{
		{"small", ticketsConfig, []byte(`{"status":"OPEN"}`), false, withReceived},
		{"odd spacing and escapes", ticketsConfig,
			[]byte("{\n  \"status\" : \"OPEN\",\t\"note\":\"caf\xc3\xa9 \\u00e9 \\\"q\\\"\"\n}\r\n"), false, withReceived},
		{"small, chunked", ticketsConfig, []byte(`{"status":"OPEN"}`), true, withReceived},
		{"not JSON", ticketsConfig, []byte("status=OPEN&x=%00"), false, notJSON("is form-encoded, not JSON")},
		{"binary", ticketsConfig, []byte("\x00\xff\xfe{\"status\":\"OPEN\"}"), false, notJSON("is not JSON: it is not UTF-8 text")},
		{"over the 1 MiB default", ticketsConfig, statusBody(1<<20 + 1), false, tooLarge("1 MiB")},
		{"at the 1 KiB bound", "testdata/small_limits.yaml", statusBody(1 << 10), false, withReceived},
		{"at the 1 KiB bound, chunked", "testdata/small_limits.yaml", statusBody(1 << 10), true, withReceived},
		{"one byte over the 1 KiB bound", "testdata/small_limits.yaml", statusBody(1<<10 + 1), false, tooLarge("1 KiB")},
		{"5 KiB over the 1 KiB bound", "testdata/small_limits.yaml", statusBody(5 << 10), false, tooLarge("1 KiB")},
		{"5 KiB over the 1 KiB bound, chunked", "testdata/small_limits.yaml", statusBody(5 << 10), true, tooLarge("1 KiB")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // hides the length from the client
			}
			req, _ := http.NewRequest("PATCH", procs[tt.config].URL+"/tickets/T-8841", body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Case", tt.name)
			req.Header.Set("X-Session-Id", tt.name) // each case a caller of its own
			req.Header.Set("X-Agent-Session", "s-1; tool=update_ticket")
			res := do(t, req)
			mu.Lock()
			rec, ok := got[tt.name]
			mu.Unlock()
			if strings.Contains(tt.want, "request_body_too_large") {
				wantJSONError(t, res, http.StatusRequestEntityTooLarge, tt.want)
				if ok {
					t.Error("the upstream saw a body over the bound")
				}
				return
			}
			wantJSONError(t, res, http.StatusBadRequest, tt.want)
			if !ok {
				t.Fatal("the upstream never saw the request")
			}
			if !bytes.Equal(rec.body, tt.body) {
				t.Errorf("upstream got %d bytes %q, the caller sent %d bytes %q", len(rec.body), clip(rec.body), len(tt.body), clip(tt.body))
			}
			if !tt.chunked && rec.contentLength != int64(len(tt.body)) {
				t.Errorf("upstream got Content-Length %d, the caller sent %d", rec.contentLength, len(tt.body))
			}
			for k, want := range map[string]string{
				"X-Agent-Session":   "s-1; tool=update_ticket",
				"X-Forwarded-For":   "127.0.0.1",
				"X-Forwarded-Proto": "http",
			} {
				if h := rec.header.Get(k); h != want {
					t.Errorf("upstream got %s %q, want %q", k, h, want)
				}
			}
		})
	}
}

// TestUnreadableRequestBody cuts a request body short on a route whose
// body signpost buffers: the caller gets a structured, retryable 400 and
// the upstream never sees the partial call.
func TestUnreadableRequestBody(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("upstream got %s %s from a request whose body was cut short", r.Method, r.URL.Path)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL)

	conn, err := net.DialTimeout("tcp", sp.Addr, waitTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(waitTimeout))
	_, err = io.WriteString(conn, "PATCH /tickets/T-8841 HTTP/1.1\r\nHost: signpost\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"status\":")
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantJSONError(t, &reply{status: res.StatusCode, header: res.Header, body: body, contentLength: res.ContentLength},
		http.StatusBadRequest,
		`{"error":"unreadable_request_body","message":"the request body could not be read to its end; send the whole body again","retryable":true}`)
}
