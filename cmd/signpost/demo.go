package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/configs"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/server"
)

// demoCall is the wrong call the demo sends both ways, and its correction.
var demoCall = struct{ method, path, wrong, right string }{
	"POST", "/tickets",
	`{"title":"Printer on fire","status":"open","priority":"urgent","customer_id":"C-1042"}`,
	`{"title":"Printer on fire","status":"open","priority":"p1","customer_id":"C-1042"}`,
}

const demoHelp = `Usage: signpost demo

Starts a legacy ticket API and signpost in front of it on free loopback ports,
sends the same wrong call to both, and prints the two answers side by side.`

// demo shows a wrong call answered with and without signpost.
func demo(fs *flag.FlagSet) runFunc {

	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if err := runDemo(stdout); err != nil {
			fmt.Fprintf(stderr, "signpost demo: %v\n", err)
			return exitFindings
		}
		return exitOK
	}
}

func runDemo(out io.Writer) error {
	const rulesName = "configs/tickets.yaml"
	cfg, err := rules.Parse(rulesName, configs.Tickets)
	if err != nil {
		return fmt.Errorf("the embedded rules do not load: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("cannot start the legacy ticket API: %w", err)
	}
	legacy := &http.Server{Handler: ticketapi.New().Handler(), ReadHeaderTimeout: 5 * time.Second}
	go legacy.Serve(ln)
	defer legacy.Close()

	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ listen, admin net.Addr }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Serve(ctx, cfg, server.ServeOptions{
			Options: proxy.Options{Upstream: upstreamURL(ln.Addr().String())},
			Listen:  "127.0.0.1:0", Admin: "127.0.0.1:0",
			Ready:        func(l, a net.Addr) { ready <- addrs{l, a} },
			DrainTimeout: time.Second,
		})
	}()
	var sp addrs
	select {
	case sp = <-ready:
	case err := <-done:
		cancel()
		return fmt.Errorf("cannot start signpost: %w", err)
	case <-time.After(10 * time.Second):
		cancel()
		return fmt.Errorf("signpost did not start within 10s")
	}
	defer func() { cancel(); <-done }()

	client := &http.Client{Timeout: 10 * time.Second}
	direct, err := send(client, "http://"+ln.Addr().String(), demoCall.wrong)
	if err != nil {
		return err
	}
	through, err := send(client, "http://"+sp.listen.String(), demoCall.wrong)
	if err != nil {
		return err
	}
	fixed, err := send(client, "http://"+sp.listen.String(), demoCall.right)
	if err != nil {
		return err
	}
	metricLine, err := rejectionMetric(client, "http://"+sp.admin.String()+"/metrics")
	if err != nil {
		return err
	}

	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "signpost demo: one wrong call, sent straight to a legacy ticket API and through signpost.\n")
	fmt.Fprintf(w, "Rules: %s (embedded), %d routes.\n\n", rulesName, len(cfg.Routes))
	fmt.Fprintf(w, "  %s %s  %s\n\n", demoCall.method, demoCall.path, demoCall.wrong)
	sideBySide(w,
		exchangeLines("WITHOUT signpost", ln.Addr().String(), direct),
		exchangeLines("WITH signpost", sp.listen.String(), through))
	fmt.Fprintf(w, "\nWithout signpost the agent can only guess again (High? P1? critical?). With it, the next call is an edit:\n\n")
	fmt.Fprintf(w, "  %s %s  %s\n  -> %s, %d bytes: %s\n", demoCall.method, demoCall.path, demoCall.right, fixed.status, len(fixed.body), compact(fixed.body))
	fmt.Fprintf(w, "\nThe operator's side, from the admin listener's /metrics:\n\n  %s\n", metricLine)
	return w.Flush()
}

type response struct {
	status      string
	contentType string
	body        []byte
}

func send(c *http.Client, base, body string) (*response, error) {
	req, err := http.NewRequest(demoCall.method, base+demoCall.path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("calling %s: %w", base, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer from %s: %w", base, err)
	}
	return &response{status: res.Status, contentType: res.Header.Get("Content-Type"), body: b}, nil
}

func rejectionMetric(c *http.Client, url string) (string, error) {
	res, err := c.Get(url)
	if err != nil {
		return "", fmt.Errorf("reading metrics: %w", err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		// Every series the rules name is exported from the start, at 0:
		// the one the wrong call counted in is the one that is not.
		if strings.HasPrefix(sc.Text(), "signpost_rejections_total{") && !strings.HasSuffix(sc.Text(), " 0") {
			return sc.Text(), nil
		}
	}
	return "", fmt.Errorf("metrics show no rejection; the wrong call was not rewritten")
}

func exchangeLines(title, addr string, r *response) []string {
	lines := []string{title, "(" + addr + ")", strings.Repeat("-", 30), r.status, "Content-Type: " + r.contentType, ""}
	var pretty bytes.Buffer
	if json.Indent(&pretty, r.body, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(r.body)
	}
	lines = append(lines, strings.Split(pretty.String(), "\n")...)
	return append(lines, "", fmt.Sprintf("%d bytes on the wire", len(r.body)))
}

func sideBySide(w io.Writer, left, right []string) {
	width := 0
	for _, l := range left {
		width = max(width, len([]rune(l)))
	}
	for i := range max(len(left), len(right)) {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-*s | %s", width, l, r), " "))
	}
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
