// Command mcpload measures tool calls through an MCP server over streamable
// HTTP, for test/bench/run.sh: N sessions each call one tool in a loop, and
// one line gives the rate, the latency and the failures.
//
//	mcpload -url http://127.0.0.1:18109/mcp -tool get_ticket -args '{"ticket_id":"T-1"}'
//
// prints, after a warm-up and the measured duration,
//
//	calls=N errors=E rps=R p50_us=X p99_us=Y total=T self_cpu_us=C
//
// where calls, errors and the figures are of the calls ended within the
// measured duration, an error being a failed call or one whose isError is
// not -want-error; total counts every call made, warm-up included, to
// divide the server's CPU time by, and self_cpu_us is mcpload's own CPU
// time per call made (on Linux), which tells whether it was the bottleneck.
// {n} in -args is replaced by the call's number in its session, so that a
// failing call is not the same failure twice in a row, which signpost would
// answer as a repeat. It talks to the given URL only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// config is what the flags set.
type config struct {
	url       string
	tool      string
	args      string // JSON, {n} standing for the call's number
	sessions  int
	duration  time.Duration
	warmup    time.Duration
	wantError bool
}

// result is what a run measured.
type result struct {
	calls, errors int64 // ended within the measured duration
	total         int64 // every call made
	rps           float64
	p50, p99      time.Duration // of the calls ended within the measured duration
	selfCPU       time.Duration // mcpload's CPU time per call made
	firstErr      string        // the first failure seen, to say why
}

func (r result) String() string {
	return fmt.Sprintf("calls=%d errors=%d rps=%.0f p50_us=%d p99_us=%d total=%d self_cpu_us=%.1f",
		r.calls, r.errors, r.rps, r.p50.Microseconds(), r.p99.Microseconds(), r.total, float64(r.selfCPU.Nanoseconds())/1e3)
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var rawArgs string
	fs.StringVar(&c.url, "url", "", "the MCP server's streamable HTTP endpoint `URL`, e.g. http://127.0.0.1:18109/mcp (required)")
	fs.StringVar(&c.tool, "tool", "", "the tool to call (required)")
	fs.StringVar(&rawArgs, "args", "{}", "the tool's arguments, one JSON object; {n} in it is replaced by the call's number in its session")
	fs.IntVar(&c.sessions, "sessions", 16, "concurrent MCP sessions, each calling in a loop")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "how long calls are measured")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "how long calls are made before they are measured")
	fs.BoolVar(&c.wantError, "want-error", false, "the call is expected to be a tool error; a success then counts as an error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := c.check(rawArgs); err != nil {
		fmt.Fprintf(stderr, "mcpload: %v\n", err)
		return 2
	}
	res, err := load(context.Background(), c)
	if err != nil {
		fmt.Fprintf(stderr, "mcpload: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, res)
	switch {
	case res.calls == 0:
		fmt.Fprintf(stderr, "mcpload: no call to %s ended within the %v measured\n", c.tool, c.duration)
		return 1
	case res.errors == res.calls:
		fmt.Fprintf(stderr, "mcpload: every call to %s failed; the first: %s\n", c.tool, res.firstErr)
		return 1
	case res.errors > 0:
		fmt.Fprintf(stderr, "mcpload: %d of %d calls to %s failed; the first: %s\n", res.errors, res.calls, c.tool, res.firstErr)
	}
	return 0
}

// check validates the flags and keeps the arguments.
func (c *config) check(rawArgs string) error {
	u, err := url.Parse(c.url)
	switch {
	case c.url == "":
		return errors.New("-url is required: the MCP server's endpoint, e.g. http://127.0.0.1:18109/mcp")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("-url %q: must be an http or https URL with a host", c.url)
	case c.tool == "":
		return errors.New("-tool is required: the name of the tool to call")
	case c.sessions < 1:
		return fmt.Errorf("-sessions %d: must be at least 1", c.sessions)
	case c.duration <= 0:
		return fmt.Errorf("-duration %v: must be positive", c.duration)
	case c.warmup < 0:
		return fmt.Errorf("-warmup %v: must not be negative", c.warmup)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(rawArgs, "{n}", "1")), &obj); err != nil || obj == nil {
		return fmt.Errorf("-args %s: must be one JSON object, with {n} where the call's number goes", rawArgs)
	}
	c.args = rawArgs
	return nil
}

