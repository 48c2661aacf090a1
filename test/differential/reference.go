package differential

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"
)

// UpstreamTimeout bounds the reference's wait for an upstream's response
// headers; give signpost the same with --upstream-timeout.
const UpstreamTimeout = 2 * time.Second

// Reference is the proxy signpost is judged against: net/http's Server in
// front of httputil.ReverseProxy, configured as signpost configures its
// own server and its general path.
type Reference struct {
	// Addr is the host:port it listens on.
	Addr string

	srv       *http.Server
	transport *http.Transport
	served    chan struct{}
}

// StartReference starts a Reference in front of upstreamURL on 127.0.0.1,
// closed at t's cleanup, and returns its address.
func StartReference(t testing.TB, upstreamURL string) (addr string) {
	t.Helper()
	r, err := NewReference(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r.Addr
}

// NewReference starts a Reference in front of upstreamURL on 127.0.0.1;
// Close stops it.
func NewReference(upstreamURL string) (*Reference, error) {
	target, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	quiet := log.New(io.Discard, "", 0)
	// As signpost's proxy.NewTransport: no transparent compression, many
	// idle connections to one host, the same header timeout.
	transport := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: UpstreamTimeout,
		DisableCompression:    true,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport: transport,
		ErrorLog:  quiet,
	}
	// As signpost's server: its default header timeout, idle timeout and
	// header limit.
	srv := &http.Server{
		Handler:           rp,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          quiet,
	}
	r := &Reference{Addr: ln.Addr().String(), srv: srv, transport: transport, served: make(chan struct{})}
	go func() {
		defer close(r.served)
		_ = srv.Serve(ln)
	}()
	return r, nil
}

// Close closes the listener and every connection, both ways.
func (r *Reference) Close() {
	_ = r.srv.Close()
	<-r.served
	r.transport.CloseIdleConnections()
}
