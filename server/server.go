// Package server runs signpost: the agents' listener with its front, the
// admin listener, reloads of the rules on a signal, a request or a change
// of the files, and the drain at shutdown.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/signpost-proxy/signpost/admin"
	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// Defaults of the agent-facing server's limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 1 << 20
	DefaultDrainTimeout      = 10 * time.Second
)

// ServeOptions configure a Server.
type ServeOptions struct {
	proxy.Options
	// Listen and Admin override the rule file's addresses, at start and
	// across reloads.
	Listen, Admin string
	// InProcessOnly opens no agents' listener: requests come only through
	// Handler, from this process, as signpost mcp hands tool calls on.
	InProcessOnly bool
	// Ready, if set, is called with the bound addresses once the listeners
	// accept connections (useful with port 0); listen is nil when
	// InProcessOnly is set.
	Ready func(listen, admin net.Addr)
	// DrainTimeout bounds how long shutdown waits for requests in flight
	// once the agents' listener is closed. Zero means 10 seconds.
	DrainTimeout time.Duration
	// ShutdownDelay is how long /readyz answers 503 before the agents'
	// listener closes, while requests are still served, so that load
	// balancers stop sending new ones first. Zero closes it at once.
	ShutdownDelay time.Duration

	// Load reads the rules again for a reload. Nil turns reloading off:
	// no watching, signals ignored, no POST /-/reload.
	Load func() (*rules.Config, error)
	// Reload receives the signals that reload the rules, e.g. SIGHUP from
	// signal.Notify; nil receives none.
	Reload <-chan os.Signal
	// Watch reloads the rules when the rule file or a catalog it names
	// changes, once a burst of changes has been quiet for Debounce (zero
	// means 100 ms).
	Watch    bool
	Debounce time.Duration

	// ReadHeaderTimeout bounds reading a request's headers; zero means 10
	// seconds. ReadTimeout and WriteTimeout bound reading a whole request
	// and writing a whole response; zero means none, since request and
	// response bodies stream for as long as the upstream takes. IdleTimeout
	// bounds a keep-alive connection's wait for its next request; zero
	// means 120 seconds. MaxHeaderBytes caps a request's headers; zero
	// means 1 MiB.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                                            int
	// LogLinesDropped, if set, counts the log lines never written (the
	// log's buffer was full, or its output failed), for /metrics.
	LogLinesDropped func() uint64
	// DialTimeout bounds connecting to the upstream; zero means 5 seconds.
	// It is ignored when Transport is set.
	DialTimeout time.Duration
	// BufferBudget bounds the bytes all requests together hold in upstream
	// error bodies being examined, raw and decoded, and in request bodies
	// being read; past it, an error body is handled as one over
	// limits.error_body, and a request body streams to the upstream
	// unread. Zero means 64 MiB.
	BufferBudget int64
}

// Server is signpost built and ready to run: the metrics registry, what
// every proxy shares across reloads, and the proxy of the rules in force
// with the reloader that replaces it. New builds it, Handler serves
// requests in process, Run opens the listeners, and Close releases what
// outlives the proxies.
type Server struct {
	opts    ServeOptions
	log     *slog.Logger
	reg     *prometheus.Registry
	metrics *metrics.Metrics
	shared  *proxy.Shared
	rl      *reloader
	handler http.Handler
}

