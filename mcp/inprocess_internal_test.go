package mcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/rules"
)

// TestInProcess hands requests to a handler in place of the pipeline and
// turns its answers into tool results, as a call does: what the handler
// sees of the request, a body kept whole, one over the bound cut there
// (on the wire or once decoded), one broken off, and a panic.
func TestInProcess(t *testing.T) {
	const limit = 128
	stream := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 1000 {
			if _, err := w.Write([]byte("data: tick\n\n")); err != nil {
				return // the bound stops an endless stream
			}
			w.(http.Flusher).Flush()
		}
		panic("the stream was not stopped at the bound")
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(bytes.Repeat([]byte("a"), 1000))
	zw.Close()
	for _, tc := range []struct {
		name    string
		h       http.HandlerFunc
		isError bool
		text    string // a prefix of the result's text
		err     string
	}{
		{name: "what the pipeline sees", h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"remote":"` + r.RemoteAddr + `","target":"` + r.RequestURI + `","host":"` + r.Host + `"}`))
		}, text: `{"remote":"127.0.0.1:0","target":"/tickets/T-1?x=1","host":"signpost"}`},
		{name: "an informational answer first", h: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte("made"))
		}, text: "made"},
		{name: "an error signpost wrote", h: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_state","field":"state","message":"allowed values: new, done","retryable":false}`))
		}, isError: true, text: "Error invalid_state in state"},
		{name: "exactly the bound", h: func(w http.ResponseWriter, _ *http.Request) {
			w.Write(bytes.Repeat([]byte("b"), limit))
		}, text: strings.Repeat("b", limit)},
		{name: "over the bound", h: func(w http.ResponseWriter, _ *http.Request) {
			w.Write(bytes.Repeat([]byte("b"), limit+1))
		}, isError: true, text: "Error response_too_large: the answer (200 OK) is over 128 bytes"},
		{name: "an endless stream", h: stream, isError: true, text: "Error response_too_large"},
		{name: "over the bound once decoded", h: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(zipped.Bytes())
		}, isError: true, text: "Error response_too_large"},
		{name: "broken off", h: func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"tick`))
			panic(http.ErrAbortHandler)
		}, isError: true, text: "Error unreadable_response: the answer (200 OK) could not be read: it broke off"},
		{name: "a panic", h: func(http.ResponseWriter, *http.Request) { panic("boom") }, err: "the pipeline panicked: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &inProcess{h: tc.h, limit: limit + 1, log: slog.New(slog.DiscardHandler)}
			req, _ := http.NewRequest(http.MethodGet, "http://signpost/tickets/T-1?x=1", nil)
			res, err := p.send(req)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("send: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := result(res, limit)
			got := out.Content[0].(*sdk.TextContent).Text
			if out.IsError != tc.isError || !strings.HasPrefix(got, tc.text) {
				t.Errorf("isError %t, text %q; want %t, %q...", out.IsError, got, tc.isError, tc.text)
			}
			if !p.wait(time.Second) {
				t.Error("the call is still counted in flight once answered")
			}
		})
	}
}

// TestAnswerKeepsTheBound: a write past the limit keeps what fits and
// fails, and so does every write after it.
func TestAnswerKeepsTheBound(t *testing.T) {
	a := &answer{header: http.Header{}, limit: 5}
	for _, tc := range []struct {
		write string
		n     int
		err   error
	}{{"abc", 3, nil}, {"defg", 2, errOverLimit}, {"h", 0, errOverLimit}} {
		n, err := a.Write([]byte(tc.write))
		if n != tc.n || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("Write(%q) = %d, %v; want %d, %v", tc.write, n, err, tc.n, tc.err)
		}
	}
	if got := a.body.String(); got != "abcde" || a.status != http.StatusOK {
		t.Errorf("kept %d %q, want 200 \"abcde\"", a.status, got)
	}
}

// TestCallGivenUp: a call the client gave up on while the pipeline served
// it is answered with the cancellation, not with what the pipeline made
// of it.
func TestCallGivenUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	send := func(r *http.Request) (*http.Response, error) {
		cancel()
		<-r.Context().Done()
		a := &answer{header: http.Header{}, limit: 1 << 10}
		a.WriteHeader(http.StatusServiceUnavailable)
		return a.response(r, nil), nil
	}
	f := newFront("test", "", send, slog.New(slog.DiscardHandler))
	cfg, err := rules.Parse("tickets.yaml", []byte("routes:\n  get_ticket:\n    method: GET\n    path: /tickets/{ticket_id}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.publish(cfg)
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "get_ticket", Arguments: json.RawMessage(`{"ticket_id":"T-1"}`)}}
	if res, err := f.call(ctx, req); !errors.Is(err, context.Canceled) {
		t.Errorf("call: %+v, %v; want the cancellation", res, err)
	}
}
