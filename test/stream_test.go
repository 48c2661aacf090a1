package test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreaming checks that signpost never holds back a body it has no
// reason to read: the upstream writes a first chunk, then waits until the
// test has received that chunk through signpost before it writes the rest.
// A proxy that buffered would deliver nothing until the bound runs out.
// An event-stream error is streamed too under unmatched: passthrough;
// TestStreamErrorWrapped covers the default policy.
func TestStreaming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		first, rest        string
		unmatched          string // route counted as unmatched, if any
		passthrough        bool   // serve with unmatched: passthrough
	}{
		{"server-sent events", "GET", "/events", 200, "text/event-stream",
			"data: one\n\n", "data: two\n\nevent: end\ndata: {}\n\n", "", false},
		{"chunked JSON of unknown length", "GET", "/tickets/T-8841", 200, "application/json",
			`{"tickets":[{"ticket_id":"T-1"},`, `{"ticket_id":"T-2"}]}`, "", false},
		{"event-stream 400 on a route with a matching rule", "PATCH", "/tickets/T-8841", 400, "text/event-stream",
			"data: {\"error\":\"Invalid status\"}\n\n", "data: {\"error\":\"Invalid status\"}\n\n", "update_ticket", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newGate(t)
			var finished atomic.Bool
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Header().Set("Cache-Control", "no-cache")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.first)
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("upstream flush: %v", err)
				}
				if !g.wait(r.Context()) {
					return
				}
				_, _ = io.WriteString(w, tt.rest)
				finished.Store(true)
			}), g)
			config := ticketsConfig
			if tt.passthrough {
				config = passthrough(t, config)
			}
			sp := startSignpost(t, config, up.URL)

			ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
			defer cancel()
			var body io.Reader
			if tt.method == "PATCH" {
				body = strings.NewReader(`{"status":"OPEN"}`)
			}
			req, _ := http.NewRequestWithContext(ctx, tt.method, sp.URL+tt.path, body)
			req.Header.Set("Accept", tt.contentType)

			type first struct {
				res   *http.Response
				chunk []byte
				err   error
			}
			got := make(chan first, 1)
			go func() {
				res, err := client.Do(req)
				if err != nil {
					got <- first{err: err}
					return
				}
				chunk := make([]byte, len(tt.first))
				_, err = io.ReadFull(res.Body, chunk)
				got <- first{res, chunk, err}
			}()
			var f first
			select {
			case f = <-got:
			case <-time.After(waitTimeout):
				cancel()
				t.Fatalf("the first chunk did not arrive within %v while the upstream held the rest: signpost buffered the response", waitTimeout)
			}
			if f.err != nil {
				t.Fatalf("reading the first chunk: %v", f.err)
			}
			defer f.res.Body.Close()
			if string(f.chunk) != tt.first {
				t.Fatalf("first chunk = %q, want %q", f.chunk, tt.first)
			}
			if finished.Load() {
				t.Fatal("the upstream finished before the first chunk arrived; the test proves nothing")
			}
			if f.res.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", f.res.StatusCode, tt.status)
			}
			if ct := f.res.Header.Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", ct, tt.contentType)
			}
			if f.res.ContentLength != -1 {
				t.Errorf("ContentLength = %d, want -1 (a stream of unknown length)", f.res.ContentLength)
			}

			g.open()
			rest, err := io.ReadAll(f.res.Body)
			if err != nil {
				t.Fatalf("reading the rest: %v", err)
			}
			if string(rest) != tt.rest {
				t.Errorf("rest = %q, want %q", rest, tt.rest)
			}
			if !finished.Load() {
				t.Error("the body ended before the upstream wrote its rest")
			}
			if tt.unmatched != "" {
				sp.wantCounter(t, 1, "signpost_upstream_errors_unmatched_total", "route", tt.unmatched, "status", "400")
			}
			if n := sp.total(t, "signpost_rejections_total"); n != 0 {
				t.Errorf("signpost_rejections_total = %v, want 0", n)
			}
		})
	}
}

// TestStreamErrorWrapped checks an event-stream error on a route whose
// rules concern its status, under the default wrap policy: signpost never
// reads a stream, so it answers at once with the wrapped body (no
// upstream words quoted), closes the upstream's stream instead of
// draining it, and counts the error as unmatched.
func TestStreamErrorWrapped(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	closed := make(chan struct{}, 1)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "data: {\"error\":\"Invalid status\"}\n\n")
		_ = http.NewResponseController(w).Flush()
		if !g.wait(r.Context()) {
			closed <- struct{}{}
		}
	}), g)
	sp := startSignpost(t, ticketsConfig, up.URL)

	start := time.Now()
	got := send(t, "PATCH", sp.URL+"/tickets/T-8841", []byte(`{"status":"open"}`), "Accept", "text/event-stream")
	if d := time.Since(start); d > waitTimeout {
		t.Errorf("answered after %v; a stream that is not read needs no waiting", d)
	}
	wantJSONError(t, got, http.StatusBadRequest, rejectedBody("400 Bad Request", ""))
	select {
	case <-closed:
	case <-time.After(waitTimeout):
		t.Errorf("the upstream's stream was not closed within %v of the wrapped answer", waitTimeout)
	}
	sp.wantCounter(t, 1, "signpost_upstream_errors_unmatched_total", "route", "update_ticket", "status", "400")
	if n := sp.total(t, "signpost_rejections_total"); n != 0 {
		t.Errorf("signpost_rejections_total = %v, want 0", n)
	}
}
