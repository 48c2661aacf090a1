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

	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
)

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "rule `file` to serve (required)")
	upstream := fs.String("upstream", "", "upstream base `URL`, overriding the rule file's upstream:")
	listen := fs.String("listen", "", "agent-facing `address`, overriding the rule file's listen: (default "+rules.DefaultListen+")")
	admin := fs.String("admin", "", "admin `address` for /metrics and /livez, overriding the rule file's admin: (default "+rules.DefaultAdmin+")")
	timeout := fs.Duration("upstream-timeout", proxy.DefaultUpstreamTimeout, "how long to wait for the upstream's response headers")
	drain := fs.Duration("drain-timeout", 10*time.Second, "how long shutdown waits for requests in flight")
	logFormat := fs.String("log-format", "json", "log format: json or text")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: signpost serve --config FILE [flags]\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
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
	cfg, err := rules.Load(*config)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "signpost serve: refusing to start: %s has problems; signpost check %s lists them too\n", *config, *config)
		return exitUsage
	}
	var opts proxy.ServeOptions
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
	opts.UpstreamTimeout, opts.DrainTimeout = *timeout, *drain
	opts.Log = log
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := proxy.Serve(ctx, cfg, opts); err != nil {
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

// upstreamURL is used by demo to point a config at an in-process upstream.
func upstreamURL(addr string) *url.URL { return &url.URL{Scheme: "http", Host: addr} }
