// Command ticketapi serves the legacy ticket API of package ticketapi on its
// own, as the upstream of the Compose and Kubernetes examples in deploy/.
//
// Usage:
//
//	ticketapi [--listen ADDR]
//	ticketapi healthcheck [--url URL]
//	ticketapi agents [--target URL]
//
// healthcheck asks a running ticketapi for a known ticket and exits 0 when
// it answers 200, so that an image with no shell can still be probed.
// agents replays, against the API or signpost in front of it, the calls of
// four scripted agents that get values wrong before they get them right,
// printing each call and its status: the traffic docs/adopting.md observes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "agents" {
		os.Exit(agents(os.Args[2:]))
	}
	fs := flag.NewFlagSet("ticketapi", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:8081", "`address` to serve the API on")
	_ = fs.Parse(os.Args[1:])
	srv := &http.Server{Addr: *listen, Handler: ticketapi.New().Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	log.Printf("ticketapi listening on %s", *listen)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("ticketapi: %v", err)
	}
}

// healthcheck exits 0 when GET url answers 200 within two seconds, else 1.
func healthcheck(args []string) int {
	fs := flag.NewFlagSet("healthcheck", flag.ExitOnError)
	url := fs.String("url", "http://127.0.0.1:8081/tickets/T-8841", "`URL` that must answer 200")
	_ = fs.Parse(args)
	c := &http.Client{Timeout: 2 * time.Second}
	res, err := c.Get(*url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ticketapi healthcheck: %v\n", err)
		return 1
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "ticketapi healthcheck: GET %s: status %d, want 200\n", *url, res.StatusCode)
		return 1
	}
	return 0
}

// agents sends ticketapi.Agents to target, one call after the other, and
// exits 0 when each was answered, whatever its status.
func agents(args []string) int {
	fs := flag.NewFlagSet("agents", flag.ExitOnError)
	target := fs.String("target", "http://127.0.0.1:8080", "base `URL` to send the calls to: signpost, or the API itself")
	_ = fs.Parse(args)
	c := &http.Client{Timeout: 5 * time.Second}
	for _, call := range ticketapi.Agents() {
		var body io.Reader
		if call.Body != "" {
			body = strings.NewReader(call.Body)
		}
		req, err := http.NewRequest(call.Method, strings.TrimSuffix(*target, "/")+call.Path, body)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ticketapi agents: %v\n", err)
			return 1
		}
		req.Header.Set("X-Session-Id", call.Caller)
		if call.Body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := c.Do(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ticketapi agents: %v\n", err)
			return 1
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		fmt.Printf("%s %-6s %-32s %s %d\n", call.Caller, call.Method, call.Path, call.Body, res.StatusCode)
	}
	return 0
}
