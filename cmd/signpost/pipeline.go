package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/logbuffer"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

// pipelineFlags are the flags serve and mcp share: the rule file, the
// upstream, the listeners, the pipeline's bounds and the logs. Each
// command adds its own and says in its own words what these bound.
type pipelineFlags struct {
	cmd string // the command, naming it in messages: "serve" or "mcp"

	config, upstream, listen, admin string
	upstreamTimeout, dialTimeout    time.Duration
	drainTimeout                    time.Duration
	watch                           bool
	maxConcurrent                   int
	budget                          byteSize
	accessLog                       bool
	logFormat, logLevel             string
	logFlush                        time.Duration

	// lines takes the log's lines off the request path; untilSignal
	// writes what it holds before returning.
	lines *logbuffer.Writer
	// logTo is the log's output, to which untilSignal writes observe
	// mode's record last.
	logTo io.Writer

	words pipelineWords
}

// pipelineWords is what the shared flags' help and messages say
// differently for serve and for mcp.
type pipelineWords struct {
	config, listen, drain, watch, maxConcurrent, accessLog string
	// noConfig is the message for a missing --config, after the command.
	noConfig string
}

// define defines the shared flags on fs, worded for the command.
func (f *pipelineFlags) define(fs *flag.FlagSet, cmd string, w pipelineWords) {
	f.cmd = cmd
	f.budget = byteSize{n: budget.Default}
	fs.StringVar(&f.config, "config", "", w.config)
	fs.StringVar(&f.upstream, "upstream", "", "upstream base `URL`, overriding the rule file's upstream:")
	fs.StringVar(&f.listen, "listen", "", w.listen)
	fs.StringVar(&f.admin, "admin", "", "admin `address` for /metrics, /livez, /readyz and POST /-/reload, overriding the rule file's admin: (default "+rules.DefaultAdmin+")")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", proxy.DefaultUpstreamTimeout, "how long to wait for the upstream's response headers; an error body signpost examines must arrive within it too, counted from the request's arrival, or it is passed on as it comes, or wrapped, unread")
	fs.DurationVar(&f.dialTimeout, "upstream-dial-timeout", proxy.DefaultDialTimeout, "how long to wait for a connection to the upstream")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", server.DefaultDrainTimeout, w.drain)
	fs.BoolVar(&f.watch, "watch", true, w.watch)
	fs.IntVar(&f.maxConcurrent, "max-concurrent", 0, w.maxConcurrent)
	fs.Var(&f.budget, "buffer-budget", "the `size` all requests together may hold in upstream error bodies being examined and in request bodies being read, e.g. 64MiB; past it, an error body is passed on or wrapped unread, and a request body streams to the upstream unchecked")
	fs.BoolVar(&f.accessLog, "access-log", false, w.accessLog)
	fs.StringVar(&f.logFormat, "log-format", "json", "log format: json or text")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&f.logFlush, "log-flush-interval", logbuffer.DefaultDelay, "the longest a log line waits in the log's buffer before it is written; lines are written off the request path, in batches")
	f.words = w
}

// check says what is wrong with the shared flags, each message naming
// the flag, its value and an example; "" when nothing is. args are the
// arguments left after the flags: there must be none.
func (f *pipelineFlags) check(args []string) string {
	switch {
	case f.config == "" || len(args) > 0:
		return f.words.noConfig
	case f.dialTimeout <= 0:
		return fmt.Sprintf("--upstream-dial-timeout %v: must be a positive duration, e.g. --upstream-dial-timeout %v", f.dialTimeout, proxy.DefaultDialTimeout)
	case f.maxConcurrent < 0:
		return fmt.Sprintf("--max-concurrent %d: must be 0 (no bound) or more, e.g. 512", f.maxConcurrent)
	case f.logFlush <= 0:
		return fmt.Sprintf("--log-flush-interval %v: must be a positive duration, e.g. --log-flush-interval 1s", f.logFlush)
	case f.budget.n < minBufferBudget:
		return "--buffer-budget " + f.budget.String() + ": must be at least " + rules.SizeText(minBufferBudget) + ", the default limits.error_body, e.g. --buffer-budget 64MiB"
	}
	for _, a := range []struct{ flag, v string }{{"--listen", f.listen}, {"--admin", f.admin}} {
		if a.v != "" {
			if err := rules.CheckAddress(a.v); err != nil {
				return a.flag + " " + err.Error()
			}
		}
	}
	if f.upstream != "" {
		if _, err := rules.ParseUpstream(f.upstream); err != nil {
			return "--upstream " + err.Error()
		}
	}
	if _, err := newLogger(io.Discard, f.logFormat, f.logLevel); err != nil {
		return err.Error()
	}
	return ""
}

