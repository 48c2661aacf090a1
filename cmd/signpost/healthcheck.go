package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/rules"
)

// healthcheck asks a running signpost's admin listener whether it is live
// (/livez) or ready (/readyz), for images with no shell or curl: Docker's
// HEALTHCHECK and orchestrators' exec probes run it beside the server.
const healthcheckHelp = `Usage: signpost healthcheck [--admin ADDR] [--ready] [--timeout D]

Exits 0 when signpost's admin listener answers /livez (or /readyz) with 200, else 1.`

func healthcheck(fs *flag.FlagSet) runFunc {
	admin := fs.String("admin", rules.DefaultAdmin, "the admin `address` signpost serves; an address with no host, like :9090, is probed on 127.0.0.1")
	ready := fs.Bool("ready", false, "ask /readyz (rules loaded and upstream reachable) instead of /livez (the process serves)")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "signpost healthcheck: unexpected argument %q; the admin address is a flag, e.g. signpost healthcheck --admin %s\n", fs.Arg(0), rules.DefaultAdmin)
			return exitUsage
		}
		if *timeout <= 0 {
			fmt.Fprintf(stderr, "signpost healthcheck: --timeout %v: must be a positive duration, e.g. --timeout 2s\n", *timeout)
			return exitUsage
		}
		url, err := probeURL(*admin, *ready)
		if err != nil {
			fmt.Fprintf(stderr, "signpost healthcheck: --admin %v\n", err)
			return exitUsage
		}
		// Never through an HTTP proxy from the environment: the admin listener
		// is on this host.
		c := &http.Client{Timeout: *timeout, Transport: &http.Transport{Proxy: nil}}
		res, err := c.Get(url)
		if err != nil {
			fmt.Fprintf(stderr, "signpost healthcheck: %v\n", err)
			return exitFindings
		}
		defer res.Body.Close()
		body := firstLines(res.Body, 8, 1024)
		if res.StatusCode != http.StatusOK {
			fmt.Fprintf(stderr, "signpost healthcheck: GET %s: %s, want 200 OK\n%s", url, res.Status, body)
			return exitFindings
		}
		fmt.Fprintf(stdout, "GET %s: %s\n%s", url, res.Status, body)
		return exitOK
	}
}

// probeURL is the URL of the admin endpoint to ask at addr: /readyz?verbose
// when ready, so that a failure says which check failed, else /livez.
func probeURL(addr string, ready bool) (string, error) {
	if err := rules.CheckAddress(addr); err != nil {
		return "", err
	}
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // a listener on every address answers on loopback too
	}
	path := "/livez"
	if ready {
		path = "/readyz?verbose"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// firstLines returns up to n lines of r, read no further than limit bytes,
// each ending in a newline, for a message that cannot grow without bound.
func firstLines(r io.Reader, n, limit int) string {
	var b strings.Builder
	sc := bufio.NewScanner(io.LimitReader(r, int64(limit)))
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}
