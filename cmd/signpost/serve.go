package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "rule `file` to serve (required)")
	upstream := fs.String("upstream", "", "upstream base `URL`, overriding the rule file's upstream:")
	listen := fs.String("listen", "", "agent-facing `address`, overriding the rule file's listen: (default "+rules.DefaultListen+")")
	admin := fs.String("admin", "", "admin `address` for /metrics, /livez, /readyz and POST /-/reload, overriding the rule file's admin: (default "+rules.DefaultAdmin+")")
	timeout := fs.Duration("upstream-timeout", proxy.DefaultUpstreamTimeout, "how long to wait for the upstream's response headers")
	dial := fs.Duration("upstream-dial-timeout", proxy.DefaultDialTimeout, "how long to wait for a connection to the upstream")
	drain := fs.Duration("drain-timeout", server.DefaultDrainTimeout, "how long shutdown waits for requests in flight")
	shutdownDelay := fs.Duration("shutdown-delay", 0, "on SIGTERM, how long /readyz answers 503 while requests are still taken, before the listener closes and requests in flight drain")
	watch := fs.Bool("watch", true, "reload the rules when the rule file or a catalog it names changes (SIGHUP and POST /-/reload always do)")
	readHeader := fs.Duration("read-header-timeout", server.DefaultReadHeaderTimeout, "how long a client may take to send a request's headers")
	read := fs.Duration("read-timeout", 0, "how long a client may take to send a whole request, body included; 0 means no limit, since request bodies stream")
	write := fs.Duration("write-timeout", 0, "how long writing a whole response may take; 0 means no limit, since responses (server-sent events included) stream for as long as the upstream takes")
	idle := fs.Duration("idle-timeout", server.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request")
	maxHeader := fs.Int("max-header-bytes", server.DefaultMaxHeaderBytes, "the largest request header block accepted, in bytes")
	maxConcurrent := fs.Int("max-concurrent", 0, "the most requests served at once; past it, a retryable 503 with Retry-After: 1 (0 means no bound)")
	budget := bufferBudgetFlag(fs)
	accessLog := fs.Bool("access-log", false, "log one line per request: method, path, route, status, outcome, duration, request id")
	logFormat := fs.String("log-format", "json", "log format: json or text")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: signpost serve --config FILE [flags]\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	for _, d := range []struct {
		flag     string
		v        time.Duration
		zeroOK   bool
		fallback time.Duration
	}{
		{"--upstream-dial-timeout", *dial, false, proxy.DefaultDialTimeout},
		{"--read-header-timeout", *readHeader, false, server.DefaultReadHeaderTimeout},
		{"--idle-timeout", *idle, false, server.DefaultIdleTimeout},
		{"--read-timeout", *read, true, 0},
		{"--write-timeout", *write, true, 0},
	} {
		if d.v < 0 || (d.v == 0 && !d.zeroOK) {
			if d.zeroOK {
				fmt.Fprintf(stderr, "signpost serve: %s %v: must be 0 (no limit) or a positive duration, e.g. %s 5m\n", d.flag, d.v, d.flag)
			} else {
				fmt.Fprintf(stderr, "signpost serve: %s %v: must be a positive duration, e.g. %s %v\n", d.flag, d.v, d.flag, d.fallback)
			}
			return exitUsage
		}
	}
	if *maxHeader < 4<<10 {
		fmt.Fprintf(stderr, "signpost serve: --max-header-bytes %d: must be at least 4096, e.g. --max-header-bytes %d\n", *maxHeader, server.DefaultMaxHeaderBytes)
		return exitUsage
	}
	if problem := checkBufferBudget(budget); problem != "" {
		fmt.Fprintln(stderr, "signpost serve: "+problem)
		return exitUsage
	}
	if *config == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "signpost serve: --config names the rule file to serve, e.g. signpost serve --config configs/tickets.yaml")
		return exitUsage
	}
	log, err := newLogger(stdout, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "signpost serve: %v\n", err)
		return exitUsage
	}
	tuneGC()
	cfg, err := rules.Load(*config)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "signpost serve: refusing to start: %s has problems; signpost check %s lists them too\n", *config, *config)
		return exitUsage
	}
	loaded()
	var opts server.ServeOptions
	if *upstream != "" {
		if opts.Upstream, err = rules.ParseUpstream(*upstream); err != nil {
			fmt.Fprintf(stderr, "signpost serve: --upstream %v\n", err)
			return exitUsage
		}
	}
	for _, a := range []struct{ flag, v string }{{"--listen", *listen}, {"--admin", *admin}} {
		if a.v != "" {
			if err := rules.CheckAddress(a.v); err != nil {
				fmt.Fprintf(stderr, "signpost serve: %s %v\n", a.flag, err)
				return exitUsage
			}
		}
	}
	if cfg.Upstream == nil && opts.Upstream == nil {
		fmt.Fprintf(stderr, "signpost serve: no upstream: set upstream: in %s or pass --upstream, e.g. --upstream http://127.0.0.1:8081\n", *config)
		return exitUsage
	}
	opts.Listen, opts.Admin = *listen, *admin
	opts.UpstreamTimeout, opts.DrainTimeout, opts.DialTimeout = *timeout, *drain, *dial
	if *shutdownDelay < 0 {
		fmt.Fprintf(stderr, "signpost serve: --shutdown-delay %v: must be 0 (close at once) or a positive duration, e.g. --shutdown-delay 5s\n", *shutdownDelay)
		return exitUsage
	}
	opts.ShutdownDelay = *shutdownDelay
	opts.ReadHeaderTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.IdleTimeout = *readHeader, *read, *write, *idle
	opts.MaxHeaderBytes = *maxHeader
	if *maxConcurrent < 0 {
		fmt.Fprintf(stderr, "signpost serve: --max-concurrent %d: must be 0 (no bound) or more, e.g. 512\n", *maxConcurrent)
		return exitUsage
	}
	opts.MaxConcurrent, opts.AccessLog = *maxConcurrent, *accessLog
	opts.BufferBudget = budget.n
	opts.Log = log
	// The same checks as at start, on every reload: a file that loads but
	// names no upstream, with none on the command line, is refused there.
	path := *config
	opts.Load = func() (*rules.Config, error) { return rules.Load(path) }
	opts.Watch = *watch
	// SIGHUP is caught before the listeners open, so that one sent as soon
	// as signpost logs "listening" reloads rather than kills it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	opts.Reload = hup
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Serve(ctx, cfg, opts); err != nil {
		fmt.Fprintf(stderr, "signpost serve: %v\n", err)
		return exitFindings
	}
	return exitOK
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: must be one of debug, info, warn, error", level)
	}
	o := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	}
	return nil, errors.New("--log-format " + fmt.Sprintf("%q", format) + ": must be json or text")
}

