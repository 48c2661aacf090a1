package test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/jsontest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// mcpTransports are the ways an MCP client reaches signpost mcp: a desktop
// agent runs it and speaks over its standard input and output; a remote
// agent connects over streamable HTTP.
var mcpTransports = []string{"stdio", "streamable-http"}

// mcpServer is one signpost mcp process, and a client session of the
// SDK's own connected to it.
type mcpServer struct {
	*signpost
	session  *sdk.ClientSession
	endpoint string // the streamable HTTP endpoint's URL; empty over stdio
}

// startMCP runs signpost mcp with config in front of upstream, over
// transport, with the extra flags last, and connects a client to it. At
// cleanup the process must exit 0, promptly, with no data race reported:
// over stdio once the client closes its standard input, over HTTP on
// SIGTERM with the session open.
func startMCP(t *testing.T, transport, config, upstream string, extra ...string) *mcpServer {
	t.Helper()
	args := []string{"mcp", "--config", config, "--upstream", upstream, "--admin", "127.0.0.1:0", "--drain-timeout", "3s", "--buffer-budget", "8MiB"}
	args = append(args, extra...)
	client := sdk.NewClient(&sdk.Implementation{Name: "signpost-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	serving := func(l logLine) bool { return l["msg"] == "serving tools over MCP" }
	if transport == "stdio" {
		sp := &signpost{stdout: newLogBuffer(), stderr: newLogBuffer(), done: make(chan struct{})}
		sp.cmd = exec.Command(binary, args...)
		sp.cmd.Env = childEnv()
		sp.cmd.Stderr = sp.stderr // the log; standard output is the protocol's
		session, err := client.Connect(ctx, &sdk.CommandTransport{Command: sp.cmd, TerminateDuration: stopTimeout}, nil)
		if err != nil {
			t.Fatalf("connecting to signpost %v over stdio: %v\nstderr:\n%s", args, err, sp.stderr)
		}
		line, ok := sp.stderr.waitLine(startTimeout, nil, serving)
		if !ok {
			_ = session.Close()
			t.Fatalf("signpost mcp logged no %q line on stderr:\n%s", "serving tools over MCP", sp.stderr)
		}
		sp.Admin = "http://" + line["admin"].(string)
		t.Cleanup(func() {
			start := time.Now()
			err := session.Close() // closes its stdin, then waits for it to exit
			if took := time.Since(start); err != nil || took >= stopTimeout {
				t.Errorf("signpost mcp over stdio, its input closed: exit error %v after %v; want exit 0 well within %v", err, took, stopTimeout)
			}
			// An exit with no signal writes the log's last lines too.
			for _, msg := range []string{"MCP session over stdio ended", "shutting down"} {
				if !strings.Contains(sp.stderr.String(), `"msg":"`+msg+`"`) {
					t.Errorf("signpost mcp exited without writing its %q log line", msg)
				}
			}
			if strings.Contains(sp.stderr.String(), "WARNING: DATA RACE") {
				t.Errorf("the race detector reported a data race in signpost")
			}
			if t.Failed() {
				t.Logf("signpost %v\nstderr:\n%s", args, sp.stderr)
			}
		})
		return &mcpServer{signpost: sp, session: session}
	}
	sp := launch(t, append(args, "--listen", "127.0.0.1:0")...)
	line, ok := sp.stdout.waitLine(startTimeout, sp.done, serving)
	if !ok {
		t.Fatalf("signpost mcp logged no %q line:\n%s\nstderr:\n%s", "serving tools over MCP", sp.stdout, sp.stderr)
	}
	endpoint, _ := line["endpoint"].(string)
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") || !strings.HasSuffix(endpoint, "/mcp") {
		t.Fatalf("endpoint %q, want http://127.0.0.1:PORT/mcp", endpoint)
	}
	sp.Admin = "http://" + line["admin"].(string)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	// Registered after launch's, so run before it: SIGTERM must end the
	// process while the session is still open, its stream for server
	// messages included, with exit 0.
	t.Cleanup(func() {
		sp.wantCleanExit(t)
		_ = session.Close()
	})
	return &mcpServer{signpost: sp, session: session, endpoint: endpoint}
}

// wantCleanExit sends SIGTERM and wants exit 0 within the drain timeout
// the tests give (3s): a session's open stream must not hold the shutdown.
func (sp *signpost) wantCleanExit(t *testing.T) {
	t.Helper()
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
		return
	}
	if !sp.wait(3 * time.Second) {
		t.Errorf("signpost mcp did not exit within 3s of SIGTERM")
		return
	}
	if code := sp.exitCode(); code != 0 {
		t.Errorf("signpost mcp exited %d after SIGTERM, want 0", code)
	}
}

