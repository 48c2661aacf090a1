package main

import (
	"context"
	"flag"
	"io"

	"github.com/signpost-proxy/signpost/proxy/mcp"
)

const mcpHelp = `Usage: signpost mcp --config FILE [--listen ADDR] [flags]

Serves every route of the rule file as an MCP tool, named by the route, with
the input schema signpost schema --format mcp exports. A call is sent through
the same pipeline as signpost serve; a success returns the upstream's body,
an error returns signpost's actionable body as a tool error. Without --listen
it speaks over standard input and output and logs to standard error; with it,
over streamable HTTP at http://ADDR` + mcp.Endpoint + `.`

// mcpWords are the shared flags' words for mcp.
var mcpWords = pipelineWords{
	config:        "rule `file` whose routes become tools (required)",
	listen:        "serve streamable HTTP at `address`, path " + mcp.Endpoint + ", instead of standard input and output",
	drain:         "how long shutdown waits for tool calls in flight",
	watch:         "reload the rules and tools when the rule file or a catalog it names changes (SIGHUP and POST /-/reload always do)",
	maxConcurrent: "the most calls served at once; past it, a retryable overloaded error (0 means no bound)",
	accessLog:     "log one line per call: method, path, route, status, outcome, duration, request id",
	noConfig:      "--config names the rule file whose routes become tools, e.g. signpost mcp --config configs/tickets.yaml",
}

// mcpCmd serves a rule file's routes as MCP tools: over standard input and
// output by default, for desktop agents, or over streamable HTTP with
// --listen, for remote ones. The calls go through the pipeline serve runs,
// with its reloads, metrics and admin listener.
func mcpCmd(fs *flag.FlagSet) runFunc {
	var f pipelineFlags
	f.define(fs, "mcp", mcpWords)
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		// Over stdio, standard output carries the protocol and nothing else.
		logTo := stdout
		if f.listen == "" {
			logTo = stderr
		}
		cfg, popts, code := f.start(fs.Args(), logTo, stderr)
		if code != exitOK {
			return code
		}
		opts := mcp.Options{Proxy: popts, Listen: f.listen, Version: version}
		return f.untilSignal(&opts.Proxy, func(ctx context.Context) error { return mcp.Serve(ctx, cfg, opts) }, stderr)
	}
}
