// Command soak drives a running signpost for a long time and samples its
// memory: the soak test of resident memory after warm-up. It starts
// nothing itself; test/soak/run.sh builds and starts signpost, the demo
// ticket API behind it and this driver, on free loopback ports.
//
// Usage:
//
//	soak run --target URL --admin URL --pid PID [flags]   drive and sample, writing a CSV
//	soak summary --csv FILE [--warmup 15m]                RSS at 1, 5, 13, 30, 60 min and the slope after warm-up
//	soak freeports N                                      print N free loopback ports
//	soak seconds DURATION                                 print a Go duration in whole seconds
//
// run keeps --conns keep-alive connections open to --target and sends
// --rate requests a second over them in all, as --callers distinct callers
// (the X-Session-Id header, signpost's default learn.caller_header), each
// going through a script of successes and wrong calls (their wrong enum
// values of --values kinds, their bodies padded by --pad bytes) against
// configs/tickets.yaml: rewritten 400s and 404s, an unrouted 404 wrapped,
// and now and then the corrected call. Every --reload it reloads
// the rules (POST /-/reload on --admin, or SIGHUP to --pid). Every
// --sample it reads VmRSS and its parts from /proc/PID/status and the Go
// runtime figures from --admin's /metrics, and appends a row to --csv.
// It stops after --duration.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "run":
		os.Exit(run(os.Args[2:]))
	case "summary":
		os.Exit(summary(os.Args[2:]))
	case "freeports":
		os.Exit(freeports(os.Args[2:]))
	case "seconds":
		os.Exit(seconds(os.Args[2:]))
	}
	usage()
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: soak run --target URL --admin URL --pid PID [flags] | soak summary --csv FILE [--warmup D] | soak freeports N")
	os.Exit(2)
}

// freeports prints n loopback ports free now, one a line: each is bound to
// port 0 and closed, all held at once so that they differ.
func freeports(args []string) int {
	n := 1
	if len(args) > 0 {
		var err error
		if n, err = strconv.Atoi(args[0]); err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "soak freeports: N must be a positive number")
			return 2
		}
	}
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak freeports:", err)
			return 1
		}
		ls = append(ls, l)
	}
	for _, l := range ls {
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	return 0
}

// seconds prints a Go duration (70m, 1h30m) in whole seconds, for run.sh.
func seconds(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "soak seconds: give one duration, e.g. 70m")
		return 2
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d <= 0 {
		fmt.Fprintln(os.Stderr, "soak seconds: a duration such as 10m or 1h30m, please")
		return 2
	}
	fmt.Println(int64(d.Round(time.Second) / time.Second))
	return 0
}

// --- the load ---------------------------------------------------------------

// call is one request of a caller's script, and what it should get.
type call struct {
	method, path, body string
	want               string // what the answer should be: ok, rewritten, wrapped
}

const (
	wantOK        = "ok"
	wantRewritten = "rewritten"
	wantWrapped   = "wrapped"
)

