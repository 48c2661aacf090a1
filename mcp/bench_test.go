package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
	"github.com/signpost-proxy/signpost/mcp"
	"github.com/signpost-proxy/signpost/rules"
)

// BenchmarkToolCall is one tools/call through the MCP server, over stdio
// pipes, to the ticket API served in process: a success, whose body the
// tool result carries. The client's and the upstream's work count too, so
// the figure is what a call costs end to end on one machine.
func BenchmarkToolCall(b *testing.B) {
	s := serve(b, "../configs/tickets.yaml")
	params := &sdk.CallToolParams{Name: "get_ticket", Arguments: map[string]any{"ticket_id": "T-8842"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := s.session.CallTool(ctx, params)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("get_ticket failed: %+v", res.Content)
		}
	}
}

// BenchmarkToolCallHTTP is one tools/call through the streamable HTTP
// transport, on a listener on 127.0.0.1, to the ticket API served in
// process: a success, a wrong status refused before the upstream, and the
// upstream's 404 for an unknown ticket, rewritten. The client's, HTTP's and
// the upstream's work count, as for an agent on the same machine. A failing
// call alternates two values, so that each is a first failure, not a
// repeat told to stop.
func BenchmarkToolCallHTTP(b *testing.B) {
	s := serveHTTP(b, "../configs/tickets.yaml")
	for _, bc := range []struct {
		name, tool string
		args       [2]string // alternated
		code       string    // the error wanted; empty for a success
		upstream   int64     // requests the upstream sees per call
	}{
		{name: "success", tool: "get_ticket", args: [2]string{`{"ticket_id":"T-8842"}`, `{"ticket_id":"T-8842"}`}, upstream: 1},
		{name: "rejected", tool: "update_ticket", code: "invalid_status",
			args: [2]string{`{"ticket_id":"T-8842","status":"OPEN"}`, `{"ticket_id":"T-8842","status":"Open"}`}},
		{name: "rewritten", tool: "update_ticket", code: "unknown_ticket", upstream: 1,
			args: [2]string{`{"ticket_id":"T-9998","status":"open"}`, `{"ticket_id":"T-9999","status":"open"}`}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var params [2]*sdk.CallToolParams
			for i, a := range bc.args {
				params[i] = &sdk.CallToolParams{Name: bc.tool, Arguments: json.RawMessage(a)}
			}
			ctx := context.Background()
			// Three calls first, checked in full: the loop checks only isError.
			for i := range 3 {
				before := s.api.n.Load()
				res, err := s.session.CallTool(ctx, params[i%2])
				if err != nil {
					b.Fatalf("tools/call %s %s: %v", bc.tool, bc.args[i%2], err)
				}
				body, _ := res.StructuredContent.(map[string]any)
				if code, _ := body["error"].(string); res.IsError != (bc.code != "") || code != bc.code || body["repeated"] != nil {
					b.Fatalf("tools/call %s %s: isError %t, %v; want error %q, not repeated", bc.tool, bc.args[i%2], res.IsError, body, bc.code)
				}
				if n := s.api.n.Load() - before; n != bc.upstream {
					b.Fatalf("tools/call %s %s: the upstream saw %d requests, want %d", bc.tool, bc.args[i%2], n, bc.upstream)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				res, err := s.session.CallTool(ctx, params[i%2])
				if err != nil {
					b.Fatal(err)
				}
				if res.IsError != (bc.code != "") {
					b.Fatalf("tools/call %s: isError %t, want %t", bc.tool, res.IsError, bc.code != "")
				}
			}
		})
	}
}

// httpServer is one Serve over streamable HTTP on 127.0.0.1 in front of
// the ticket API, with a client session of the SDK's own.
type httpServer struct {
	session *sdk.ClientSession
	api     *counting
}

// serveHTTP runs Serve on the rule file config with a streamable HTTP
// listener until the test ends, and connects a client to it over its own
// HTTP transport, whose connections are closed at the end for goleak.
func serveHTTP(t testing.TB, config string) *httpServer {
	t.Helper()
	s := &httpServer{api: &counting{h: ticketapi.New().Handler()}}
	upstream := httptest.NewServer(s.api)
	t.Cleanup(upstream.Close)
	cfg, err := rules.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := url.Parse(upstream.URL)
	addr, cancel, done := startHTTP(t, cfg, up, 0)
	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Serve did not return within %v of its context ending", wait)
		}
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "0"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), wait)
	defer ccancel()
	s.session, err = client.Connect(cctx, &sdk.StreamableClientTransport{
		Endpoint: "http://" + addr.String() + mcp.Endpoint, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1,
	}, nil)
	if err != nil {
		stop()
		t.Fatalf("connecting to http://%s%s: %v", addr, mcp.Endpoint, err)
	}
	t.Cleanup(func() {
		_ = s.session.Close()
		tr.CloseIdleConnections()
		stop()
	})
	return s
}
