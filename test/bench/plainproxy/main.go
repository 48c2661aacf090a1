// Command plainproxy is the benchmark's baseline Go proxy: a plain
// httputil.ReverseProxy with a Transport tuned for one busy upstream, and
// nothing else (no pooled copy buffers, no rules).
//
// It is run by test/bench/run.sh, and by tests that hold signpost to
// net/http, and listens on loopback only. With --admin it also serves
// expvar's /debug/vars, the Go runtime's memory figures among them, on an
// address of its own.
package main

import (
	_ "expvar" // /debug/vars on the admin address
	"flag"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:18104", "`address` to listen on")
	upstream := flag.String("upstream", "http://127.0.0.1:18101", "upstream base `URL`")
	admin := flag.String("admin", "", "`address` to serve /debug/vars on; none when empty")
	flag.Parse()
	if *admin != "" {
		go func() { log.Fatal(http.ListenAndServe(*admin, nil)) }()
	}

	target, err := url.Parse(*upstream)
	if err != nil {
		log.Fatalf("plainproxy: --upstream %q: %v", *upstream, err)
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		Transport: transport,
	}
	srv := &http.Server{Addr: *addr, Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
