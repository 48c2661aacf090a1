package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/jsontest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
	"github.com/signpost-proxy/signpost/mcp"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

// wait bounds every wait in these tests.
const wait = 10 * time.Second

// counting counts the requests an upstream handler serves.
type counting struct {
	h http.Handler
	n atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.h.ServeHTTP(w, r)
}

// mcpServer is one Serve over stdio pipes in front of the ticket API, with a
// client session of the SDK's own.
type mcpServer struct {
	session  *sdk.ClientSession
	upstream *httptest.Server
	api      *counting
	admin    string        // admin base URL
	changed  chan struct{} // a tools/list_changed notification arrived
}

// serve runs Serve on the rule file config, over stdio pipes, until the
// test ends, and connects a client to it.
func serve(t testing.TB, config string) *mcpServer {
	t.Helper()
	return serveWith(t, config, ticketapi.New().Handler())
}

// serveWith is serve in front of the upstream api.
func serveWith(t testing.TB, config string, api http.Handler) *mcpServer {
	t.Helper()
	s := &mcpServer{api: &counting{h: api}, changed: make(chan struct{}, 8)}
	s.upstream = httptest.NewServer(s.api)
	t.Cleanup(s.upstream.Close)
	cfg, err := rules.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	up, _ := url.Parse(s.upstream.URL)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	opts := mcp.Options{
		Proxy: server.ServeOptions{
			Options: proxy.Options{Upstream: up},
			Admin:   "127.0.0.1:0",
			Load:    func() (*rules.Config, error) { return rules.Load(config) },
		},
		In: serverIn, Out: serverOut, Version: "test",
		Ready: func(_, admin net.Addr) { ready <- admin },
	}
	go func() { done <- mcp.Serve(ctx, cfg, opts) }()
	select {
	case a := <-ready:
		s.admin = "http://" + a.String()
	case err := <-done:
		t.Fatalf("Serve returned before it was ready: %v", err)
	case <-time.After(wait):
		t.Fatal("Serve was not ready in time")
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.changed <- struct{}{} },
	})
	cctx, ccancel := context.WithTimeout(ctx, wait)
	defer ccancel()
	s.session, err = client.Connect(cctx, &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() {
		// Closing the client's end is how a desktop agent stops a server.
		_ = s.session.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Serve did not return within %v of the client closing its end", wait)
		}
		cancel()
	})
	return s
}

// call calls a tool with arguments given as JSON.
func (s *mcpServer) call(t *testing.T, name, args string) *sdk.CallToolResult {
	t.Helper()
	var a any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("arguments %s: %v", args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := s.session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		t.Fatalf("tools/call %s %s: %v", name, args, err)
	}
	return res
}