// script is what each caller does, one step per request it is picked for,
// from the top again after the last: 16 steps, 9 successes, 6 wrong calls
// signpost rewrites (two with enum values it notes for alias learning) and
// one unrouted 404 no rule explains, which it wraps (unmatched: wrap).
// Every eighth round, the corrected create succeeds (a new ticket
// upstream); the other rounds read a ticket instead, so that the ticket
// API does not grow much. In a body, {wrong} is the caller's wrong enum
// value (see --values) and {pad} the padding --pad asks for.
var script = []call{
	{"GET", "/tickets/T-8841", "", wantOK},
	{"POST", "/tickets", `{"title":"Printer on fire",{pad}"status":"open","priority":"urgent{wrong}","customer_id":"C-1042"}`, wantRewritten}, // 400 invalid_priority
	{"GET", "/customers?query=acme", "", wantOK},
	{"POST", "/tickets", `{"title":"Printer on fire",{pad}"status":"open","priority":"p1","customer_id":"C-9"}`, wantRewritten}, // 404 unknown_customer
	{"GET", "/tickets/8841", "", wantRewritten}, // 404 from the API, rewritten with the id's pattern
	{"GET", "/tickets/T-8842", "", wantOK},
	{"PATCH", "/tickets/T-8842", `{{pad}"status":"resolved{wrong}"}`, wantRewritten}, // 400 invalid_status
	{"PATCH", "/tickets/T-8842", `{{pad}"status":"open"}`, wantOK},                   // the recovery: resolved -> open
	{"GET", "/tickets/T-8841", "", wantOK},
	{"GET", "/tickets/T-1", "", wantRewritten}, // 404 unknown_ticket
	{"GET", "/customers?query=glob", "", wantOK},
	{"POST", "/tickets/T-8841/assign", `{"assignee":"bob"}`, wantRewritten}, // 400 invalid_assignee
	{"POST", "/tickets/T-8841/assign", `{"assignee":"eng-3"}`, wantOK},
	{"GET", "/v1/status", "", wantWrapped}, // unrouted: the API's own 404, wrapped as upstream_rejected
	{"GET", "/tickets/T-8841", "", wantOK},
	{"POST", "/tickets", `{"title":"Printer on fire",{pad}"status":"open","priority":"p1","customer_id":"C-1042"}`, wantOK}, // every 8th round; else a read
}

// wrongSuffix is the end of caller's wrong enum values: none when all
// callers send the same ones (values 1), else "-" and letters, one of
// values kinds, so that each kind is another alias to learn and another
// body to count the tokens of.
func wrongSuffix(caller, values int) string {
	k := caller % values
	if k == 0 {
		return ""
	}
	b := []byte{'-'}
	for ; k > 0; k /= 26 {
		b = append(b, byte('a'+k%26))
	}
	return string(b)
}

// bodyOf is cl's body for caller: its wrong value and padding put in.
func (d *driver) bodyOf(cl call, caller int) string {
	if !strings.Contains(cl.body, "{wrong}") && !strings.Contains(cl.body, "{pad}") {
		return cl.body
	}
	b := strings.Replace(cl.body, "{wrong}", wrongSuffix(caller, d.values), 1)
	return strings.Replace(b, "{pad}", d.pad, 1)
}

// createEvery is how many rounds of the script pass between two creates
// that succeed.
const createEvery = 8

var readInstead = call{"GET", "/tickets/T-8842", "", wantOK}

// counters are the driver's own figures, read by the sampler.
type counters struct {
	sent, ok, rewritten, wrapped, unexpected, status5xx, failed, reconnects atomic.Int64
	late                                                                    atomic.Int64 // requests dropped from the schedule, the driver behind it
	maxLatency                                                              atomic.Int64 // nanoseconds, since the last sample
	reloads, reloadFailures                                                 atomic.Int64
}

type driver struct {
	host    string // host:port of signpost's agents' listener
	callers int
	values  int             // kinds of wrong enum values
	pad     string          // a member put in each JSON body, "" for none
	steps   []atomic.Uint32 // per caller, the next step of its script
	c       *counters
}