// minBufferBudget is the smallest --buffer-budget: one error body of the
// default limits.error_body.
const minBufferBudget = 64 << 10

// bufferBudgetFlag defines --buffer-budget on fs, as serve and mcp take it.
func bufferBudgetFlag(fs *flag.FlagSet) *byteSize {
	b := &byteSize{n: budget.Default}
	fs.Var(b, "buffer-budget", "the `size` all requests together may hold in upstream error bodies being examined, e.g. 64MiB; past it, a body is passed on or wrapped unread")
	return b
}

// checkBufferBudget says what is wrong with a --buffer-budget, or "".
func checkBufferBudget(b *byteSize) string {
	if b.n < minBufferBudget {
		return "--buffer-budget " + b.String() + ": must be at least " + rules.SizeText(minBufferBudget) + ", the default limits.error_body, e.g. --buffer-budget 64MiB"
	}
	return ""
}

// byteSize is a flag holding a size in bytes, read as a rule file's limits
// are: 67108864, 64MiB, 512KiB.
type byteSize struct {
	n    int64
	text string // as given on the command line; "" for the default
}

// String is the size as given, so that a message names what was typed.
func (b *byteSize) String() string {
	if b.text != "" {
		return b.text
	}
	return rules.SizeText(b.n)
}

func (b *byteSize) Set(v string) error {
	n, err := rules.ParseSize(v)
	if errors.Is(err, rules.ErrSizeRange) {
		return errors.New("is larger than any size signpost counts, e.g. 64MiB")
	}
	if err != nil {
		return errors.New(rules.SizeRule("64MiB"))
	}
	b.n, b.text = n, v
	return nil
}

// upstreamURL is used by demo to point a config at an in-process upstream.
func upstreamURL(addr string) *url.URL { return &url.URL{Scheme: "http", Host: addr} }