// call calls a tool with arguments given as JSON, bounded in time.
func (m *mcpServer) call(t *testing.T, tool, args string) *sdk.CallToolResult {
	t.Helper()
	var a any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("arguments %s: %v", args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := m.session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: a})
	if err != nil {
		t.Fatalf("tools/call %s %s: %v", tool, args, err)
	}
	return res
}

// toolResult is what a model's client sees of a tool result: whether it
// is an error, its one text block, and its structured content as JSON.
type toolResult struct {
	isError    bool
	text       string
	structured string
}

func readResult(t *testing.T, res *sdk.CallToolResult) toolResult {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content blocks, want one text block", len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("the content is %T, want text", res.Content[0])
	}
	out := toolResult{isError: res.IsError, text: text.Text}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		out.structured = string(b)
	}
	return out
}

// wantToolError checks a tool execution error: isError, signpost's body as
// the structured content, and the text a model reads.
func wantToolError(t *testing.T, got toolResult, body, text string) {
	t.Helper()
	if !got.isError {
		t.Errorf("isError is false; text:\n%s", got.text)
	}
	if !jsontest.Same(got.structured, body) {
		t.Errorf("structured content:\n\t%s\nwant\n\t%s", got.structured, body)
	}
	if got.text != text {
		t.Errorf("text:\n%s\nwant:\n%s", got.text, text)
	}
}

// TestMCPTickets drives signpost mcp in front of the ticket API as a model
// would, over each transport: the tools are the schema export, enums
// included; a wrong status is a tool error with the body and a readable
// text, without reaching the upstream; three wrong fields are one batched
// result; a success is the upstream's body, byte for byte; and the admin
// listener counts the rejections as serve's does.
func TestMCPTickets(t *testing.T) {
	t.Parallel()
	export, code := schemaExport(t, ticketsConfig)
	if code != 0 {
		t.Fatalf("signpost schema --format mcp exited %d", code)
	}
	for _, transport := range mcpTransports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			api := &counting{h: ticketapi.New().Handler()}
			up := newUpstream(t, api)
			m := startMCP(t, transport, ticketsConfig, up.URL)

			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			list, err := m.session.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantTools(t, list.Tools, export)

			got := readResult(t, m.call(t, "update_ticket", `{"ticket_id":"T-8841","status":"OPEN"}`))
			wantToolError(t, got,
				`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`,
				"Error invalid_status in status: allowed values: open, pending, closed (you sent \"OPEN\")\nRetryable: no.")

			got = readResult(t, m.call(t, "create_ticket", threeFaults))
			wantToolError(t, got, threeFaultsBody,
				"Error validation_failed: 3 fields are invalid; fix each one listed, then repeat the call.\n"+
					"- status: allowed values: open, pending, closed (you sent \"ACTIVE\")\n"+
					"- priority: allowed values: p1, p2, p3 (you sent \"urgent\")\n"+
					"- due_at: must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z (you sent \"next Friday\")\n"+
					"Retryable: no.")
			if n := api.n.Load(); n != 0 {
				t.Errorf("the upstream saw %d requests of calls at fault; tools validate before it", n)
			}

			direct := send(t, "GET", up.URL+"/tickets/T-8841", nil)
			got = readResult(t, m.call(t, "get_ticket", `{"ticket_id":"T-8841"}`))
			if got.isError || got.text != string(direct.body) || !jsontest.Same(got.structured, string(direct.body)) {
				t.Errorf("get_ticket: isError %t, text %q, structured %s; want the upstream's body %q", got.isError, got.text, got.structured, direct.body)
			}

			m.wantCounter(t, 1, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status")
			m.wantCounter(t, 8<<20, "signpost_buffer_budget_bytes") // --buffer-budget 8MiB
			for _, f := range [][2]string{{"status", "invalid_status"}, {"priority", "invalid_priority"}, {"due_at", "invalid_due_at"}} {
				m.wantCounter(t, 1, "signpost_rejections_total", "route", "create_ticket", "code", f[1], "field", f[0])
			}
		})
	}
}

