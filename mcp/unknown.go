package mcp

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/suggest"
	"github.com/tidwall/gjson"
)

// maxToolsNamed bounds the tools an unknown tool's answer lists.
const maxToolsNamed = 10

// unknownTool is the answer to a call of a tool the rules do not declare:
// the tools there are, up to maxToolsNamed, and the closest name to the
// one called; the name itself only in received.
func unknownTool(cfg *rules.Config, name string, lim rules.Limits) *rewrite.Error {
	names := make([]string, len(cfg.Routes))
	for i, r := range cfg.Routes {
		names[i] = r.Name
	}
	msg := "no tool has this name; call one of the tools listed"
	if len(names) > 0 {
		shown := names[:min(len(names), maxToolsNamed)]
		msg = "no tool has this name; the tools are: " + strings.Join(shown, ", ")
		if more := len(names) - len(shown); more > 0 {
			msg += ", and " + strconv.Itoa(more) + " more (list the tools)"
		}
	}
	e := rewrite.Failure(http.StatusNotFound, rewrite.CodeUnknownTool, msg, false)
	e.Received = rewrite.Received(gjson.Result{Type: gjson.String, Str: name}, lim.Received)
	if c := suggest.Closest(name, names); c != "" {
		e.DidYouMean = []string{c}
	}
	return e
}

// unknownTools answers a tools/call of a tool not listed with the protocol
// error the specification asks for, whose message and data say what
// signpost's body says: the tools there are, and the closest name.
func (f *front) unknownTools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		cfg := f.rules.Load()
		if cfg == nil || cfg.Route(call.Params.Name) != nil {
			return next(ctx, method, req)
		}
		e := unknownTool(cfg, call.Params.Name, cfg.Limits)
		text, _ := Text(e.JSON())
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: text, Data: e.JSON()}
	}
}