// textOf is a result's text content, the one block there is.
func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content blocks, want one text block: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// structured is a result's structured content, as compact JSON.
func structured(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if res.StructuredContent == nil {
		return ""
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestToolsAreTheSchemaExport lists the tools and compares them with what
// signpost schema --format mcp exports for the same file.
func TestToolsAreTheSchemaExport(t *testing.T) {
	const config = "../configs/tickets.yaml"
	s := serve(t, config)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	got, err := s.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rules.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	export, err := cfg.MarshalTools("mcp")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Tools []struct {
			Name, Description string
			InputSchema       json.RawMessage
		}
	}
	if err := json.Unmarshal(export, &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != len(want.Tools) {
		t.Fatalf("%d tools, want %d", len(got.Tools), len(want.Tools))
	}
	listed := map[string]*sdk.Tool{}
	for _, tool := range got.Tools {
		listed[tool.Name] = tool
	}
	for _, w := range want.Tools {
		tool := listed[w.Name]
		if tool == nil {
			t.Errorf("no tool %s", w.Name)
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if tool.Description != w.Description || !jsontest.Same(string(schema), string(w.InputSchema)) {
			t.Errorf("tool %s:\n got %q %s\nwant %q %s", w.Name, tool.Description, schema, w.Description, w.InputSchema)
		}
	}
	if enum := listed["update_ticket"].InputSchema.(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)["enum"]; !jsontest.Same(mustJSON(t, enum), `["open","pending","closed",null]`) {
		t.Errorf("update_ticket's status enum = %v", enum)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCalls calls the ticket API's tools the ways a model gets them right
// and wrong. A success is the upstream's body unchanged; a fault is a tool
// error with signpost's body as structured content and its text rendering;
// faults in the arguments never reach the upstream.
func TestCalls(t *testing.T) {
	s := serve(t, "../configs/tickets.yaml")
	for _, tc := range []struct {
		name, tool, args string
		// body is the structured content wanted (for a success, the
		// upstream's body, which is also the text).
		body     string
		isError  bool
		text     string // for an error: the text rendering wanted
		upstream int64  // requests the upstream sees
	}{
		{name: "a success is the upstream's body", tool: "get_ticket", args: `{"ticket_id":"T-8841"}`,
			body:     `{"ticket_id":"T-8841","title":"Export fails on large reports","status":"open","priority":"p2","customer_id":"C-1042","assignee":"eng-3","updated_at":"2026-03-11T09:14:02Z"}`,
			upstream: 1},
		{name: "a wrong value, with the rule and an example", tool: "assign_ticket", args: `{"ticket_id":"T-8841","assignee":"Dana"}`,
			isError: true,
			body:    `{"error":"invalid_assignee","field":"assignee","message":"must match the pattern ^eng-[0-9]+$, e.g. eng-3","received":"Dana","retryable":false}`,
			text:    "Error invalid_assignee in assignee: must match the pattern ^eng-[0-9]+$, e.g. eng-3 (you sent \"Dana\")\nRetryable: no."},
		{name: "three wrong fields in one result", tool: "create_ticket",
			args:    `{"title":"","status":"open","priority":"p2","due_at":"next Friday","customer_id":"42"}`,
			isError: true,
			body: `{"error":"validation_failed","message":"3 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"title","code":"invalid_title","message":"is empty; must be a non-empty string of at most 200 characters","received":""},` +
				`{"field":"due_at","code":"invalid_due_at","message":"must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z","received":"next Friday"},` +
				`{"field":"customer_id","code":"invalid_customer_id","message":"must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query)","received":"42"}],"retryable":false}`,
			text: "Error validation_failed: 3 fields are invalid; fix each one listed, then repeat the call.\n" +
				"- title: is empty; must be a non-empty string of at most 200 characters (you sent \"\")\n" +
				"- due_at: must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z (you sent \"next Friday\")\n" +
				"- customer_id: must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query) (you sent \"42\")\n" +
				"Retryable: no."},
		{name: "the call to make first", tool: "update_ticket", args: `{"ticket_id":"T-8842","status":"closed"}`,
			isError: true, upstream: 1,
			body: `{"error":"ticket_unassigned","message":"an unassigned ticket cannot be closed; call assign_ticket first","next_call":{"call":"assign_ticket","arguments":{"ticket_id":"T-8842"}},"retryable":false}`,
			text: "Error ticket_unassigned: an unassigned ticket cannot be closed; call assign_ticket first\nNext call: assign_ticket with {\"ticket_id\":\"T-8842\"}\nRetryable: no."},
		{name: "a path variable left out", tool: "assign_ticket", args: `{"assignee":"Dana"}`,
			isError: true,
			body: `{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"ticket_id","code":"invalid_ticket_id","message":"is required; must match the pattern ^T-[0-9]+$, e.g. T-8841"},` +
				`{"field":"assignee","code":"invalid_assignee","message":"must match the pattern ^eng-[0-9]+$, e.g. eng-3","received":"Dana"}],"retryable":false}`,
			text: "Error validation_failed: 2 fields are invalid; fix each one listed, then repeat the call.\n" +
				"- ticket_id: is required; must match the pattern ^T-[0-9]+$, e.g. T-8841\n" +
				"- assignee: must match the pattern ^eng-[0-9]+$, e.g. eng-3 (you sent \"Dana\")\nRetryable: no."},
		{name: "a path variable that is two segments", tool: "get_ticket", args: `{"ticket_id":"T-1/comments"}`,
			isError: true,
			body:    `{"error":"invalid_ticket_id","field":"ticket_id","message":"must match the pattern ^T-[0-9]+$, e.g. T-8841","received":"T-1/comments","retryable":false}`,
			text:    "Error invalid_ticket_id in ticket_id: must match the pattern ^T-[0-9]+$, e.g. T-8841 (you sent \"T-1/comments\")\nRetryable: no."},
		{name: "a list where the query takes one value", tool: "search_customers", args: `{"query":["acme","globex"]}`,
			isError: true,
			body:    `{"error":"invalid_query","field":"query","message":"must be one value (a string, number or boolean), not an array, since it is sent as the query parameter query","received":["acme","globex"],"retryable":false}`,
			text:    "Error invalid_query in query: must be one value (a string, number or boolean), not an array, since it is sent as the query parameter query (you sent [\"acme\",\"globex\"])\nRetryable: no."},
		{name: "arguments that are not an object", tool: "search_customers", args: `["acme"]`,
			isError: true,
			body:    `{"error":"invalid_arguments","message":"the arguments must be one JSON object of named arguments: query","received":["acme"],"retryable":false}`,
			text:    "Error invalid_arguments: the arguments must be one JSON object of named arguments: query (you sent [\"acme\"])\nRetryable: no."},
		{name: "a number where the query takes text", tool: "search_customers", args: `{"query":1042}`,
			body: `{"customers":[{"customer_id":"C-1042","name":"Acme Corp"}]}`, upstream: 1},
		{name: "a created ticket", tool: "create_ticket",
			args:     `{"title":"Export fails","status":"open","priority":"p2","customer_id":"C-1042","source":"mcp"}`,
			body:     `{"ticket_id":"T-8843","title":"Export fails","status":"open","priority":"p2","customer_id":"C-1042","updated_at":"2026-03-11T09:14:02Z"}`,
			upstream: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.api.n.Load()
			res := s.call(t, tc.tool, tc.args)
			text := textOf(t, res)
			if res.IsError != tc.isError {
				t.Errorf("isError = %t, want %t; text:\n%s", res.IsError, tc.isError, text)
			}
			if got := structured(t, res); !jsontest.Same(got, tc.body) {
				t.Errorf("structured content:\n got %s\nwant %s", got, tc.body)
			}
			want := tc.text
			if !tc.isError {
				want = tc.body // byte for byte
			}
			if text != want {
				t.Errorf("text:\n%s\nwant:\n%s", text, want)
			}
			if n := s.api.n.Load() - before; n != tc.upstream {
				t.Errorf("the upstream saw %d requests, want %d", n, tc.upstream)
			}
		})
	}
}

// TestUnknownToolIsAProtocolError: a tool that is not listed is the
// client's mistake, not the model's: a protocol error, whose message and
// data say what signpost's body would, the tools there are and the closest
// name.
func TestUnknownToolIsAProtocolError(t *testing.T) {
	s := serve(t, "../configs/tickets.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	const body = `{"error":"unknown_tool","message":"no tool has this name; the tools are: get_ticket, update_ticket, create_ticket, assign_ticket, search_customers",` +
		`"received":"get_tickets","did_you_mean":["get_ticket"],"retryable":false}`
	const text = `Error unknown_tool: no tool has this name; the tools are: get_ticket, update_ticket, create_ticket, assign_ticket, search_customers (you sent "get_tickets"); did you mean "get_ticket"?` +
		"\nRetryable: no."
	res, err := s.session.CallTool(ctx, &sdk.CallToolParams{Name: "get_tickets"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("tools/call get_tickets: %+v, %v; want a protocol error", res, err)
	}
	if rpc.Code != jsonrpc.CodeInvalidParams || rpc.Message != text || string(rpc.Data) != body {
		t.Errorf("error %d %q, data %s\nwant %d %q, data %s", rpc.Code, rpc.Message, rpc.Data, jsonrpc.CodeInvalidParams, text, body)
	}
}

// TestReloadChangesTheTools reloads a rule file with a route more and one
// less, through the admin listener: the client is told the list changed,
// lists the new tool and not the old, and the new tool's calls are
// validated before the upstream like the others. The metrics count what
// the tools were refused.
func TestReloadChangesTheTools(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tickets.yaml")
	orig, err := os.ReadFile("../configs/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	s := serve(t, file)
	// get_ticket goes: no other route names it.
	start, end := strings.Index(string(orig), "  get_ticket:"), strings.Index(string(orig), "  update_ticket:")
	if start < 0 || end < start {
		t.Fatal("configs/tickets.yaml has no get_ticket before update_ticket")
	}
	more := string(orig[:start]) + string(orig[end:]) + `
  list_tickets:
    method: GET
    path: /tickets
    description: List tickets in a queue
    fields:
      queue: {required: true, enum: [billing, support, sales]}
`
	if err := os.WriteFile(file, []byte(more), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(s.admin+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /-/reload: %s", res.Status)
	}
	select {
	case <-s.changed:
	case <-time.After(wait):
		t.Fatal("no notifications/tools/list_changed after the reload")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	list, err := s.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Name == "list_tickets" && tool.Description != "List tickets in a queue. GET /tickets." {
			t.Errorf("list_tickets description %q", tool.Description)
		}
	}
	if got := strings.Join(names, " "); got != "assign_ticket create_ticket list_tickets search_customers update_ticket" {
		t.Fatalf("after the reload, the tools are %s", got)
	}
	if _, err := s.session.CallTool(ctx, &sdk.CallToolParams{Name: "get_ticket", Arguments: map[string]any{"ticket_id": "T-8841"}}); err == nil {
		t.Error("get_ticket is still called after the reload took it away")
	}
	before := s.api.n.Load()
	got := s.call(t, "list_tickets", `{"queue":"Returns"}`)
	if !got.IsError || !jsontest.Same(structured(t, got), `{"error":"invalid_queue","field":"queue","message":"allowed values: billing, support, sales","received":"Returns","retryable":false}`) {
		t.Errorf("list_tickets with a wrong queue: %s", structured(t, got))
	}
	if n := s.api.n.Load() - before; n != 0 {
		t.Errorf("the upstream saw %d requests of a call at fault", n)
	}
	metrics := get(t, s.admin+"/metrics")
	const want = `signpost_rejections_total{code="invalid_queue",field="queue",route="list_tickets"} 1`
	if !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestShutdownIsNotHeldByAnUnusedConnection: a connection accepted over the
// streamable HTTP transport that never sends a request, as a client's
// spare connection does, does not hold the shutdown past the drain
// timeout; net/http alone would wait five seconds for it.
func TestShutdownIsNotHeldByAnUnusedConnection(t *testing.T) {
	cfg, err := rules.Load("../configs/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	upstream := httptest.NewServer(ticketapi.New().Handler())
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL)
	addr, cancel, done := startHTTP(t, cfg, up, time.Second)
	defer cancel()
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(50 * time.Millisecond) // accepted, and silent
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v; want a clean shutdown", err)
		}
	case <-time.After(wait):
		t.Fatalf("Serve did not return within %v of its context ending", wait)
	}
}

// startHTTP runs Serve on cfg in front of up with a streamable HTTP
// listener on 127.0.0.1, and returns its address once it is ready, with
// what stops it and what Serve returns.
func startHTTP(t testing.TB, cfg *rules.Config, up *url.URL, drain time.Duration) (net.Addr, context.CancelFunc, <-chan error) {
	t.Helper()
	return startHTTPWith(t, cfg, mcp.Options{
		Proxy: server.ServeOptions{Options: proxy.Options{Upstream: up}, DrainTimeout: drain},
	})
}

// startHTTPWith is startHTTP with opts, whose admin and streamable HTTP
// listeners are put on free loopback ports.
func startHTTPWith(t testing.TB, cfg *rules.Config, opts mcp.Options) (net.Addr, context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	opts.Proxy.Admin, opts.Listen, opts.Version = "127.0.0.1:0", "127.0.0.1:0", "test"
	opts.Ready = func(addr, _ net.Addr) { ready <- addr }
	go func() { done <- mcp.Serve(ctx, cfg, opts) }()
	select {
	case addr := <-ready:
		return addr, cancel, done
	case err := <-done:
		cancel()
		t.Fatalf("Serve returned before it was ready: %v", err)
	case <-time.After(wait):
		cancel()
		t.Fatal("Serve was not ready in time")
	}
	return nil, cancel, done
}