// TestMCPFutile books a slot someone else holds over each transport: the
// tool error says that repeating the call cannot succeed and what to call
// instead, and that call succeeds.
func TestMCPFutile(t *testing.T) {
	t.Parallel()
	for _, transport := range mcpTransports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, newBookingAPI().Handler())
			m := startMCP(t, transport, "../configs/bookings.yaml", up.URL)

			got := readResult(t, m.call(t, "book_slot", `{"room_id":"R-12","starts_at":"2026-03-12T09:00:00Z","minutes":60}`))
			const message = `the slot at \"2026-03-12T09:00:00Z\" is already booked; repeating this call cannot succeed; choose another slot with list_slots(room_id, date)`
			wantToolError(t, got,
				`{"error":"slot_taken","field":"starts_at","message":"`+message+`","received":"2026-03-12T09:00:00Z",`+
					`"next_call":{"call":"list_slots","arguments":{"room_id":"R-12"}},"retryable":false}`,
				"Error slot_taken in starts_at: "+strings.ReplaceAll(message, `\"`, `"`)+"\nNext call: list_slots with {\"room_id\":\"R-12\"}\nRetryable: no.")

			slots := readResult(t, m.call(t, "list_slots", `{"room_id":"R-12","date":"2026-03-12"}`))
			if slots.isError || !strings.Contains(slots.text, `{"starts_at":"2026-03-12T10:00:00Z","free":true}`) {
				t.Errorf("list_slots: isError %t, %s; want the free slots", slots.isError, slots.text)
			}
		})
	}
}

// schemaExport runs signpost schema --format mcp on config.
func schemaExport(t *testing.T, config string) ([]byte, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "schema", config, "--format", "mcp")
	cmd.Env = childEnv()
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return out, exit.ExitCode()
		}
		t.Fatalf("signpost schema: %v", err)
	}
	return out, 0
}

// wantTools checks that tools/list holds exactly the tools of the schema
// export, names, descriptions and input schemas alike, and that the enums
// a model needs before its first call are there.
func wantTools(t *testing.T, tools []*sdk.Tool, export []byte) {
	t.Helper()
	var want struct {
		Tools []struct {
			Name, Description string
			InputSchema       json.RawMessage
		}
	}
	if err := json.Unmarshal(export, &want); err != nil {
		t.Fatalf("the schema export: %v", err)
	}
	listed := map[string]*sdk.Tool{}
	for _, tool := range tools {
		listed[tool.Name] = tool
	}
	if len(listed) != len(want.Tools) {
		t.Errorf("%d tools listed, the schema export has %d", len(listed), len(want.Tools))
	}
	for _, w := range want.Tools {
		tool := listed[w.Name]
		if tool == nil {
			t.Errorf("no tool %s", w.Name)
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if tool.Description != w.Description || !jsontest.Same(string(schema), string(w.InputSchema)) {
			t.Errorf("tool %s differs from the schema export:\n got %q %s\nwant %q %s", w.Name, tool.Description, schema, w.Description, w.InputSchema)
		}
	}
	for tool, enum := range map[string][2]string{
		"update_ticket": {"status", `["open","pending","closed",null]`},
		"create_ticket": {"priority", `["p1","p2","p3"]`},
	} {
		schema, _ := json.Marshal(listed[tool].InputSchema)
		var s struct {
			Properties map[string]struct{ Enum json.RawMessage }
		}
		_ = json.Unmarshal(schema, &s)
		if got := string(s.Properties[enum[0]].Enum); !jsontest.Same(got, enum[1]) {
			t.Errorf("%s's %s enum = %s, want %s", tool, enum[0], got, enum[1])
		}
	}
}

// TestMCPObserve serves the ticket rules in observe mode as tools, over each
// transport: a wrong call reaches the API and its bare error comes back
// untouched, as a tool error, while signpost counts the one answer enforce
// would have sent (before the upstream, as tools validate) and records
// the exchange for signpost draft.
func TestMCPObserve(t *testing.T) {
	t.Parallel()
	tickets, err := os.ReadFile(ticketsConfig)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "observe.yaml")
	if err := os.WriteFile(config, append([]byte("mode: observe\n"), tickets...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, transport := range mcpTransports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			api := &counting{h: ticketapi.New().Handler()}
			up := newUpstream(t, api)
			m := startMCP(t, transport, config, up.URL)

			got := readResult(t, m.call(t, "update_ticket", `{"ticket_id":"T-8841","status":"OPEN"}`))
			if want := "400 Bad Request\n" + `{"error":"Invalid status"}`; !got.isError || got.text != want || !jsontest.Same(got.structured, `{"error":"Invalid status"}`) {
				t.Errorf("observing, a wrong status: isError %t, text %q, structured %s; want a tool error with the API's own status and body, %q", got.isError, got.text, got.structured, want)
			}
			if n := api.n.Load(); n != 1 {
				t.Errorf("the upstream saw %d requests; observe mode must pass the call on", n)
			}
			m.wantCounter(t, 1, "signpost_would_rewrite_total", "route", "update_ticket", "code", "invalid_status")
			m.wantCounter(t, 0, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status")

			got = readResult(t, m.call(t, "update_ticket", `{"ticket_id":"T-8841","status":"closed"}`))
			if got.isError {
				t.Errorf("observing, a right status: a tool error: %s", got.text)
			}
			var doc struct {
				Operations []struct {
					Route    string
					Requests int
				}
			}
			r := send(t, "GET", m.Admin+"/draft", nil)
			if json.Unmarshal(r.body, &doc) != nil || len(doc.Operations) != 1 || doc.Operations[0].Route != "update_ticket" || doc.Operations[0].Requests != 2 {
				t.Errorf("GET /draft: %s; want update_ticket with the 2 calls observed", r.body)
			}
		})
	}
}

