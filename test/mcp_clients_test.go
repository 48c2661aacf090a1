package test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/signpost-proxy/signpost/internal/jsontest"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// TestMCPGoClient drives signpost mcp with github.com/mark3labs/mcp-go's
// client, a widely used one besides the SDK signpost is built on, with its
// defaults, over each transport: it connects, lists the tools the schema
// export defines, gets a tool error carrying signpost's body for a wrong
// status, and the upstream's body for a right call. The client opens with
// server/discover at the newest protocol revision it knows, 2026-07-28:
// over stdio signpost serves that revision; over streamable HTTP it serves
// revisions up to 2025-11-25, says so, and the client falls back to
// initialize at 2025-11-25 instead of sending every later request at a
// revision refused.
func TestMCPGoClient(t *testing.T) {
	t.Parallel()
	export, code := schemaExport(t, ticketsConfig)
	if code != 0 {
		t.Fatalf("signpost schema --format mcp exited %d", code)
	}
	for _, tc := range []struct{ transport, version string }{
		{"stdio", "2026-07-28"},
		{"streamable-http", "2025-11-25"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			api := &counting{h: ticketapi.New().Handler()}
			up := newUpstream(t, api)
			c := startMCPGo(t, tc.transport, up.URL)

			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
				ClientInfo: mcp.Implementation{Name: "signpost-e2e-mcp-go", Version: "1"}}})
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			if init.ProtocolVersion != tc.version || c.ProtocolVersion() != tc.version || init.ServerInfo.Name != "signpost" {
				t.Errorf("connected to %q at protocol version %q (client: %q); want signpost at %s",
					init.ServerInfo.Name, init.ProtocolVersion, c.ProtocolVersion(), tc.version)
			}

			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatalf("tools/list at protocol version %s: %v", c.ProtocolVersion(), err)
			}
			wantMCPGoTools(t, list.Tools, export)

			res, err := c.CallTool(ctx, mcpGoCall("update_ticket", `{"ticket_id":"T-8841","status":"OPEN"}`))
			if err != nil {
				t.Fatalf("tools/call update_ticket: %v", err)
			}
			got := mcpGoResult(t, res)
			wantToolError(t, got,
				`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`,
				"Error invalid_status in status: allowed values: open, pending, closed (you sent \"OPEN\")\nRetryable: no.")
			if n := api.n.Load(); n != 0 {
				t.Errorf("the upstream saw %d requests of a call at fault; tools validate before it", n)
			}

			direct := send(t, "GET", up.URL+"/tickets/T-8841", nil)
			res, err = c.CallTool(ctx, mcpGoCall("get_ticket", `{"ticket_id":"T-8841"}`))
			if err != nil {
				t.Fatalf("tools/call get_ticket: %v", err)
			}
			got = mcpGoResult(t, res)
			if got.isError || got.text != string(direct.body) || !jsontest.Same(got.structured, string(direct.body)) {
				t.Errorf("get_ticket: isError %t, text %q, structured %s; want the upstream's body %q", got.isError, got.text, got.structured, direct.body)
			}
		})
	}
}

// startMCPGo runs signpost mcp in front of upstream over transport and
// starts an mcp-go client on it, with the client's defaults, not yet
// connected. Over stdio the client runs the process, whose standard error
// is kept for the log; it must exit 0 when the client closes. Over
// streamable HTTP, startMCP runs it.
func startMCPGo(t *testing.T, transportName, upstream string) *mcpgo.Client {
	t.Helper()
	if transportName == "stdio" {
		args := []string{"mcp", "--config", ticketsConfig, "--upstream", upstream, "--admin", "127.0.0.1:0", "--drain-timeout", "3s"}
		stderr := newLogBuffer()
		run := func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Stderr = env, stderr
			return cmd, nil
		}
		c, err := mcpgo.NewStdioMCPClientWithOptions(binary, childEnv(), args, transport.WithCommandFunc(run))
		if err != nil {
			t.Fatalf("starting signpost %v for mcp-go: %v", args, err)
		}
		t.Cleanup(func() {
			start := time.Now()
			err := c.Close() // closes its stdin, then waits for it to exit
			if took := time.Since(start); err != nil || took >= stopTimeout {
				t.Errorf("signpost mcp over stdio, its input closed by mcp-go: exit error %v after %v; want exit 0 well within %v", err, took, stopTimeout)
			}
			if strings.Contains(stderr.String(), "WARNING: DATA RACE") {
				t.Errorf("the race detector reported a data race in signpost")
			}
			if t.Failed() {
				t.Logf("signpost %v\nstderr:\n%s", args, stderr)
			}
		})
		return c
	}
	m := startMCP(t, transportName, ticketsConfig, upstream)
	c, err := mcpgo.NewStreamableHttpClient(m.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("starting mcp-go's streamable HTTP client on %s: %v", m.endpoint, err)
	}
	// Registered after startMCP's, so run before it: the session ends
	// before signpost is stopped.
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// mcpGoCall is a tools/call of tool with arguments given as JSON.
func mcpGoCall(tool, args string) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(args)
	return req
}

// mcpGoResult is what a model's client sees of an mcp-go tool result.
func mcpGoResult(t *testing.T, res *mcp.CallToolResult) toolResult {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content blocks, want one text block", len(res.Content))
	}
	text, ok := mcp.AsTextContent(res.Content[0])
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

// wantMCPGoTools checks that the tools mcp-go lists are those of the
// schema export: names, descriptions and input schemas.
func wantMCPGoTools(t *testing.T, tools []mcp.Tool, export []byte) {
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
	listed := map[string]mcp.Tool{}
	for _, tool := range tools {
		listed[tool.Name] = tool
	}
	if len(listed) != len(want.Tools) {
		t.Errorf("%d tools listed, the schema export has %d", len(listed), len(want.Tools))
	}
	for _, w := range want.Tools {
		tool, ok := listed[w.Name]
		if !ok {
			t.Errorf("no tool %s", w.Name)
			continue
		}
		var def struct{ InputSchema json.RawMessage }
		b, err := json.Marshal(tool)
		if err == nil {
			err = json.Unmarshal(b, &def)
		}
		if err != nil {
			t.Fatalf("tool %s: %v", w.Name, err)
		}
		if tool.Description != w.Description || !jsontest.Same(string(def.InputSchema), string(w.InputSchema)) {
			t.Errorf("tool %s differs from the schema export:\n got %q %s\nwant %q %s", w.Name, tool.Description, def.InputSchema, w.Description, w.InputSchema)
		}
	}
}
