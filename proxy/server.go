package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	Options
	// Listen and Admin override the rule file's addresses.
	Listen, Admin string
	// Ready, if set, is called with the bound addresses once both listeners
	// accept connections (useful with port 0).
	Ready func(listen, admin net.Addr)
	// DrainTimeout bounds how long shutdown waits for requests in flight.
	// Zero means 10 seconds.
	DrainTimeout time.Duration
}

// Serve runs the agent-facing proxy and the admin listener until ctx is
// done, then drains requests in flight and returns.
func Serve(ctx context.Context, cfg *rules.Config, opts ServeOptions) error {
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
	p, err := New(cfg, opts.Options)
	if err != nil {
		return err
	}
	defer p.Close()
	listen, admin := cfg.Listen, cfg.Admin
	if opts.Listen != "" {
		listen = opts.Listen
	}
	if opts.Admin != "" {
		admin = opts.Admin
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("cannot listen for agents on %s: %w", listen, err)
	}
	aln, err := net.Listen("tcp", admin)
	if err != nil {
		ln.Close()
		return fmt.Errorf("cannot listen for the admin endpoints on %s: %w", admin, err)
	}
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	adm := &http.Server{Handler: AdminHandler(Admin{Gatherer: reg, Current: func() *Proxy { return p }}), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- adm.Serve(aln) }()
	log.Info("listening", "listen", ln.Addr().String(), "admin", aln.Addr().String(),
		"upstream", p.target.String(), "routes", len(cfg.Routes), "rules", cfg.File)
	if opts.Ready != nil {
		opts.Ready(ln.Addr(), aln.Addr())
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("listener failed", "error", err.Error())
	}
	drain := opts.DrainTimeout
	if drain <= 0 {
		drain = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	serr := errors.Join(srv.Shutdown(sctx), adm.Shutdown(sctx))
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return serr
}