// TestMCPOrigin: over streamable HTTP, signpost mcp checks each request's
// Origin, against DNS rebinding. A page from a foreign origin gets 403 with
// a JSON-RPC error, without an id, carrying signpost's body, and the
// operator a log line naming the origin; a client on an origin passed to
// --allow-origin, or on a loopback one, is served and calls tools.
func TestMCPOrigin(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, ticketapi.New().Handler())
	m := startMCP(t, "streamable-http", ticketsConfig, up.URL, "--allow-origin", "https://agent.example.com")

	const rule = "must be a loopback origin (localhost, 127.0.0.0/8 or [::1]) or one signpost was started with, " +
		"so that no other web page reaches the tools by DNS rebinding; to allow this origin, pass it to signpost mcp with --allow-origin, " +
		"e.g. --allow-origin https://agent.example.com"
	got := send(t, "POST", m.endpoint, []byte(mcpInitialize), "Content-Type", "application/json",
		"Accept", "application/json, text/event-stream", "Origin", "https://evil.example")
	want := `{"jsonrpc":"2.0","error":{"code":-32600,` +
		`"message":"Error origin_not_allowed in Origin: ` + rule + ` (you sent \"https://evil.example\")\nRetryable: no.",` +
		`"data":{"error":"origin_not_allowed","field":"Origin","message":"` + rule + `","received":"https://evil.example","retryable":false}}}`
	if got.status != 403 || got.header.Get("Content-Type") != jsonType || got.contentLength != int64(len(got.body)) || string(got.body) != want {
		t.Errorf("initialize from a foreign origin: %d, Content-Type %q, length %d,\n\t%s\nwant 403 %s, framed by its length,\n\t%s",
			got.status, got.header.Get("Content-Type"), got.contentLength, got.body, jsonType, want)
	}
	m.waitLog(t, "refused an MCP request from a web page origin not allowed", map[string]any{"origin": "https://evil.example"})

	got = send(t, "POST", m.endpoint, []byte(mcpInitialize), "Content-Type", "application/json",
		"Accept", "application/json, text/event-stream", "Origin", "http://localhost:3000")
	if got.status != 200 {
		t.Errorf("initialize from a loopback origin: %d %s; want 200", got.status, got.body)
	}

	for _, origin := range []string{"https://agent.example.com", "https://evil.example"} {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		c := sdk.NewClient(&sdk.Implementation{Name: "signpost-e2e-browser", Version: "1"}, nil)
		session, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: m.endpoint, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: withOrigin(origin)}}, nil)
		if origin == "https://evil.example" {
			if err == nil {
				session.Close()
				t.Errorf("a client on %s connected; want it refused", origin)
			}
			continue
		}
		if err != nil {
			t.Fatalf("connecting from %s, an allowed origin: %v", origin, err)
		}
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "get_ticket", Arguments: map[string]any{"ticket_id": "T-8841"}})
		if err != nil || res.IsError {
			t.Errorf("get_ticket from %s: %v %+v", origin, err, res)
		}
		session.Close()
	}
}

// mcpInitialize is an MCP initialize request, the first a client sends.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"signpost-e2e","version":"1"}}}`

// withOrigin sends each request with this Origin header, as a browser does.
type withOrigin string

func (o withOrigin) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Origin", string(o))
	return http.DefaultTransport.RoundTrip(r)
}