// worker keeps one connection to signpost and sends a request every
// interval on it, reconnecting when it breaks, until ctx is done.
func (d *driver) worker(ctx context.Context, id int, interval time.Duration, start time.Time) {
	rng := rand.New(rand.NewPCG(uint64(id)+1, 0x50a4))
	var conn net.Conn
	var br *bufio.Reader
	var bw *bufio.Writer
	closeConn := func() {
		if conn != nil {
			conn.Close()
			conn = nil
		}
	}
	defer closeConn()
	// Workers are spread over the first interval, not all at once.
	next := start.Add(time.Duration(rng.Int64N(int64(interval))))
	body := make([]byte, 0, 4<<10)
	for {
		now := time.Now()
		if wait := next.Sub(now); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		} else if -wait > time.Second {
			// Far behind: drop what was missed rather than burst.
			missed := int64(-wait / interval)
			d.c.late.Add(missed)
			next = next.Add(time.Duration(missed) * interval)
		}
		next = next.Add(interval)
		if ctx.Err() != nil {
			return
		}
		if conn == nil {
			c, err := net.DialTimeout("tcp", d.host, 5*time.Second)
			if err != nil {
				d.c.failed.Add(1)
				continue
			}
			conn, br, bw = c, bufio.NewReaderSize(c, 4<<10), bufio.NewWriterSize(c, 4<<10)
			d.c.reconnects.Add(1)
		}
		caller := rng.IntN(d.callers)
		step := d.steps[caller].Add(1) - 1
		cl := script[step%uint32(len(script))]
		if step%uint32(len(script)) == uint32(len(script)-1) && (step/uint32(len(script)))%createEvery != 0 {
			cl = readInstead
		}
		var err error
		body, err = d.send(conn, br, bw, caller, cl, body[:0])
		if err != nil {
			d.c.failed.Add(1)
			closeConn()
		}
	}
}

// send writes one request and reads its answer, classifying it.
func (d *driver) send(conn net.Conn, br *bufio.Reader, bw *bufio.Writer, caller int, cl call, body []byte) ([]byte, error) {
	reqBody := d.bodyOf(cl, caller)
	t0 := time.Now()
	conn.SetDeadline(t0.Add(30 * time.Second))
	fmt.Fprintf(bw, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: signpost-soak\r\nX-Session-Id: agent-%d\r\n", cl.method, cl.path, d.host, caller)
	if reqBody != "" {
		fmt.Fprintf(bw, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(reqBody))
	}
	bw.WriteString("\r\n")
	bw.WriteString(reqBody)
	d.c.sent.Add(1)
	if err := bw.Flush(); err != nil {
		return body, err
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return body, err
	}
	buf := bytes.NewBuffer(body)
	_, err = io.Copy(buf, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	body = buf.Bytes()
	if err != nil {
		return body, err
	}
	lat := int64(time.Since(t0))
	for {
		m := d.c.maxLatency.Load()
		if lat <= m || d.c.maxLatency.CompareAndSwap(m, lat) {
			break
		}
	}
	got := classify(res.StatusCode, body)
	switch {
	case res.StatusCode >= 500:
		d.c.status5xx.Add(1)
	case got != cl.want:
		d.c.unexpected.Add(1)
	case got == wantOK:
		d.c.ok.Add(1)
	case got == wantRewritten:
		d.c.rewritten.Add(1)
	default:
		d.c.wrapped.Add(1)
	}
	if res.Close {
		return body, errors.New("connection closed by signpost")
	}
	return body, nil
}

// classify says what an answer is: a success, a body of signpost's own
// (which always says whether a retry helps): a rule's, or an unmatched
// error wrapped; or anything else, the upstream's passed through.
func classify(status int, body []byte) string {
	switch {
	case status < 400:
		return wantOK
	case bytes.HasPrefix(body, []byte(`{"error":"upstream_`)) && bytes.Contains(body, []byte(`"retryable":`)):
		return wantWrapped
	case bytes.HasPrefix(body, []byte(`{"error":"`)) && bytes.Contains(body, []byte(`"retryable":`)):
		return wantRewritten
	}
	return "passthrough"
}

// --- reloads ----------------------------------------------------------------

func reloader(ctx context.Context, mode, admin string, pid int, every time.Duration, c *counters) {
	if every <= 0 {
		return
	}
	client := &http.Client{Timeout: 10 * time.Second}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var err error
		switch mode {
		case "hup":
			err = syscall.Kill(pid, syscall.SIGHUP)
		default:
			var res *http.Response
			res, err = client.Post(admin+"/-/reload", "", nil)
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					err = fmt.Errorf("POST /-/reload: %s", res.Status)
				}
			}
		}
		c.reloads.Add(1)
		if err != nil {
			c.reloadFailures.Add(1)
			fmt.Fprintln(os.Stderr, "soak: reload:", err)
		}
	}
}

