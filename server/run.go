package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/signpost-proxy/signpost/admin"
	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/rules"
)

// Run serves until ctx is done: the agents' listener with its front
// (unless InProcessOnly), the admin listener and the reloads. Then it
// stops reloading, fails readiness, closes the agents' listener after the
// shutdown delay and drains the requests in flight.
func (s *Server) Run(ctx context.Context) (err error) {
	opts, log, rl := &s.opts, s.log, s.rl
	cfg := rl.Proxy().Config()
	listen, adminAddr := cfg.Listen, cfg.Admin
	if opts.Listen != "" {
		listen = opts.Listen
	}
	if opts.Admin != "" {
		adminAddr = opts.Admin
	}
	var ln net.Listener
	if !opts.InProcessOnly {
		if ln, err = net.Listen("tcp", listen); err != nil {
			return fmt.Errorf("cannot listen for agents on %s: %w", listen, err)
		}
	}
	aln, err := net.Listen("tcp", adminAddr)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("cannot listen for the admin endpoints on %s: %w", adminAddr, err)
	}
	// stopping is set when shutdown begins: readiness fails from then on.
	var stopping atomic.Bool
	adm := &http.Server{
		Handler:           s.adminHandler(&stopping),
		ReadHeaderTimeout: orDefault(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       orDefault(opts.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    orDefault(opts.MaxHeaderBytes, DefaultMaxHeaderBytes),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
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
	var fs *front.Server
	var listenAddr net.Addr
	if ln != nil {
		fs = s.agentsFront()
		listenAddr = ln.Addr()
		go func() { errc <- fs.Serve(ln) }()
	}
	go func() { errc <- adm.Serve(aln) }()
	log.Info("listening", "listen", addrText(listenAddr), "admin", aln.Addr().String(),
		"upstream", rl.Proxy().Upstream().String(), "routes", len(cfg.Routes), "rules", cfg.File,
		"reload", opts.Load != nil, "watch", opts.Load != nil && opts.Watch, "gomaxprocs", runtime.GOMAXPROCS(0))
	if opts.Ready != nil {
		opts.Ready(listenAddr, aln.Addr())
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
	serr := adm.Shutdown(sctx)
	if fs != nil {
		serr = errors.Join(fs.Shutdown(sctx), serr)
	}
	if serr != nil {
		log.Error("requests still in flight after the drain timeout were cut off", "drain_timeout", drain.String(), "error", serr.Error())
		if fs != nil {
			_ = fs.Close()
		}
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

// agentsFront is the agents' listener's server: signpost's front over
// the handler, with net/http's limits, refusing malformed heads in the
// format of the rules in force.
func (s *Server) agentsFront() *front.Server {
	opts := &s.opts
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
			s.handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: orDefault(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       opts.ReadTimeout,
		WriteTimeout:      opts.WriteTimeout,
		IdleTimeout:       orDefault(opts.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    orDefault(opts.MaxHeaderBytes, DefaultMaxHeaderBytes),
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	fs := front.New(srv)
	fs.Refuse = (&refuser{
		format:  func() rules.BodyFormat { return s.rl.Proxy().Config().Format },
		metrics: s.metrics, log: s.log,
	}).refuse
	return fs
}

// adminHandler serves the admin endpoints, readiness failing once stopping
// is set, and POST /-/reload when the rules can be reloaded.
func (s *Server) adminHandler(stopping *atomic.Bool) http.Handler {
	rl := s.rl
	probe := &upstreamProbe{timeout: time.Second, ttl: 5 * time.Second}
	a := admin.Admin{
		Gatherer: s.reg,
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
	if s.opts.Load == nil {
		return admin.Handler(a)
	}
	a.Reload = func() error { return rl.Reload(TriggerAdmin) }
	return withReload(admin.Handler(a), a.Reload, rl.Status)
}

// addrText is a listener's address for the log, "in process" for none.
func addrText(a net.Addr) string {
	if a == nil {
		return "in process"
	}
	return a.String()
}
