package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// endpoint serves, over streamable HTTP until the test ends, an MCP server
// with three tools: ok, which succeeds; fail, a tool error; and distinct,
// a tool error unless its argument n is the same as in the call before.
func endpoint(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "0"}, nil)
	schema := map[string]any{"type": "object"}
	answer := func(isError bool) sdk.ToolHandler {
		return func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: isError, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("isError ", isError)}}}, nil
		}
	}
	s.AddTool(&sdk.Tool{Name: "ok", InputSchema: schema}, answer(false))
	s.AddTool(&sdk.Tool{Name: "fail", InputSchema: schema}, answer(true))
	var mu sync.Mutex
	last := map[string]string{} // session: n in its last call
	s.AddTool(&sdk.Tool{Name: "distinct", InputSchema: schema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct{ N string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		repeat := last[req.Session.ID()] == args.N
		last[req.Session.ID()] = args.N
		return &sdk.CallToolResult{IsError: repeat, Content: []sdk.Content{&sdk.TextContent{Text: "n " + args.N}}}, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// line parses mcpload's line into its fields.
func line(t *testing.T, out string) map[string]string {
	t.Helper()
	f := map[string]string{}
	for _, kv := range strings.Fields(out) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("%q in %q is not key=value", kv, out)
		}
		f[k] = v
	}
	for _, k := range []string{"calls", "errors", "rps", "p50_us", "p99_us", "total", "self_cpu_us"} {
		if _, ok := f[k]; !ok {
			t.Fatalf("no %s in %q", k, out)
		}
	}
	return f
}

func TestLoad(t *testing.T) {
	url := endpoint(t)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		noErrors bool   // errors=0
		stderr   string // in what it says, when it fails
	}{
		{name: "successes", args: []string{"-tool", "ok"}, noErrors: true},
		{name: "tool errors wanted", args: []string{"-tool", "fail", "-want-error"}, noErrors: true},
		{name: "a success where an error is wanted", args: []string{"-tool", "ok", "-want-error"}, code: 1, stderr: "every call to ok failed; the first: isError false, want true: isError false"},
		{name: "an unknown tool", args: []string{"-tool", "nope"}, code: 1, stderr: "every call to nope failed"},
		{name: "each call numbered", args: []string{"-tool", "distinct", "-args", `{"n":"x{n}"}`}, noErrors: true},
		{name: "calls not numbered", args: []string{"-tool", "distinct", "-args", `{"n":"x"}`}, code: 1, stderr: "every call to distinct failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-url", url, "-sessions", "3", "-warmup", "50ms", "-duration", "200ms", "-args", `{"a":1}`}, tc.args...)
			if code := run(args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.stderr)
			}
			f := line(t, stdout.String())
			if f["calls"] == "0" || (f["errors"] == "0") != tc.noErrors {
				t.Errorf("%s: want calls made and errors=0 to be %t", stdout.String(), tc.noErrors)
			}
			calls, _ := strconv.Atoi(f["calls"])
			total, _ := strconv.Atoi(f["total"])
			if total < calls {
				t.Errorf("%s: total below calls", stdout.String())
			}
		})
	}
}

func TestRefuses(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-tool", "ok"}, 2, "-url is required"},
		{[]string{"-url", "127.0.0.1:1/mcp", "-tool", "ok"}, 2, `-url "127.0.0.1:1/mcp": must be an http or https URL with a host`},
		{[]string{"-url", "http://127.0.0.1:1/mcp"}, 2, "-tool is required"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-tool", "ok", "-args", "[1]"}, 2, "-args [1]: must be one JSON object"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-tool", "ok", "-args", `{"n":{n}`}, 2, "-args {\"n\":{n}: must be one JSON object, with {n} where the call's number goes"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-tool", "ok", "-sessions", "0"}, 2, "-sessions 0: must be at least 1"},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-tool", "ok", "-duration", "0s"}, 2, "-duration 0s: must be positive"},
		// Port 1 on loopback: nothing listens there.
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-tool", "ok", "-sessions", "2"}, 1, "cannot open 2 sessions at http://127.0.0.1:1/mcp: 2 failed; the first: "},
	} {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("mcpload %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr.String(), tc.code, tc.stderr)
		}
		if took := time.Since(start); took > connectTimeout {
			t.Errorf("mcpload %s took %v", strings.Join(tc.args, " "), took)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tc := range []struct {
		n, p int
		want time.Duration
	}{{200, 50, 100}, {200, 99, 198}, {1, 50, 1}, {1, 99, 1}, {0, 50, 0}, {3, 50, 2}} {
		if got := percentile(d[:tc.n], tc.p); got != tc.want {
			t.Errorf("percentile of 1..%d, p%d = %d, want %d", tc.n, tc.p, got, tc.want)
		}
	}
}