// --- sampling ---------------------------------------------------------------

// metricNames are read from /metrics: the Go runtime's memory, the
// process's, and signpost's gauges of buffers. Each is a column.
var metricNames = []string{
	"process_resident_memory_bytes",
	"go_memstats_heap_inuse_bytes",
	"go_memstats_heap_alloc_bytes",
	"go_memstats_heap_idle_bytes",
	"go_memstats_heap_released_bytes",
	"go_memstats_heap_sys_bytes",
	"go_memstats_heap_objects",
	"go_memstats_next_gc_bytes",
	"go_memstats_stack_inuse_bytes",
	"go_memstats_mspan_inuse_bytes",
	"go_memstats_mcache_inuse_bytes",
	"go_memstats_buck_hash_sys_bytes",
	"go_memstats_gc_sys_bytes",
	"go_memstats_other_sys_bytes",
	"go_memstats_sys_bytes",
	"go_gc_duration_seconds_count",
	"go_goroutines",
	"go_threads",
	"process_open_fds",
	"signpost_buffer_budget_in_use_bytes",
	"signpost_buffer_budget_exhausted_total",
	"signpost_log_lines_dropped_total",
	"signpost_error_body_tokens_uncounted_total",
	"signpost_rules_reloads_total",
	"signpost_unrecovered_total",
	"signpost_recovery_attempts_count",
	"signpost_rejections_total",
}

// procFields are read from /proc/PID/status, in KiB.
var procFields = []string{"VmRSS", "RssAnon", "RssFile", "VmHWM", "VmData", "Threads"}

func procStatus(pid int) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseFloat(f[0], 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// scrape reads /metrics and sums each wanted metric over its label sets
// (counters and histogram counts by route, code, ... into one figure).
func scrape(client *http.Client, admin string) (map[string]float64, error) {
	res, err := client.Get(admin + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", res.Status)
	}
	want := map[string]bool{}
	for _, n := range metricNames {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		labels := ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			// A label value may hold a space: the value is after the '}'.
			j := strings.LastIndexByte(line, '}')
			name, labels, rest = line[:i], line[i:j+1], strings.TrimSpace(line[j+1:])
		}
		if !want[name] {
			continue
		}
		if name == "signpost_rules_reloads_total" && !strings.Contains(labels, `result="success"`) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out, sc.Err()
}

func sampler(ctx context.Context, admin string, pid int, every time.Duration, w *csv.Writer, f *os.File, c *counters, start time.Time, log io.Writer) {
	client := &http.Client{Timeout: 10 * time.Second}
	header := []string{"elapsed_s", "time"}
	header = append(header, procFields...)
	header = append(header, metricNames...)
	header = append(header, "req_sent", "req_rate", "ok", "rewritten", "wrapped", "unexpected", "status_5xx", "failed", "reconnects", "late", "max_latency_ms", "reloads", "reload_failures")
	w.Write(header)
	w.Flush()
	var lastSent int64
	lastAt := start
	t := time.NewTicker(every)
	defer t.Stop()
	take := func(now time.Time) {
		row := []string{strconv.FormatFloat(now.Sub(start).Seconds(), 'f', 1, 64), now.UTC().Format(time.RFC3339)}
		ps, err := procStatus(pid)
		if err != nil {
			fmt.Fprintln(log, "soak: /proc:", err)
		}
		for _, p := range procFields {
			row = append(row, strconv.FormatFloat(ps[p], 'f', -1, 64))
		}
		ms, err := scrape(client, admin)
		if err != nil {
			fmt.Fprintln(log, "soak: /metrics:", err)
		}
		for _, n := range metricNames {
			v, ok := ms[n]
			if !ok {
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatFloat(v, 'f', -1, 64))
		}
		sent := c.sent.Load()
		rate := 0.0
		if dt := now.Sub(lastAt).Seconds(); dt >= 1 {
			rate = float64(sent-lastSent) / dt
		}
		lastSent, lastAt = sent, now
		for _, v := range []int64{sent} {
			row = append(row, strconv.FormatInt(v, 10))
		}
		row = append(row, strconv.FormatFloat(rate, 'f', 0, 64))
		for _, v := range []int64{c.ok.Load(), c.rewritten.Load(), c.wrapped.Load(), c.unexpected.Load(), c.status5xx.Load(),
			c.failed.Load(), c.reconnects.Load(), c.late.Load()} {
			row = append(row, strconv.FormatInt(v, 10))
		}
		row = append(row, strconv.FormatFloat(float64(c.maxLatency.Swap(0))/1e6, 'f', 1, 64))
		row = append(row, strconv.FormatInt(c.reloads.Load(), 10), strconv.FormatInt(c.reloadFailures.Load(), 10))
		w.Write(row)
		w.Flush()
		f.Sync()
		fmt.Fprintf(log, "soak: %6.0fs rss %6.1f MiB  heap_inuse %5.1f MB  heap_alloc %5.1f MB  goroutines %4.0f  %5.0f req/s  unexpected %d  5xx %d  failed %d\n",
			now.Sub(start).Seconds(), ps["VmRSS"]/1024, ms["go_memstats_heap_inuse_bytes"]/1e6, ms["go_memstats_heap_alloc_bytes"]/1e6,
			ms["go_goroutines"], rate, c.unexpected.Load(), c.status5xx.Load(), c.failed.Load())
	}
	take(time.Now()) // before the load: signpost idle
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			take(now)
		}
	}
}

