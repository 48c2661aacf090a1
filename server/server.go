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
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/signpost-proxy/signpost/admin"
	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/internal/upstream"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
)

// Defaults of the agent-facing server's limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 1 << 20
	DefaultDrainTimeout      = 10 * time.Second
)

// ServeOptions configure Serve.
type ServeOptions struct {
	proxy.Options
	// Listen and Admin override the rule file's addresses, at start and
	// across reloads.
	Listen, Admin string
	// Ready, if set, is called with the bound addresses once both listeners
	// accept connections (useful with port 0).
	Ready func(listen, admin net.Addr)
	// InProcess, if set, is called before the listeners open with the
	// handler the agents' listener serves, each request by the rules in
	// force on its arrival: callers in this process call it directly.
	InProcess func(http.Handler)
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
}

// Serve runs the agent-facing proxy and the admin listener until ctx is
// done, then stops accepting connections, drains requests in flight and
// returns. Each request is served by the rules in force when it arrived,
// however many reloads happen while it is in flight; what the proxy learns
// from traffic outlives reloads.
func Serve(ctx context.Context, cfg *rules.Config, opts ServeOptions) (err error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		opts.Log = log
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Metrics == nil {
		opts.Metrics = metrics.New(reg)
	}
	if opts.LogLinesDropped != nil {
		reg.MustRegister(metrics.LogLinesDropped(opts.LogLinesDropped))
	}
	if opts.State == nil {
		// One state for every proxy the reloads build, closed here.
		state := learn.New(cfg.Learn, opts.Metrics, log)
		opts.State = state
		// A request still running after a timed-out drain may use it
		// after Close; the state drops what it is given then.
		defer state.Close()
	}
	if opts.Observed == nil {
		// Observe mode's record outlives reloads: switching a route to
		// enforce and back loses nothing learned.
		opts.Observed = observe.New(observe.Options{Window: cfg.Learn.RecoveryWindow})
	}
	if opts.Answers == nil {
		opts.Answers = observe.NewAnswers(0)
	}
	if opts.Transport == nil && opts.Pool == nil {
		// Shared by every proxy the reloads build, so that a reload keeps
		// the upstream connections warm.
		opts.Pool = upstream.New(orDefault(opts.DialTimeout, proxy.DefaultDialTimeout), orDefault(opts.UpstreamTimeout, proxy.DefaultUpstreamTimeout))
		defer opts.Pool.CloseIdle()
		opts.Fallback = proxy.NewTransportWith(opts.DialTimeout, opts.UpstreamTimeout)
		defer opts.Fallback.CloseIdleConnections()
	}
	if opts.Budget == nil {
		// One budget for every proxy the reloads build: requests still
		// served by old rules hold buffers too.
		opts.Budget = budget.New(opts.BufferBudget, opts.Metrics)
	}
	if opts.ReadTimeout > 0 && opts.ReadTimeout <= orDefault(opts.RequestBodyTimeout, proxy.DefaultRequestBodyTimeout) {
		// The whole request, body included, must come within the read
		// timeout, counted from its first bytes: a body deadline of the
		// proxy's own could only come later, and would replace it.
		opts.RequestBodyTimeout = -1
	}
	build := func(c *rules.Config) (*proxy.Proxy, error) { return proxy.New(c, opts.Options) }
	p, err := build(cfg)
	if err != nil {
		return err
	}
	load := opts.Load
	if load == nil {
		load = func() (*rules.Config, error) {
			return nil, errors.New("the rules were not loaded from a file, so they cannot be reloaded")
		}
	}
	rl := newReloader(p, load, build, opts.Metrics, log, time.Now)
	rl.listenFixed, rl.adminFixed = opts.Listen != "", opts.Admin != ""
	if opts.InProcess != nil {
		opts.InProcess(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rl.Proxy().ServeHTTP(w, r) }))
	}
	opts.Metrics.Loaded(float64(rl.Status().Since.UnixNano()) / 1e9)
	opts.Metrics.Declare(cfg)
	opts.Metrics.DeclareRefusals(front.RefusalCodes())

	listen, adminAddr := cfg.Listen, cfg.Admin
	if opts.Listen != "" {
		listen = opts.Listen
	}
	if opts.Admin != "" {
		adminAddr = opts.Admin
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("cannot listen for agents on %s: %w", listen, err)
	}
	aln, err := net.Listen("tcp", adminAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("cannot listen for the admin endpoints on %s: %w", adminAddr, err)
	}
	errorLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	srv := &http.Server{
		// Each request is served whole by the proxy in force on arrival.
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.TransferEncoding) > 0 {
				// net/http drops a Content-Length sent beside chunked
				// framing unseen; RFC 9112, section 6.1, has the server
				// close the connection after such a request, so that
				// bytes past the chunked body are never read as a request.
				w.Header()["Connection"] = closeConnection
			}
			if seen := front.HeadSeen(r); r.ProtoMajor == 1 && r.ProtoMinor == 0 && !seen {
				// net/http drops Transfer-Encoding from an HTTP/1.0
				// request and frames its body by Content-Length; the
				// front refuses such a request when it sees its head.
				// One it did not see ends its connection, so that bytes
				// another server would read as its body are never read
				// as a request.
				w.Header()["Connection"] = closeConnection
			}
			rl.Proxy().ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: orDefault(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       opts.ReadTimeout,
		WriteTimeout:      opts.WriteTimeout,
		IdleTimeout:       orDefault(opts.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    orDefault(opts.MaxHeaderBytes, DefaultMaxHeaderBytes),
		ErrorLog:          errorLog,
	}
	probe := &upstreamProbe{timeout: time.Second, ttl: 5 * time.Second}
	// stopping is set when shutdown begins: readiness fails from then on.
	var stopping atomic.Bool
	a := admin.Admin{
		Gatherer: reg,
		Current:  func() admin.Serving { return rl.Proxy() },
		Reloads:  rl.Status,
		Ready: func() []admin.Check {
			var down error
			if stopping.Load() {
				down = errShuttingDown
			}
			return []admin.Check{{Name: "rules"}, {Name: "upstream", Err: probe.check(rl.Proxy().Upstream())}, {Name: "shutdown", Err: down}}
		},
	}
	var adminHandler http.Handler
	if opts.Load != nil {
		a.Reload = func() error { return rl.Reload(TriggerAdmin) }
		adminHandler = withReload(admin.Handler(a), a.Reload, rl.Status)
	} else {
		adminHandler = admin.Handler(a)
	}
	adm := &http.Server{
		Handler:           adminHandler,
		ReadHeaderTimeout: orDefault(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       orDefault(opts.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    orDefault(opts.MaxHeaderBytes, DefaultMaxHeaderBytes),
		ErrorLog:          errorLog,
	}

	// The reload loop stops before the listeners do, so that no reload
	// races the drain.
	lctx, stopLoop := context.WithCancel(ctx)
	loopDone := make(chan struct{})
	if opts.Load != nil {
		go func() {
			defer close(loopDone)
			rl.run(lctx, opts.Reload, opts.Watch, opts.Debounce)
		}()
	} else {
		close(loopDone)
	}
	stopReloads := func() { stopLoop(); <-loopDone }
	defer stopReloads()

	errc := make(chan error, 2)
	fs := front.New(srv)
	fs.Refuse = (&refuser{
		format:  func() rules.BodyFormat { return rl.Proxy().Config().Format },
		metrics: opts.Metrics, log: log,
	}).refuse
	go func() { errc <- fs.Serve(ln) }()
	go func() { errc <- adm.Serve(aln) }()
	log.Info("listening", "listen", ln.Addr().String(), "admin", aln.Addr().String(),
		"upstream", p.Upstream().String(), "routes", len(cfg.Routes), "rules", cfg.File,
		"reload", opts.Load != nil, "watch", opts.Load != nil && opts.Watch, "gomaxprocs", runtime.GOMAXPROCS(0))
	if opts.Ready != nil {
		opts.Ready(ln.Addr(), aln.Addr())
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("listener failed", "error", err.Error())
	}
	stopReloads()
	// Readiness fails before the listener closes, so that a load balancer
	// polling /readyz stops sending requests while they are still taken.
	stopping.Store(true)
	drain := orDefault(opts.DrainTimeout, DefaultDrainTimeout)
	log.Info("shutting down", "shutdown_delay", opts.ShutdownDelay.String(), "drain_timeout", drain.String())
	if err == nil && opts.ShutdownDelay > 0 {
		time.Sleep(opts.ShutdownDelay)
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	// Shutdown closes the agents' listener, then waits for requests in
	// flight; the admin endpoints stay up meanwhile.
	if serr := errors.Join(fs.Shutdown(sctx), adm.Shutdown(sctx)); serr != nil {
		log.Error("requests still in flight after the drain timeout were cut off", "drain_timeout", drain.String(), "error", serr.Error())
		_ = fs.Close()
		_ = adm.Close()
		if err == nil || errors.Is(err, http.ErrServerClosed) {
			err = fmt.Errorf("requests still in flight after the drain timeout (%v) were cut off", drain)
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
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
