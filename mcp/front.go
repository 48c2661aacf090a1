package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// front is the MCP server in front of the pipeline: one tool per route of
// the rules in force, each call made into the request the route describes
// and sent through the pipeline.
type front struct {
	server *sdk.Server
	// send delivers a request to the pipeline and returns its answer.
	send      func(*http.Request) (*http.Response, error)
	log       *slog.Logger
	maxResult int64
	// callerHeader is the header that tells callers apart for alias
	// learning and recovery tracking: each MCP session is one caller.
	callerHeader string

	rules atomic.Pointer[rules.Config] // the rules the tools come from

	mu     sync.Mutex        // serializes publish
	listed map[string]string // each tool published, by name: its definition
}

func newFront(version string, callerHeader string, send func(*http.Request) (*http.Response, error), log *slog.Logger) *front {
	f := &front{send: send, log: log, maxResult: DefaultMaxResult, callerHeader: callerHeader, listed: map[string]string{}}
	f.server = sdk.NewServer(&sdk.Implementation{Name: "signpost", Version: version},
		&sdk.ServerOptions{Logger: slog.New(warnings{log.Handler()}), Capabilities: &sdk.ServerCapabilities{
			Tools: &sdk.ToolCapabilities{ListChanged: true}}})
	f.server.AddReceivingMiddleware(f.unknownTools)
	return f
}

// publish makes cfg's routes the tools: a route new or changed since the
// last publish is added, one gone is removed, and each session connected
// is told the list changed. Calls from then on use cfg.
func (f *front) publish(cfg *rules.Config) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules.Store(cfg)
	next := make(map[string]string, len(cfg.Routes))
	for _, r := range cfg.Routes {
		t := r.Tool()
		schema, err := t.Input.MarshalJSON()
		if err != nil {
			// A schema is strings, numbers and lists of them.
			panic(fmt.Sprintf("mcp: the input schema of %s does not marshal: %v", r.Name, err))
		}
		def := t.Description + "\n" + string(schema)
		next[t.Name] = def
		if f.listed[t.Name] != def {
			f.server.AddTool(&sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(schema)}, f.call)
		}
	}
	var gone []string
	for name := range f.listed {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		f.server.RemoveTools(gone...)
	}
	f.listed = next
}

// call answers a tools/call. Only a cancelled call is a protocol error:
// everything the pipeline or the arguments get wrong is a tool result the
// model reads.
func (f *front) call(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	cfg := f.rules.Load()
	name := req.Params.Name
	route := cfg.Route(name)
	if route == nil {
		return errorResult(unknownTool(cfg, name, cfg.Limits)), nil
	}
	hreq, rejected := newRequest(ctx, route, req.Params.Arguments, cfg.Limits)
	if rejected != nil {
		f.log.Info("tool call rejected before the pipeline", "route", name, "code", rejected.Code, "field", rejected.Field,
			"faults", len(rejected.Errors)+len(rejected.Unlisted))
		return errorResult(rejected), nil
	}
	if h := f.callerHeader; h != "" && hreq.Header.Get(h) == "" && req.Session != nil && req.Session.ID() != "" {
		hreq.Header.Set(h, req.Session.ID())
	}
	res, err := f.send(hreq)
	if ctx.Err() != nil {
		// The client gave up on the call: whatever the pipeline made of
		// that is no answer to it.
		return nil, ctx.Err()
	}
	if err != nil {
		f.log.Warn("the pipeline did not answer a tool call", "route", name, "error", err.Error())
		return errorResult(rewrite.Failure(http.StatusServiceUnavailable, "signpost_unavailable",
			"signpost gave no answer, as when it is shutting down; the call may or may not have taken effect, so check before repeating it", false)), nil
	}
	return result(res, f.maxResult), nil
}

// warnings passes on the SDK's warnings and errors, not its chatter about
// each session.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnings) WithAttrs(as []slog.Attr) slog.Handler { return warnings{w.Handler.WithAttrs(as)} }
func (w warnings) WithGroup(name string) slog.Handler    { return warnings{w.Handler.WithGroup(name)} }
