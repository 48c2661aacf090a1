// Package mcp serves a rule file's routes as MCP tools, over standard input
// and output (for desktop agents) or streamable HTTP (for remote ones).
//
// Each tools/call is made into the HTTP request its route describes and
// handed, in process, to the very pipeline signpost serve runs: the same
// validation, upstream call, rewrite, metrics, admin endpoints and
// reloads. A success comes back as the
// upstream's body; an error as a tool execution error carrying signpost's
// body as structured content and its Text rendering as text.
//
// Over MCP every route validates before the upstream sees a call, whatever
// its validate: says: the input schema is the contract the model was
// given, so a call that breaks it is answered at once, every fault
// together, for the model to correct.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

// Endpoint is the path the streamable HTTP transport serves.
const Endpoint = "/mcp"

// DefaultSessionTimeout is how long a streamable HTTP session may stay
// idle before it is closed; a client that comes back later starts a new
// one.
const DefaultSessionTimeout = 30 * time.Minute

// Options configure a Server.
type Options struct {
	// Proxy configures the pipeline as it does for signpost serve, but
	// that no agents' listener opens: calls reach the pipeline in process.
	// Its Load, when set, reloads the tools with the rules.
	Proxy server.ServeOptions
	// Listen is the address of the streamable HTTP transport, served at
	// Endpoint. Empty serves one session over In and Out instead.
	Listen string
	// AllowedOrigins are the origins, scheme://host[:port] as ParseOrigin
	// takes them, whose web pages may call the tools over streamable HTTP.
	// A request with no Origin header, as from any client that is not a
	// browser, is always served, and so is a loopback origin when Listen is
	// a loopback address; any other Origin is refused with 403, against
	// DNS rebinding. Empty allows no other origin.
	AllowedOrigins []string
	// In and Out carry the stdio transport; nil means os.Stdin and
	// os.Stdout.
	In  io.ReadCloser
	Out io.WriteCloser
	// Version is what the server tells clients it is.
	Version string
	// Ready, if set, is called once tools can be called, with the
	// streamable HTTP address (nil over stdio) and the admin address.
	Ready func(endpoint, admin net.Addr)
}

// Server is the MCP front door built and ready to run: the tools, and the
// pipeline they call in process.
type Server struct {
	opts     Options
	log      *slog.Logger
	origins  *originPolicy
	front    *front
	pipe     *inProcess
	pipeline *server.Server
	ready    chan net.Addr // the pipeline's admin address, once it listens
	tools    int
}