// New builds a server for cfg: what the proxies share, and the first
// proxy. It opens no listener.
func New(cfg *rules.Config, opts ServeOptions) (*Server, error) {
	s := &Server{opts: opts, log: opts.Log, reg: prometheus.NewRegistry(), metrics: opts.Metrics}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
		s.opts.Log = s.log
	}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if s.metrics == nil {
		s.metrics = metrics.New(s.reg)
		s.opts.Metrics = s.metrics
	}
	if opts.LogLinesDropped != nil {
		s.reg.MustRegister(metrics.LogLinesDropped(opts.LogLinesDropped))
	}
	if s.opts.Shared == nil {
		s.shared = proxy.NewShared(cfg, proxy.SharedOptions{
			UpstreamTimeout: opts.UpstreamTimeout, DialTimeout: opts.DialTimeout, BufferBudget: opts.BufferBudget,
			Metrics: s.metrics, Log: s.log,
		})
		s.opts.Shared = s.shared
	}
	if opts.ReadTimeout > 0 && opts.ReadTimeout <= orDefault(opts.RequestBodyTimeout, proxy.DefaultRequestBodyTimeout) {
		// The whole request, body included, must come within the read
		// timeout, counted from its first bytes: a body deadline of the
		// proxy's own could only come later, and would replace it.
		s.opts.RequestBodyTimeout = -1
	}
	build := func(c *rules.Config) (*proxy.Proxy, error) { return proxy.New(c, s.opts.Options) }
	p, err := build(cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	load := opts.Load
	if load == nil {
		load = func() (*rules.Config, error) {
			return nil, errors.New("the rules were not loaded from a file, so they cannot be reloaded")
		}
	}
	s.rl = newReloader(p, load, build, s.metrics, s.log, time.Now)
	s.rl.listenFixed, s.rl.adminFixed = opts.Listen != "", opts.Admin != ""
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.rl.Proxy().ServeHTTP(w, r) })
	s.metrics.Loaded(float64(s.rl.Status().Since.UnixNano()) / 1e9)
	s.metrics.Declare(cfg)
	// The front's refusals, and the proxy's of a target of * (for
	// OPTIONS alone).
	s.metrics.DeclareRefusals(append(front.RefusalCodes(), rewrite.CodeRequestTarget))
	return s, nil
}

// Handler serves each request by the rules in force on its arrival,
// however many reloads happen while it is in flight: the agents' listener
// serves it, and callers in this process may call it directly.
func (s *Server) Handler() http.Handler { return s.handler }

// Observed is observe mode's record, which outlives reloads.
func (s *Server) Observed() *observe.Record { return s.opts.Shared.Observed }

// Close releases what the proxies share and New built, once Run has
// returned. A request still running after a timed-out drain may use the
// learned state after Close; the state drops what it is given then.
func (s *Server) Close() {
	if s.shared != nil {
		s.shared.Close()
	}
}

// Serve builds a server for cfg, runs it until ctx is done, and closes it.
func Serve(ctx context.Context, cfg *rules.Config, opts ServeOptions) error {
	s, err := New(cfg, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx)
}

// closeConnection is the Connection header value that ends a connection
// after its response.
var closeConnection = []string{"close"}

// errShuttingDown is the readiness check that fails once shutdown begins.
var errShuttingDown = errors.New("signpost is shutting down; send new requests elsewhere")

// withReload serves POST /-/reload in front of the admin handler h: it
// reloads the rules and answers 200 with the time they were loaded, or 422
// with every problem, as check prints them, while the old rules stay.
func withReload(h http.Handler, reload func() error, status func() admin.ReloadStatus) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /-/reload", func(w http.ResponseWriter, _ *http.Request) {
		err := reload()
		st := status()
		out := struct {
			Result   string   `json:"result"`
			Since    string   `json:"serving_since"`
			Problems []string `json:"problems,omitempty"`
		}{Result: "success", Since: st.Since.UTC().Format(time.RFC3339)}
		code := http.StatusOK
		if err != nil {
			out.Result, code = "failure", http.StatusUnprocessableEntity
			var ps rules.Problems
			if !errors.As(err, &ps) {
				ps = rules.Problems{{Message: err.Error()}}
			}
			for _, p := range ps {
				out.Problems = append(out.Problems, p.String())
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST /-/reload reloads the rules", http.StatusMethodNotAllowed)
	})
	mux.Handle("/", h)
	return mux
}

// upstreamProbe says whether the upstream accepts TCP connections, dialling
// it at most once per ttl however often it is asked.
type upstreamProbe struct {
	timeout, ttl time.Duration

	mu   sync.Mutex
	addr string
	at   time.Time
	err  error
}

func (u *upstreamProbe) check(target *url.URL) error {
	addr := target.Host
	if target.Port() == "" {
		port := "80"
		if target.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(target.Hostname(), port)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if addr == u.addr && time.Since(u.at) < u.ttl {
		return u.err
	}
	c, err := net.DialTimeout("tcp", addr, u.timeout)
	if err == nil {
		c.Close()
	} else {
		err = fmt.Errorf("the upstream %s accepts no connection: %w", addr, err)
	}
	u.addr, u.at, u.err = addr, time.Now(), err
	return err
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
