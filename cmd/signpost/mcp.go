package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/signpost-proxy/signpost/mcp"
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
	var origins originList
	fs.Var(&origins, "allow-origin", "let web pages from `origin` (scheme://host[:port], e.g. https://agent.example.com) call the tools over --listen; repeat the flag or separate origins with commas. "+
		"A request with no Origin, from a client that is not a browser, is always served, and so is a loopback origin on a loopback --listen; any other Origin gets 403")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if problem := origins.check(f.listen); problem != "" {
			fmt.Fprintf(stderr, "signpost mcp: %s\n", problem)
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
		opts := mcp.Options{Proxy: popts, Listen: f.listen, AllowedOrigins: origins, Version: version}
		return f.untilSignal(&opts.Proxy, func() (pipeline, error) { return mcp.New(cfg, opts) }, stderr)
	}
}

// originList is --allow-origin: the origins whose web pages may call the
// tools, from every use of the flag, each use one origin or several
// separated by commas.
type originList []string

func (o *originList) String() string { return strings.Join(*o, ",") }

func (o *originList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		*o = append(*o, strings.TrimSpace(s))
	}
	return nil
}

// check says what is wrong with the origins, naming the first value at
// fault, the rule and an example; "" when nothing is. The origins are
// checked over streamable HTTP alone, so they need --listen.
func (o originList) check(listen string) string {
	for _, s := range o {
		if _, err := mcp.ParseOrigin(s); err != nil {
			rule, fixed := err.Error(), ""
			if oe := (*mcp.OriginError)(nil); errors.As(err, &oe) {
				rule, fixed = oe.Rule, oe.Fixed
			}
			return fmt.Sprintf("--allow-origin %q: %s, e.g. --allow-origin %s", s, rule, cmp.Or(fixed, "https://agent.example.com"))
		}
	}
	if len(o) > 0 && listen == "" {
		return "--allow-origin applies to streamable HTTP, and no Origin comes over standard input and output; pass --listen too, e.g. --listen 127.0.0.1:8090 --allow-origin " + o[0]
	}
	return ""
}
