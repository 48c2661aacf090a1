package mcp

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResult turns the pipeline's answers into tool results: successes as
// they came, errors signpost wrote with their text rendering, and what it
// cannot carry described rather than sent.
func TestResult(t *testing.T) {
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return b.String()
	}
	for _, tc := range []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		isError bool
		text    string
		data    string // structured content, or "" for none
	}{
		{"a JSON success", 200, nil, `{"ticket_id":"T-1200", "status":"pending"}`, false,
			`{"ticket_id":"T-1200", "status":"pending"}`, `{"ticket_id":"T-1200","status":"pending"}`},
		{"a list is text alone", 200, nil, `[1,2]`, false, `[1,2]`, ""},
		{"plain text", 201, map[string]string{"Content-Type": "text/plain"}, "created\n", false, "created\n", ""},
		{"no body", 204, nil, ``, false, "the call succeeded: 204 No Content, with no body", ""},
		{"bytes that are not text", 200, map[string]string{"Content-Type": "image/png"}, "\x89PNG\r\n\x1a\n\xff", false,
			"the call succeeded: 200 OK, with 9 bytes of image/png, which are not text and are not shown", ""},
		{"gzip is decoded", 200, map[string]string{"Content-Encoding": "gzip"}, gz(`{"ok":true}`), false, `{"ok":true}`, `{"ok":true}`},
		{"a corrupt gzip body", 200, map[string]string{"Content-Encoding": "gzip"}, "not gzip", true,
			"Error unreadable_response: the answer (200 OK) could not be read: its gzip encoding is corrupt; the call succeeded, so check its effect before repeating it\nRetryable: no.",
			`{"error":"unreadable_response","message":"the answer (200 OK) could not be read: its gzip encoding is corrupt; the call succeeded, so check its effect before repeating it","retryable":false}`},
		{"an encoding signpost cannot read", 200, map[string]string{"Content-Encoding": "br"}, "xx", true,
			"Error unreadable_response: the answer (200 OK) could not be read: it is encoded as \"br\"; the call succeeded, so check its effect before repeating it\nRetryable: no.",
			`{"error":"unreadable_response","message":"the answer (200 OK) could not be read: it is encoded as \"br\"; the call succeeded, so check its effect before repeating it","retryable":false}`},
		{"a success too large to carry", 200, nil, strings.Repeat("x", 201), true,
			"Error response_too_large: the answer (200 OK) is over 200 bytes, more than a tool result carries; the call succeeded, so ask for less (a narrower query, a smaller page) rather than repeating it\nRetryable: no.",
			`{"error":"response_too_large","message":"the answer (200 OK) is over 200 bytes, more than a tool result carries; the call succeeded, so ask for less (a narrower query, a smaller page) rather than repeating it","retryable":false}`},
		{"signpost's error", 400, nil, `{"error":"invalid_state","field":"state","message":"allowed values: new, active, done","received":"NEW","retryable":false}`, true,
			"Error invalid_state in state: allowed values: new, active, done (you sent \"NEW\")\nRetryable: no.",
			`{"error":"invalid_state","field":"state","message":"allowed values: new, active, done","received":"NEW","retryable":false}`},
		{"an error passed through as HTML", 502, nil, `<html>Bad Gateway</html>`, true, "502 Bad Gateway\n<html>Bad Gateway</html>", ""},
		{"an error passed through as JSON", 400, nil, `{"error":"Invalid status"}`, true, "400 Bad Request\n{\"error\":\"Invalid status\"}", `{"error":"Invalid status"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &http.Response{StatusCode: tc.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(tc.body))}
			for k, v := range tc.header {
				res.Header.Set(k, v)
			}
			got := result(res, 200)
			if got.IsError != tc.isError {
				t.Errorf("isError = %t, want %t", got.IsError, tc.isError)
			}
			if len(got.Content) != 1 {
				t.Fatalf("%d content blocks, want 1", len(got.Content))
			}
			if text := got.Content[0].(*sdk.TextContent).Text; text != tc.text {
				t.Errorf("text:\n%q\nwant:\n%q", text, tc.text)
			}
			var data string
			if got.StructuredContent != nil {
				b, _ := json.Marshal(got.StructuredContent)
				data = string(b)
			}
			if data != tc.data {
				t.Errorf("structured content:\n%s\nwant:\n%s", data, tc.data)
			}
		})
	}
}