// New builds the tools of cfg's routes and the pipeline they call. It
// takes cfg over: its routes, and those of every reload, are set to
// validate before the upstream.
func New(cfg *rules.Config, opts Options) (*Server, error) {
	log := opts.Proxy.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	origins, err := newOriginPolicy(opts.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	pipe := &inProcess{log: log}
	f := newFront(opts.Version, cfg.Learn.CallerHeader, pipe.send, log)
	pipe.limit = f.maxResult + 1 // one byte more tells an answer over the bound
	validateBefore(cfg)
	f.publish(cfg)

	popts := opts.Proxy
	popts.Log = log
	popts.InProcessOnly = true
	if load := popts.Load; load != nil {
		fixed := popts.Upstream
		popts.Load = func() (*rules.Config, error) {
			c, err := load()
			if err != nil {
				return nil, err
			}
			validateBefore(c)
			// Without an upstream the pipeline refuses the rules: the
			// tools stay as they are, like the rules in force.
			if c.Upstream != nil || fixed != nil {
				f.publish(c)
			}
			return c, nil
		}
	}
	s := &Server{opts: opts, log: log, origins: origins, front: f, pipe: pipe, tools: len(cfg.Routes)}
	ready := make(chan net.Addr, 1) // the admin listener's address
	popts.Ready = func(_, admin net.Addr) { ready <- admin }
	if s.pipeline, err = server.New(cfg, popts); err != nil {
		return nil, err
	}
	pipe.h = s.pipeline.Handler()
	s.ready = ready
	return s, nil
}

// Observed is observe mode's record of the pipeline, which outlives
// reloads.
func (s *Server) Observed() *observe.Record { return s.pipeline.Observed() }

// Close releases what the pipeline's proxies share, once Run has returned.
func (s *Server) Close() { s.pipeline.Close() }

// Serve serves cfg's routes as tools until ctx is done or, over stdio,
// until the client closes its end, as New and Run do, then closes the
// pipeline.
func Serve(ctx context.Context, cfg *rules.Config, opts Options) error {
	s, err := New(cfg, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx)
}

// Run serves the tools until ctx is done or, over stdio, until the client
// closes its end; then it stops taking calls, lets those in flight finish
// within the drain timeout, stops the pipeline and returns. The pipeline
// runs its admin listener and reloads; it opens no port for agents.
func (s *Server) Run(ctx context.Context) error {
	// The pipeline stops after the transport, so that calls in flight
	// are answered.
	pctx, stopPipeline := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPipeline()
	done := make(chan error, 1)
	go func() { done <- s.pipeline.Run(pctx) }()
	var admin net.Addr
	select {
	case admin = <-s.ready:
	case err := <-done:
		return err
	case <-ctx.Done():
		stopPipeline()
		return <-done
	}

	var err error
	if s.opts.Listen == "" {
		err = s.front.serveStdio(ctx, s.opts, admin, s.tools)
	} else {
		err = s.front.serveHTTP(ctx, s.opts, s.origins, admin, s.tools)
	}
	if drain := positive(s.opts.Proxy.DrainTimeout, server.DefaultDrainTimeout); !s.pipe.wait(drain) {
		s.log.Error("tool calls still in flight after the drain timeout were left to finish alone", "drain_timeout", drain.String())
		err = errors.Join(err, fmt.Errorf("tool calls still in flight after the drain timeout (%v) were left to finish alone", drain))
	}
	stopPipeline()
	return errors.Join(err, <-done)
}

// validateBefore has every route check its declared fields before the
// upstream sees a call.
func validateBefore(cfg *rules.Config) {
	for _, r := range cfg.Routes {
		r.Validate = rules.ValidateBefore
	}
}

// serveStdio serves one session over opts.In and opts.Out until the
// client closes its end or ctx is done.
func (f *front) serveStdio(ctx context.Context, opts Options, admin net.Addr, tools int) error {
	var t sdk.Transport = &sdk.StdioTransport{}
	if opts.In != nil || opts.Out != nil {
		in, out := opts.In, opts.Out
		if in == nil {
			in = os.Stdin
		}
		if out == nil {
			out = os.Stdout
		}
		t = &sdk.IOTransport{Reader: in, Writer: out}
	}
	f.log.Info("serving tools over MCP", "transport", "stdio", "admin", admin.String(), "tools", tools)
	if opts.Ready != nil {
		opts.Ready(nil, admin)
	}
	session, err := f.server.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("cannot serve MCP over standard input and output: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- session.Wait() }()
	select {
	case <-ctx.Done():
		_ = session.Close()
		err = <-ended
	case err = <-ended:
	}
	f.log.Info("MCP session over stdio ended")
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil // a signal, or the client hung up: both end the session
	}
	return err
}

// serveHTTP serves the streamable HTTP transport at opts.Listen, to the
// origins allows, until ctx is done, then drains it: it closes the streams
// sessions listen on, and waits for calls in flight up to the drain
// timeout.
func (f *front) serveHTTP(ctx context.Context, opts Options, origins *originPolicy, admin net.Addr, tools int) error {
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen for MCP clients on %s: %w", opts.Listen, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		origins.loopback = tcp.IP.IsLoopback()
	}
	quiet := slog.New(warnings{f.log.Handler()})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return f.server },
		&sdk.StreamableHTTPOptions{SessionTimeout: DefaultSessionTimeout, Logger: quiet})
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	mux := http.NewServeMux()
	mux.Handle(Endpoint, checkingOrigin(origins, f.log, endingWith(streams, refusingUnservedDiscover(f.log, h))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "signpost serves MCP at "+Endpoint+", not at "+r.URL.Path, http.StatusNotFound)
	})
	p := opts.Proxy
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: positive(p.ReadHeaderTimeout, server.DefaultReadHeaderTimeout),
		IdleTimeout:       positive(p.IdleTimeout, server.DefaultIdleTimeout),
		MaxHeaderBytes:    int(positive(time.Duration(p.MaxHeaderBytes), server.DefaultMaxHeaderBytes)),
		ErrorLog:          slog.NewLogLogger(f.log.Handler(), slog.LevelWarn),
	}
	unused := trackUnused(srv)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	f.log.Info("serving tools over MCP", "transport", "streamable-http", "endpoint", "http://"+ln.Addr().String()+Endpoint,
		"admin", admin.String(), "tools", tools)
	if opts.Ready != nil {
		opts.Ready(ln.Addr(), admin)
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
		f.log.Error("MCP listener failed", "error", err.Error())
	}
	endStreams()
	drain := positive(p.DrainTimeout, server.DefaultDrainTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	// Shutdown closes the listener at once; a connection accepted before
	// that which never sent a request (a client's spare) would hold it for
	// net/http's five seconds, longer than the drain may be.
	time.Sleep(unusedGrace)
	unused.close()
	if serr := <-shut; serr != nil {
		_ = srv.Close()
		f.log.Error("tool calls still in flight after the drain timeout were cut off", "drain_timeout", drain.String())
		if err == nil {
			err = fmt.Errorf("tool calls still in flight after the drain timeout (%v) were cut off", drain)
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// unusedGrace is how long a shutdown lets a connection accepted just before
// it send its first request before closing it.
const unusedGrace = 50 * time.Millisecond

// unusedConns are a server's connections that have not begun a request.
type unusedConns struct {
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// trackUnused follows srv's connections from the moment they are accepted
// until they begin a request.
func trackUnused(srv *http.Server) *unusedConns {
	u := &unusedConns{conns: map[net.Conn]bool{}}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if s == http.StateNew {
			u.conns[c] = true
		} else {
			delete(u.conns, c)
		}
	}
	return u
}

// close closes the connections that have not begun a request: nothing was
// asked on them, so nothing is cut short.
func (u *unusedConns) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for c := range u.conns {
		c.Close()
		delete(u.conns, c)
	}
}

// endingWith ends the GET streams on which sessions wait for server
// messages once stop is done, so that a shutdown need not wait for
// clients to hang up. Calls, made by POST, finish as usual.
func endingWith(stop context.Context, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(stop, cancel)()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

func positive(v, fallback time.Duration) time.Duration {
	if v <= 0 {
		return fallback
	}
	return v
}
