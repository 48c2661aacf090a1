package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/internal/jsontest"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
	"github.com/signpost-proxy/signpost/mcp"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

// initialize is an MCP initialize request, the first a client sends.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`

// foreignRefusal is the 403 a page from https://evil.example gets from a
// loopback listener: a JSON-RPC error with no id, whose message is
// signpost's text and whose data is its body.
const foreignRefusal = `{"jsonrpc":"2.0","error":{"code":-32600,` +
	`"message":"Error origin_not_allowed in Origin: ` + foreignRule + ` (you sent \"https://evil.example\")\nRetryable: no.",` +
	`"data":{"error":"origin_not_allowed","field":"Origin","message":"` + foreignRule + `","received":"https://evil.example","retryable":false}}}`

const foreignRule = "must be a loopback origin (localhost, 127.0.0.0/8 or [::1]) or one signpost was started with, " +
	"so that no other web page reaches the tools by DNS rebinding; to allow this origin, pass it to signpost mcp with --allow-origin, " +
	"e.g. --allow-origin https://agent.example.com"

// TestOriginOverStreamableHTTP: over streamable HTTP on a loopback address,
// every request, whatever its method, is checked for its Origin before the
// MCP handler sees it. No Origin, a loopback origin and an allowed one are
// served; a foreign or malformed one gets 403 with signpost's body in a
// JSON-RPC error. A client sending the allowed origin calls tools.
func TestOriginOverStreamableHTTP(t *testing.T) {
	cfg, err := rules.Load("../configs/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	upstream := httptest.NewServer(ticketapi.New().Handler())
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL)
	addr, cancel, done := startHTTPWith(t, cfg, mcp.Options{
		Proxy:          server.ServeOptions{Options: proxy.Options{Upstream: up}},
		AllowedOrigins: []string{"https://agent.example.com"},
	})
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	endpoint := "http://" + addr.String() + mcp.Endpoint
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	for _, tc := range []struct {
		name, method string
		origin       []string
		status       int
		body         string // the whole body of a refusal, or empty
		received     string // the value a refusal echoes, when body is empty
	}{
		{"no Origin", "POST", nil, 200, "", ""},
		{"localhost", "POST", []string{"http://localhost:3000"}, 200, "", ""},
		{"127.0.0.1", "POST", []string{"http://127.0.0.1:8090"}, 200, "", ""},
		{"::1", "POST", []string{"http://[::1]:8090"}, 200, "", ""},
		{"allowed", "POST", []string{"https://agent.example.com"}, 200, "", ""},
		{"foreign", "POST", []string{"https://evil.example"}, 403, foreignRefusal, ""},
		{"foreign, opening the stream for server messages", "GET", []string{"https://evil.example"}, 403, foreignRefusal, ""},
		{"foreign, ending a session", "DELETE", []string{"https://evil.example"}, 403, foreignRefusal, ""},
		{"foreign, rebound to a loopback-looking name", "POST", []string{"http://127.0.0.1.evil.example:8090"}, 403, "", `"http://127.0.0.1.evil.example:8090"`},
		{"null", "POST", []string{"null"}, 403, "", `"null"`},
		{"garbage", "POST", []string{"garbage"}, 403, "", `"garbage"`},
		{"two headers", "POST", []string{"http://localhost:3000", "https://evil.example"}, 403, "", `"http://localhost:3000, https://evil.example"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(initialize)
			}
			req, err := http.NewRequest(tc.method, endpoint, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for _, o := range tc.origin {
				req.Header.Add("Origin", o)
			}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("%s with Origin %q: %d %s; want %d", tc.method, tc.origin, res.StatusCode, got, tc.status)
			}
			if tc.status != 403 {
				// End the session begun, from the same origin.
				if id := res.Header.Get("Mcp-Session-Id"); id != "" {
					req, _ := http.NewRequest("DELETE", endpoint, nil)
					req.Header.Set("Mcp-Session-Id", id)
					req.Header["Origin"] = tc.origin
					if res, err := hc.Do(req); err != nil || res.StatusCode/100 != 2 {
						t.Errorf("DELETE of the session: %v %v", err, res)
					} else {
						res.Body.Close()
					}
				}
				return
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if tc.body != "" && !jsontest.Same(string(got), tc.body) {
				t.Errorf("body:\n\t%s\nwant\n\t%s", got, tc.body)
			}
			if tc.received != "" && (!strings.Contains(string(got), `"received":`+tc.received) ||
				!strings.Contains(string(got), `"error":"origin_not_allowed","field":"Origin"`) || strings.Contains(string(got), `"id"`)) {
				t.Errorf("body %s; want a JSON-RPC error with no id, origin_not_allowed in Origin, received %s", got, tc.received)
			}
		})
	}

	// A browser-based client on the allowed origin calls tools as any other.
	ctx, ccancel := context.WithTimeout(context.Background(), wait)
	defer ccancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: withOrigin{"https://agent.example.com"}}}, nil)
	if err != nil {
		t.Fatalf("connecting from the allowed origin: %v", err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "get_ticket", Arguments: map[string]any{"ticket_id": "T-8841"}})
	if err != nil || res.IsError {
		t.Errorf("get_ticket from the allowed origin: %v %+v", err, res)
	}
}

// withOrigin sends each request with an Origin header, as a browser does.
type withOrigin struct{ origin string }

func (o withOrigin) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Origin", o.origin)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeRefusesABadAllowedOrigin: Serve refuses to start with an allowed
// origin that is not one, naming it and the rule.
func TestServeRefusesABadAllowedOrigin(t *testing.T) {
	cfg, err := rules.Load("../configs/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	up, _ := url.Parse("http://127.0.0.1:1")
	err = mcp.Serve(context.Background(), cfg, mcp.Options{
		Proxy:  server.ServeOptions{Options: proxy.Options{Upstream: up}, Admin: "127.0.0.1:0"},
		Listen: "127.0.0.1:0", AllowedOrigins: []string{"*"},
	})
	const want = `allowed origin "*": signpost has no wildcard origin: name each origin whose pages may call the tools`
	if err == nil || err.Error() != want {
		t.Errorf("Serve: %v; want %s", err, want)
	}
}
