package mcp_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall is one tools/call through the MCP server, over stdio
// pipes, to the ticket API served in process: a success, whose body the
// tool result carries. The client's and the upstream's work count too, so
// the figure is what a call costs end to end on one machine.
func BenchmarkToolCall(b *testing.B) {
	s := serve(b, "../../configs/tickets.yaml")
	params := &sdk.CallToolParams{Name: "get_ticket", Arguments: map[string]any{"ticket_id": "T-8841"}}
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
