package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/proxy/mcp"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

// mcpCmd serves a rule file's routes as MCP tools: over standard input and
// output by default, for desktop agents, or over streamable HTTP with
// --listen, for remote ones. The calls go through the pipeline serve runs,
// with its reloads, metrics and admin listener.
func mcpCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "rule `file` whose routes become tools (required)")
	upstream := fs.String("upstream", "", "upstream base `URL`, overriding the rule file's upstream:")
	listen := fs.String("listen", "", "serve streamable HTTP at `address`, path "+mcp.Endpoint+", instead of standard input and output")
	admin := fs.String("admin", "", "admin `address` for /metrics, /livez, /readyz and POST /-/reload, overriding the rule file's admin: (default "+rules.DefaultAdmin+")")
	timeout := fs.Duration("upstream-timeout", proxy.DefaultUpstreamTimeout, "how long to wait for the upstream's response headers")
	dial := fs.Duration("upstream-dial-timeout", proxy.DefaultDialTimeout, "how long to wait for a connection to the upstream")
	drain := fs.Duration("drain-timeout", server.DefaultDrainTimeout, "how long shutdown waits for tool calls in flight")
	watch := fs.Bool("watch", true, "reload the rules and tools when the rule file or a catalog it names changes (SIGHUP and POST /-/reload always do)")
	maxConcurrent := fs.Int("max-concurrent", 0, "the most calls served at once; past it, a retryable overloaded error (0 means no bound)")
	budget := bufferBudgetFlag(fs)
	accessLog := fs.Bool("access-log", false, "log one line per call: method, path, route, status, outcome, duration, request id")
	logFormat := fs.String("log-format", "json", "log format: json or text")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: signpost mcp --config FILE [--listen ADDR] [flags]

Serves every route of the rule file as an MCP tool, named by the route, with
the input schema signpost schema --format mcp exports. A call is sent through
the same pipeline as signpost serve; a success returns the upstream's body,
an error returns signpost's actionable body as a tool error. Without --listen
it speaks over standard input and output and logs to standard error; with it,
over streamable HTTP at http://ADDR%s.

Flags:
`, mcp.Endpoint)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "signpost mcp: --config names the rule file whose routes become tools, e.g. signpost mcp --config configs/tickets.yaml")
		return exitUsage
	}
	if *dial <= 0 {
		fmt.Fprintf(stderr, "signpost mcp: --upstream-dial-timeout %v: must be a positive duration, e.g. --upstream-dial-timeout %v\n", *dial, proxy.DefaultDialTimeout)
		return exitUsage
	}
	if *maxConcurrent < 0 {
		fmt.Fprintf(stderr, "signpost mcp: --max-concurrent %d: must be 0 (no bound) or more, e.g. 512\n", *maxConcurrent)
		return exitUsage
	}
	if problem := checkBufferBudget(budget); problem != "" {
		fmt.Fprintln(stderr, "signpost mcp: "+problem)
		return exitUsage
	}
	for _, a := range []struct{ flag, v string }{{"--listen", *listen}, {"--admin", *admin}} {
		if a.v != "" {
			if err := rules.CheckAddress(a.v); err != nil {
				fmt.Fprintf(stderr, "signpost mcp: %s %v\n", a.flag, err)
				return exitUsage
			}
		}
	}
	// Over stdio, standard output carries the protocol and nothing else.
	logTo := stdout
	if *listen == "" {
		logTo = stderr
	}
	log, err := newLogger(logTo, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "signpost mcp: %v\n", err)
		return exitUsage
	}
	tuneGC()
	cfg, err := rules.Load(*config)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "signpost mcp: refusing to start: %s has problems; signpost check %s lists them too\n", *config, *config)
		return exitUsage
	}
	loaded()
	opts := mcp.Options{Listen: *listen, Version: version}
	p := &opts.Proxy
	if *upstream != "" {
		if p.Upstream, err = rules.ParseUpstream(*upstream); err != nil {
			fmt.Fprintf(stderr, "signpost mcp: --upstream %v\n", err)
			return exitUsage
		}
	}
	if cfg.Upstream == nil && p.Upstream == nil {
		fmt.Fprintf(stderr, "signpost mcp: no upstream: set upstream: in %s or pass --upstream, e.g. --upstream http://127.0.0.1:8081\n", *config)
		return exitUsage
	}
	p.Admin = *admin
	p.UpstreamTimeout, p.DialTimeout, p.DrainTimeout = *timeout, *dial, *drain
	p.MaxConcurrent, p.AccessLog, p.Log = *maxConcurrent, *accessLog, log
	p.BufferBudget = budget.n
	path := *config
	p.Load = func() (*rules.Config, error) { return rules.Load(path) }
	p.Watch = *watch
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	p.Reload = hup
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcp.Serve(ctx, cfg, opts); err != nil {
		fmt.Fprintf(stderr, "signpost mcp: %v\n", err)
		return exitFindings
	}
	return exitOK
}