func run(args []string) int {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	target := fs.String("target", "", "signpost's agents' listener, e.g. http://127.0.0.1:8080")
	admin := fs.String("admin", "", "signpost's admin listener, e.g. http://127.0.0.1:9090")
	pid := fs.Int("pid", 0, "signpost's process id, for /proc/PID/status and SIGHUP")
	duration := fs.Duration("duration", 10*time.Minute, "how long to drive and sample")
	conns := fs.Int("conns", 64, "keep-alive connections")
	rate := fs.Float64("rate", 2000, "requests a second, over all connections")
	callers := fs.Int("callers", 70000, "distinct callers (X-Session-Id values)")
	values := fs.Int("values", 1, "kinds of wrong enum values the callers send (caller number modulo this); 1: all send the same")
	pad := fs.Int("pad", 0, "bytes of a description member added to each JSON request body")
	reload := fs.Duration("reload", 10*time.Second, "reload the rules this often; 0 never")
	reloadMode := fs.String("reload-mode", "post", "post (POST /-/reload on --admin) or hup (SIGHUP to --pid)")
	sample := fs.Duration("sample", 10*time.Second, "sample memory this often")
	out := fs.String("csv", "soak.csv", "the samples' CSV file")
	fs.Parse(args)
	if *target == "" || *admin == "" || *pid <= 0 || *conns < 1 || *rate <= 0 || *callers < 1 || *values < 1 || *pad < 0 {
		fmt.Fprintln(os.Stderr, "soak run: --target, --admin and --pid are required; --conns, --rate, --callers and --values must be positive, --pad 0 or more")
		return 2
	}
	if *reloadMode != "post" && *reloadMode != "hup" {
		fmt.Fprintln(os.Stderr, "soak run: --reload-mode must be post or hup")
		return 2
	}
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "soak run: --target must be a URL such as http://127.0.0.1:8080")
		return 2
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak run:", err)
		return 1
	}
	defer f.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()

	c := &counters{}
	d := &driver{host: u.Host, callers: *callers, values: *values, steps: make([]atomic.Uint32, *callers), c: c}
	if *pad > 0 {
		d.pad = `"description":"` + strings.Repeat("x", *pad) + `",`
	}
	// Each caller starts at a step of its own, so that the wrong calls
	// are spread over callers from the first minute.
	seed := rand.New(rand.NewPCG(7, 7))
	for i := range d.steps {
		d.steps[i].Store(uint32(seed.IntN(len(script))))
	}
	interval := time.Duration(float64(*conns) / *rate * float64(time.Second))
	fmt.Fprintf(os.Stderr, "soak: %d connections, %.0f req/s (one every %v per connection), %d callers, %d kinds of wrong value, bodies padded by %d B, reload every %v by %s, sample every %v, for %v\n",
		*conns, *rate, interval, *callers, *values, *pad, *reload, *reloadMode, *sample, *duration)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range *conns {
		wg.Go(func() { d.worker(ctx, i, interval, start) })
	}
	wg.Go(func() { reloader(ctx, *reloadMode, *admin, *pid, *reload, c) })
	w := csv.NewWriter(f)
	sampler(ctx, *admin, *pid, *sample, w, f, c, start, os.Stderr)
	wg.Wait()
	fmt.Fprintf(os.Stderr, "soak: sent %d in %v: ok %d, rewritten %d, wrapped %d, unexpected %d, 5xx %d, failed %d, reconnects %d, late %d, reloads %d (%d failed)\n",
		c.sent.Load(), time.Since(start).Round(time.Second), c.ok.Load(), c.rewritten.Load(), c.wrapped.Load(), c.unexpected.Load(),
		c.status5xx.Load(), c.failed.Load(), c.reconnects.Load(), c.late.Load(), c.reloads.Load(), c.reloadFailures.Load())
	if c.unexpected.Load()+c.status5xx.Load() > 0 {
		return 1
	}
	return 0
}