// minBufferBudget is the smallest --buffer-budget: one error body of the
// default limits.error_body.
const minBufferBudget = 64 << 10

// start checks the shared flags, loads the rule file and makes the
// pipeline's options, logging to logTo. It reports what stops it on
// stderr and returns exitUsage then, or exitOK.
func (f *pipelineFlags) start(args []string, logTo, stderr io.Writer) (*rules.Config, server.ServeOptions, int) {
	var opts server.ServeOptions
	if problem := f.check(args); problem != "" {
		fmt.Fprintf(stderr, "signpost %s: %s\n", f.cmd, problem)
		return nil, opts, exitUsage
	}
	tuneGC()
	cfg, err := rules.Load(f.config)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "signpost %s: refusing to start: %s has problems; signpost check %s lists them too\n", f.cmd, f.config, f.config)
		return nil, opts, exitUsage
	}
	loaded()
	if f.upstream != "" {
		opts.Upstream, _ = rules.ParseUpstream(f.upstream) // checked above
	}
	trustFallbackRootsFor(cmp.Or(opts.Upstream, cfg.Upstream))
	if cfg.Upstream == nil && opts.Upstream == nil {
		fmt.Fprintf(stderr, "signpost %s: no upstream: set upstream: in %s or pass --upstream, e.g. --upstream http://127.0.0.1:8081\n", f.cmd, f.config)
		return nil, opts, exitUsage
	}
	opts.Admin = f.admin
	opts.UpstreamTimeout, opts.DialTimeout, opts.DrainTimeout = f.upstreamTimeout, f.dialTimeout, f.drainTimeout
	opts.MaxConcurrent, opts.AccessLog = f.maxConcurrent, f.accessLog
	opts.BufferBudget = f.budget.n
	// The same checks as at start, on every reload: a file that loads but
	// names no upstream, with none on the command line, is refused there.
	path := f.config
	fixed := opts.Upstream
	opts.Load = func() (*rules.Config, error) {
		c, err := rules.Load(path)
		if c != nil && fixed == nil {
			trustFallbackRootsFor(c.Upstream) // a reload may name an https upstream
		}
		return c, err
	}
	opts.Watch = f.watch
	f.logTo = logTo
	f.lines = logbuffer.New(logTo, logbuffer.Options{Delay: f.logFlush})
	opts.Log, _ = newLogger(f.lines, f.logFormat, f.logLevel) // checked above
	opts.LogLinesDropped = f.lines.Dropped
	return cfg, opts, exitOK
}

// pipeline is signpost serve's server, or signpost mcp's, built to run.
type pipeline interface {
	Run(context.Context) error
	Observed() *observe.Record
	Close()
}

// untilSignal builds the pipeline and runs it until SIGINT or SIGTERM,
// with SIGHUP delivered to opts.Reload, and returns the exit code. SIGHUP
// is caught before the pipeline is built and opens its listeners, so that
// one sent as soon as signpost logs that it listens reloads rather than
// kills it.
func (f *pipelineFlags) untilSignal(opts *server.ServeOptions, build func() (pipeline, error), stderr io.Writer) int {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	opts.Reload = hup
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := build()
	built := err == nil
	if built {
		err = p.Run(ctx)
		p.Close()
	}
	f.lines.Close() // every line logged is written before the last word
	if built && f.logFormat == "json" {
		// What observe mode learned outlives the process in its log, for
		// signpost draft --from.
		if werr := logObserved(f.logTo, p.Observed()); werr != nil {
			fmt.Fprintf(stderr, "signpost %s: writing what observe mode recorded to the log: %v\n", f.cmd, werr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "signpost %s: %v\n", f.cmd, err)
		return exitFindings
	}
	return exitOK
}