// connectTimeout bounds opening each session; callTimeout bounds the run
// past its duration, should a call never be answered.
const (
	connectTimeout = 10 * time.Second
	callTimeout    = 30 * time.Second
)

// load opens c.sessions sessions, has each call the tool until the warm-up
// and the duration are over, and closes them.
func load(ctx context.Context, c config) (result, error) {
	// Each session holds a connection for its POSTs and one for the stream
	// of server messages: without enough idle connections kept, net/http
	// would dial again for most calls.
	tr := &http.Transport{MaxIdleConns: 4 * c.sessions, MaxIdleConnsPerHost: 4 * c.sessions}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	client := sdk.NewClient(&sdk.Implementation{Name: "mcpload", Version: "1"}, nil)
	sessions := make([]*sdk.ClientSession, c.sessions)
	defer func() {
		var wg sync.WaitGroup
		for _, s := range sessions {
			if s != nil {
				wg.Go(func() { _ = s.Close() })
			}
		}
		wg.Wait()
	}()
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	errs := make([]error, c.sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			sessions[i], errs[i] = client.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: c.url, HTTPClient: hc, MaxRetries: -1}, nil)
		})
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return result{}, fmt.Errorf("cannot open %d sessions at %s: %d failed; the first: %w", c.sessions, c.url, len(failed), failed[0])
	}

	cpu0, start := cpuTime(), time.Now()
	from, until := start.Add(c.warmup), start.Add(c.warmup+c.duration)
	rctx, rcancel := context.WithDeadline(ctx, until.Add(callTimeout))
	defer rcancel()
	numbered := strings.Contains(c.args, "{n}")
	type tally struct {
		lat           []time.Duration
		errors, total int64
		firstErr      string
	}
	tallies := make([]tally, c.sessions)
	for i, s := range sessions {
		wg.Go(func() {
			t := &tallies[i]
			params := &sdk.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)}
			for n := 1; ; n++ {
				if numbered {
					params.Arguments = json.RawMessage(strings.ReplaceAll(c.args, "{n}", strconv.Itoa(n)))
				}
				t0 := time.Now()
				if !t0.Before(until) {
					return
				}
				res, err := s.CallTool(rctx, params)
				t1 := time.Now()
				t.total++
				failed := ""
				switch {
				case err != nil:
					failed = err.Error()
				case res.IsError != c.wantError:
					failed = fmt.Sprintf("isError %t, want %t: %s", res.IsError, c.wantError, text(res))
				}
				if failed != "" && t.firstErr == "" {
					t.firstErr = failed
				}
				if t1.Before(from) || !t1.Before(until) {
					continue
				}
				t.lat = append(t.lat, t1.Sub(t0))
				if failed != "" {
					t.errors++
				}
			}
		})
	}
	wg.Wait()
	cpu := cpuTime() - cpu0

	var r result
	var lat []time.Duration
	for _, t := range tallies {
		lat = append(lat, t.lat...)
		r.errors += t.errors
		r.total += t.total
		if r.firstErr == "" {
			r.firstErr = t.firstErr
		}
	}
	if r.total > 0 {
		r.selfCPU = cpu / time.Duration(r.total)
	}
	r.calls = int64(len(lat))
	r.rps = float64(r.calls) / c.duration.Seconds()
	slices.Sort(lat)
	r.p50, r.p99 = percentile(lat, 50), percentile(lat, 99)
	return r, nil
}

// percentile is the p-th percentile of sorted durations, by the nearest
// rank; zero for none.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // rank ⌈n·p/100⌉, from 1
	return sorted[max(i, 1)-1]
}

// text is a tool result's first text block, cut short, to say why a call
// was counted as failed.
func text(res *sdk.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			if len(t.Text) > 200 {
				return t.Text[:200] + "…"
			}
			return t.Text
		}
	}
	return "no text content"
}
