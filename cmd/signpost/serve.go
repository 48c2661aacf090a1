package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"time"

	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

const serveHelp = "Usage: signpost serve --config FILE [flags]"

// serveWords are the shared flags' words for serve.
var serveWords = pipelineWords{
	config:        "rule `file` to serve (required)",
	listen:        "agent-facing `address`, overriding the rule file's listen: (default " + rules.DefaultListen + ")",
	drain:         "how long shutdown waits for requests in flight",
	watch:         "reload the rules when the rule file or a catalog it names changes (SIGHUP and POST /-/reload always do)",
	maxConcurrent: "the most requests served at once; past it, a retryable 503 with Retry-After: 1 (0 means no bound)",
	accessLog:     "log one line per request: method, path, route, status, outcome, duration, request id",
	noConfig:      "--config names the rule file to serve, e.g. signpost serve --config configs/tickets.yaml",
}

// serveFlags are serve's flags: the shared ones, and the bounds of the
// agents' listener and of shutdown.
type serveFlags struct {
	pipelineFlags
	shutdownDelay                 time.Duration
	readHeader, read, write, idle time.Duration
	requestBody                   time.Duration
	maxHeader                     int
	observe                       bool
}

// serve runs the proxy until SIGINT or SIGTERM.
func serve(fs *flag.FlagSet) runFunc {
	var f serveFlags
	f.define(fs, "serve", serveWords)
	fs.DurationVar(&f.shutdownDelay, "shutdown-delay", 0, "on SIGTERM, how long /readyz answers 503 while requests are still taken, before the listener closes and requests in flight drain")
	fs.DurationVar(&f.readHeader, "read-header-timeout", server.DefaultReadHeaderTimeout, "how long a client may take to send a request's headers")
	fs.DurationVar(&f.read, "read-timeout", 0, "how long a client may take to send a whole request, body included; 0 means no limit, since request bodies stream")
	fs.DurationVar(&f.write, "write-timeout", 0, "how long writing a whole response may take; 0 means no limit, since responses (server-sent events included) stream for as long as the upstream takes")
	fs.DurationVar(&f.idle, "idle-timeout", server.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request")
	fs.DurationVar(&f.requestBody, "request-body-timeout", proxy.DefaultRequestBodyTimeout, "how long a request body signpost reads before calling the upstream (a route with body fields, in enforce mode) may take to arrive; past it, 408 request_body_timeout")
	fs.IntVar(&f.maxHeader, "max-header-bytes", server.DefaultMaxHeaderBytes, "the largest request header block accepted, in bytes")
	fs.BoolVar(&f.observe, "observe", false, "observe every route, whatever the rule file's mode: pass every answer through untouched, and record what enforce would answer and the errors no rule explains, for signpost draft")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if problem := f.checkServer(); problem != "" {
			fmt.Fprintln(stderr, "signpost serve: "+problem)
			return exitUsage
		}
		cfg, opts, code := f.start(fs.Args(), stdout, stderr)
		if code != exitOK {
			return code
		}
		if f.observe {
			cfg.ObserveAll()
			load := opts.Load
			opts.Load = func() (*rules.Config, error) {
				c, err := load()
				if c != nil {
					c.ObserveAll()
				}
				return c, err
			}
		}
		opts.Listen = f.listen
		opts.ShutdownDelay = f.shutdownDelay
		opts.ReadHeaderTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.IdleTimeout = f.readHeader, f.read, f.write, f.idle
		opts.MaxHeaderBytes = f.maxHeader
		opts.RequestBodyTimeout = f.requestBody
		return f.untilSignal(&opts, func() (pipeline, error) { return server.New(cfg, opts) }, stderr)
	}
}

// checkServer says what is wrong with the bounds only serve takes, or "".
func (f *serveFlags) checkServer() string {
	for _, d := range []struct {
		flag     string
		v        time.Duration
		zeroOK   bool
		fallback time.Duration
	}{
		{"--read-header-timeout", f.readHeader, false, server.DefaultReadHeaderTimeout},
		{"--idle-timeout", f.idle, false, server.DefaultIdleTimeout},
		{"--request-body-timeout", f.requestBody, false, proxy.DefaultRequestBodyTimeout},
		{"--read-timeout", f.read, true, 0},
		{"--write-timeout", f.write, true, 0},
	} {
		switch {
		case d.v < 0 && d.zeroOK:
			return fmt.Sprintf("%s %v: must be 0 (no limit) or a positive duration, e.g. %s 5m", d.flag, d.v, d.flag)
		case d.v <= 0 && !d.zeroOK:
			return fmt.Sprintf("%s %v: must be a positive duration, e.g. %s %v", d.flag, d.v, d.flag, d.fallback)
		}
	}
	switch {
	case f.maxHeader < 4<<10:
		return fmt.Sprintf("--max-header-bytes %d: must be at least 4096, e.g. --max-header-bytes %d", f.maxHeader, server.DefaultMaxHeaderBytes)
	case f.shutdownDelay < 0:
		return fmt.Sprintf("--shutdown-delay %v: must be 0 (close at once) or a positive duration, e.g. --shutdown-delay 5s", f.shutdownDelay)
	}
	return ""
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