// --- summary ----------------------------------------------------------------

type sample struct {
	t                 float64 // seconds
	rss, anon, file   float64 // MiB: VmRSS, and its anonymous and file-backed parts
	heap, alloc       float64 // MiB
	released, idle    float64 // MiB
	goroutines, stack float64
	sent, late        float64 // requests sent, and dropped from the schedule, so far
}

func readSamples(path string) ([]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, errors.New(path + ": no samples")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(r []string, name string) float64 {
		i, ok := col[name]
		if !ok || i >= len(r) {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(r[i], 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	var out []sample
	for _, r := range rows[1:] {
		out = append(out, sample{
			t:          num(r, "elapsed_s"),
			rss:        num(r, "VmRSS") / 1024,
			anon:       num(r, "RssAnon") / 1024,
			file:       num(r, "RssFile") / 1024,
			heap:       num(r, "go_memstats_heap_inuse_bytes") / (1 << 20),
			alloc:      num(r, "go_memstats_heap_alloc_bytes") / (1 << 20),
			released:   num(r, "go_memstats_heap_released_bytes") / (1 << 20),
			idle:       num(r, "go_memstats_heap_idle_bytes") / (1 << 20),
			goroutines: num(r, "go_goroutines"),
			stack:      num(r, "go_memstats_stack_inuse_bytes") / (1 << 20),
			sent:       num(r, "req_sent"),
			late:       num(r, "late"),
		})
	}
	return out, nil
}

// slope is the least-squares slope of y over t, per 600 seconds.
func slope(ss []sample, y func(sample) float64) float64 {
	var n, st, sy, stt, sty float64
	for _, s := range ss {
		v := y(s)
		if math.IsNaN(v) {
			continue
		}
		n++
		st += s.t
		sy += v
		stt += s.t * s.t
		sty += s.t * v
	}
	if n < 2 {
		return math.NaN()
	}
	return (n*sty - st*sy) / (n*stt - st*st) * 600
}

func summary(args []string) int {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	path := fs.String("csv", "soak.csv", "the samples' CSV file")
	warmup := fs.Duration("warmup", 15*time.Minute, "the warm-up left out of the slope")
	fs.Parse(args)
	ss, err := readSamples(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak summary:", err)
		return 1
	}
	end := ss[len(ss)-1].t
	// Each figure is the mean of the samples within 30 s of its time, to
	// smooth a collection's sawtooth.
	near := func(at float64) (sample, bool) {
		var m sample
		n := 0.0
		for _, s := range ss {
			if math.Abs(s.t-at) <= 30 {
				m.rss += s.rss
				m.anon += s.anon
				m.file += s.file
				m.heap += s.heap
				m.alloc += s.alloc
				m.released += s.released
				m.goroutines += s.goroutines
				n++
			}
		}
		if n == 0 {
			return m, false
		}
		m.rss, m.anon, m.file = m.rss/n, m.anon/n, m.file/n
		m.heap, m.alloc, m.released, m.goroutines = m.heap/n, m.alloc/n, m.released/n, m.goroutines/n
		return m, true
	}
	fmt.Printf("samples: %d over %.1f min (%s)\n", len(ss), end/60, *path)
	if fin := ss[len(ss)-1]; end > 0 {
		fmt.Printf("requests: %.0f, %.0f a second on average; %.0f dropped from the schedule while the driver was behind it\n", fin.sent, fin.sent/end, fin.late)
	}
	fmt.Println()
	fmt.Println("each figure the mean of the samples within 30 s of its time; at 0, the idle process before the load")
	fmt.Println()
	fmt.Println("| at | RSS MiB | anonymous | file-backed | heap in use MiB | heap alloc MiB | heap released MiB | goroutines |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	marks := []float64{0, 1, 5, 10, 13, 15, 20, 30, 45, 60, 75, 90, 120}
	for _, m := range marks {
		if m*60 > end+30 {
			continue
		}
		s, ok := near(m * 60)
		if m == 0 {
			s, ok = ss[0], true // the first sample alone: signpost idle, before the load
		}
		if !ok {
			continue
		}
		fmt.Printf("| %g min | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f |\n", m, s.rss, s.anon, s.file, s.heap, s.alloc, s.released, s.goroutines)
	}
	last, _ := near(end)
	fmt.Printf("| end (%.1f min) | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f |\n", end/60, last.rss, last.anon, last.file, last.heap, last.alloc, last.released, last.goroutines)
	var after []sample
	for _, s := range ss {
		if s.t >= warmup.Seconds() {
			after = append(after, s)
		}
	}
	fmt.Println()
	if len(after) < 3 {
		fmt.Printf("too few samples after the warm-up of %v for a slope\n", *warmup)
		return 0
	}
	rss := make([]float64, len(after))
	for i, s := range after {
		rss[i] = s.rss
	}
	sort.Float64s(rss)
	fmt.Printf("after the warm-up (%v to %.1f min, %d samples):\n", *warmup, end/60, len(after))
	fmt.Printf("  RSS: min %.1f, median %.1f, max %.1f MiB; slope %+.2f MiB per 10 min\n", rss[0], rss[len(rss)/2], rss[len(rss)-1], slope(after, func(s sample) float64 { return s.rss }))
	fmt.Printf("  RSS anonymous: slope %+.2f MiB per 10 min; file-backed: slope %+.2f MiB per 10 min\n",
		slope(after, func(s sample) float64 { return s.anon }), slope(after, func(s sample) float64 { return s.file }))
	fmt.Printf("  heap in use: slope %+.2f MiB per 10 min; heap alloc: slope %+.2f MiB per 10 min\n",
		slope(after, func(s sample) float64 { return s.heap }), slope(after, func(s sample) float64 { return s.alloc }))
	fmt.Printf("  goroutines: slope %+.2f per 10 min\n", slope(after, func(s sample) float64 { return s.goroutines }))
	return 0
}
