package mcp

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestRPCCall: MCP's JSON-RPC calls carry jsonrpc "2.0" and an id, which
// a server needs to answer them; arguments that give their own keep them.
func TestRPCCall(t *testing.T) {
	got := rpcCall([]byte(`{"method":"aria2.tellStatus","params":["2089b05ecca3d829"]}`))
	if v := gjson.GetBytes(got, "jsonrpc").Str; v != "2.0" {
		t.Errorf("jsonrpc %q in %s", v, got)
	}
	if id := gjson.GetBytes(got, "id"); id.Type != gjson.Number {
		t.Errorf("no numeric id in %s", got)
	}
	again := rpcCall([]byte(`{"method":"m"}`))
	if gjson.GetBytes(again, "id").Raw == gjson.GetBytes(got, "id").Raw {
		t.Errorf("two calls share the id %s", gjson.GetBytes(got, "id").Raw)
	}
	own := rpcCall([]byte(`{"jsonrpc":"2.0","id":"x","method":"m"}`))
	if id := gjson.GetBytes(own, "id").Raw; id != `"x"` {
		t.Errorf("the arguments' id became %s", id)
	}
}

// TestRPCError: a JSON-RPC error response is an error, whatever its
// status; signpost's becomes its own format again, message and all.
func TestRPCError(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		isErr      bool
		want       string
	}{
		{"signpost's", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"allowed values: a, b","data":{"error":"invalid_method","field":"method","received":"c","retryable":false}}}`,
			true, `{"error":"invalid_method","field":"method","received":"c","retryable":false,"message":"allowed values: a, b"}`},
		{"the upstream's own", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"No such method: c"}}`,
			true, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"No such method: c"}}`},
		{"a result", `{"jsonrpc":"2.0","id":1,"result":"ok"}`, false, ``},
		{"not JSON-RPC", `{"error":"nope"}`, false, ``},
	} {
		got, isErr := rpcError([]byte(tc.body))
		if isErr != tc.isErr || string(got) != tc.want {
			t.Errorf("%s: %t %s\nwant %t %s", tc.name, isErr, got, tc.isErr, tc.want)
		}
	}
	if _, ok := Text([]byte(`{"error":"invalid_method","field":"method","received":"c","retryable":false,"message":"allowed values: a, b"}`)); !ok {
		t.Error("signpost's body made again from the envelope does not read as signpost's")
	}
}
