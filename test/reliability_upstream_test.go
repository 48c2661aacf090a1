package test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Rule files of the upstream-side reliability cases.
const (
	hostileConfig  = "testdata/reliability_upstream_hostile.yaml"
	overloadConfig = "testdata/reliability_upstream_overload.yaml"
)

// hostileBody is one kind of hostile upstream answer, served at
// /hostile/{name} with status.
type hostileBody struct {
	name   string
	status int
	// serve writes the answer; raw answers hijack the connection.
	serve func(w http.ResponseWriter, r *http.Request)
	// bomb marks an answer that inflates past the buffering bound.
	bomb bool
}

// hostileBodies are the answers of TestReliabilityHostileBodies: sizes,
// framing, encodings and contents an upstream should never send.
func hostileBodies() []hostileBody {
	deepArray := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	deepObject := strings.Repeat(`{"error":`, 20_000) + `"Invalid status"` + strings.Repeat("}", 20_000)
	zeros := gzipBytes(bytes.Repeat([]byte{'0'}, 60<<20)) // 60 MiB in about 60 KiB
	fixed := func(status int, ctype, encoding string, body []byte) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			if encoding != "" {
				w.Header().Set("Content-Encoding", encoding)
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
			_, _ = w.Write(body)
		}
	}
	return []hostileBody{
		{name: "huge", status: 500, serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(100<<20))
			w.WriteHeader(500)
			writeUntilGone(w, r, 100<<20)
		}},
		{name: "huge-chunked", status: 400, serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(400)
			writeUntilGone(w, r, 100<<20)
		}},
		// Content-Length says less than the body: the rest is garbage on
		// the connection.
		{name: "length-under", status: 400, serve: rawAnswer("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n"+
			`{"error":"Invalid status","padding":"`+strings.Repeat("x", 4096)+`"}`, false)},
		// Content-Length says more than the body, and the upstream closes.
		{name: "length-over-closed", status: 404, serve: rawAnswer("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"+
			`{"error":"No such ticket"}`, false)},
		// Content-Length says more than the body, and the upstream keeps
		// the connection open.
		{name: "length-over-held", status: 422, serve: rawAnswer("HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"+
			`{"error":"Invalid status"}`, true)},
		{name: "chunked-endless", status: 503, serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			rc := http.NewResponseController(w)
			_, _ = io.WriteString(w, `{"error":"busy","log":[`)
			for i := 0; ; i++ {
				if _, err := fmt.Fprintf(w, `"line %d",`, i); err != nil || rc.Flush() != nil {
					return
				}
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				if i > 1000 {
					return
				}
			}
		}},
		{name: "gzip-bomb", status: 400, bomb: true, serve: fixed(400, "application/json", "gzip", zeros)},
		{name: "gzip-corrupt", status: 400, serve: fixed(400, "application/json", "gzip", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xffnot deflate at all"))},
		{name: "gzip-not-gzip", status: 400, serve: fixed(400, "application/json", "gzip", []byte(`{"error":"Invalid status"}`))},
		{name: "brotli-claimed", status: 409, serve: fixed(409, "application/json", "br", []byte(`{"error":"Invalid status"}`))},
		{name: "gzip-unannounced", status: 400, serve: fixed(400, "application/json", "", gzipBytes([]byte(`{"error":"Invalid status"}`)))},
		{name: "html", status: 502, serve: fixed(502, "text/html", "", []byte("<html><body><h1>502</h1><pre>Error: Database failed\n  at db.go:12 (10.0.3.7)</pre><script>alert(1)</script></body></html>"))},
		{name: "xml", status: 400, serve: fixed(400, "application/xml", "", []byte(`<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x "xx">]><error code="E1">&x;Invalid status</error>`))},
		{name: "empty", status: 404, serve: fixed(404, "application/json", "", nil)},
		{name: "invalid-utf8", status: 400, serve: fixed(400, "text/plain", "", []byte("Invalid \xff\xfe status \xc3\x28 \xed\xa0\x80"))},
		{name: "invalid-utf8-json", status: 500, serve: fixed(500, "application/json", "", []byte("{\"detail\":{\"reason\":\"bad \xff\xfe\"},\"error\":\"\xc3\x28\"}"))},
		{name: "deep-array", status: 400, serve: fixed(400, "application/json", "", []byte(deepArray))},
		{name: "deep-object", status: 500, serve: fixed(500, "application/json", "", []byte(deepObject))},
		{name: "duplicate-keys", status: 400, serve: fixed(400, "application/json", "", []byte(`{"error":"Invalid status","error":"Other","detail":{"reason":"bad one"},"detail":{"reason":"bad two"}}`))},
	}
}

// writeUntilGone writes n bytes of JSON-ish text to w, stopping when the
// caller goes away.
func writeUntilGone(w http.ResponseWriter, r *http.Request, n int) {
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for n > 0 && r.Context().Err() == nil {
		c := chunk[:min(n, len(chunk))]
		if _, err := w.Write(c); err != nil {
			return
		}
		n -= len(c)
	}
}

// rawAnswer answers with exactly the bytes of resp on the hijacked connection,
// then closes it, or, with hold, keeps it open until signpost closes it.
func rawAnswer(resp string, hold bool) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString(resp)
		_ = brw.Flush()
		if hold {
			_ = conn.SetReadDeadline(time.Now().Add(2 * stopTimeout))
			_, _ = io.Copy(io.Discard, conn)
		}
	}
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

// hostileUpstream serves the hostile bodies by name.
func hostileUpstream(t *testing.T, kinds []hostileBody) string {
	t.Helper()
	byName := map[string]hostileBody{}
	for _, k := range kinds {
		byName[k.name] = k
	}
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, ok := byName[strings.TrimPrefix(r.URL.Path, "/hostile/")]
		if !ok {
			http.Error(w, "no such kind", http.StatusTeapot)
			return
		}
		k.serve(w, r)
	}))
	return up.URL
}

// procMemory reads a process's resident set and its peak, in bytes, from
// /proc.
func procMemory(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the resident set of signpost: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kib << 10
		case "VmHWM":
			peak = kib << 10
		}
	}
	return rss, peak
}

// peakMeter measures a process's peak resident set from now on: the
// kernel's high-water mark, reset where the kernel allows it, else
// sampled every 5 ms.
type peakMeter struct {
	t     *testing.T
	pid   int
	reset bool
	max   atomic.Int64
	stop  chan struct{}
	done  chan struct{}
}

func meterPeak(t *testing.T, pid int) *peakMeter {
	m := &peakMeter{t: t, pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	m.reset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	go func() {
		defer close(m.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
			if err == nil {
				var size, res int64
				if _, err := fmt.Sscan(string(b), &size, &res); err == nil {
					if v := res * int64(os.Getpagesize()); v > m.max.Load() {
						m.max.Store(v)
					}
				}
			}
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// peak stops the meter and returns the highest resident set it saw.
func (m *peakMeter) peak() int64 {
	close(m.stop)
	<-m.done
	sampled := m.max.Load()
	if m.reset {
		if _, hwm := procMemory(m.t, m.pid); hwm > sampled {
			return hwm
		}
	}
	return sampled
}

// timedAnswer is one response as the reliability cases judge it.
type timedAnswer struct {
	kind    string
	status  int
	ctype   string
	body    []byte
	elapsed time.Duration
	err     error
}

// timedCall sends method url with c, and reads
// the answer to its end.
func timedCall(ctx context.Context, c *http.Client, method, url string, body []byte) timedAnswer {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return timedAnswer{err: err}
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	res, err := c.Do(req)
	if err != nil {
		return timedAnswer{err: err, elapsed: time.Since(start)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return timedAnswer{status: res.StatusCode, ctype: res.Header.Get("Content-Type"), body: b, elapsed: time.Since(start), err: err}
}

// wellFormedError says what is wrong with an answer signpost wrote itself, or
// "" when it is one JSON object whose error code is a string.
func wellFormedError(a timedAnswer) string {
	if a.err != nil {
		return a.err.Error()
	}
	if a.ctype != jsonType {
		return fmt.Sprintf("Content-Type %q", a.ctype)
	}
	var v struct {
		Error     *string `json:"error"`
		Retryable *bool   `json:"retryable"`
	}
	if !json.Valid(a.body) || json.Unmarshal(a.body, &v) != nil || v.Error == nil || v.Retryable == nil {
		return fmt.Sprintf("body %q is not an error object", clip(a.body))
	}
	return ""
}

// TestReliabilityHostileBodies sends 32 requests at once, round after
// round, to routes whose upstream answers with hostile error bodies: 100
// MiB, lying lengths, endless chunks, a gzip bomb, corrupt and mislabelled
// encodings, HTML, XML, nothing, invalid UTF-8, JSON nested 100,000 deep,
// duplicate keys. Bars: every answer is a well-formed JSON error in the
// upstream's status class, none later than the upstream timeout + 100 ms
// (plus how late a control signpost is at the same time: see lateControl),
// the resident set grows less than 64 MiB over idle, and every bomb stops
// inflating at the buffering bound.
func TestReliabilityHostileBodies(t *testing.T) {
	t.Parallel()
	const (
		name        = "2 hostile bodies"
		concurrency = 32
		timeout     = time.Second
		slack       = 100 * time.Millisecond
	)
	rounds := sized(2, 20)
	kinds := hostileBodies()
	sp := startSignpost(t, hostileConfig, hostileUpstream(t, kinds), "--upstream-timeout", timeout.String())
	pid := sp.cmd.Process.Pid
	lateness := lateControl(t, timeout)

	// Idle: started, one request served, collected.
	if got := send(t, "GET", sp.URL+"/hostile/empty", nil); got.status != 404 {
		t.Fatalf("warm-up: %d %s", got.status, got.body)
	}
	time.Sleep(200 * time.Millisecond)
	idle, _ := procMemory(t, pid)
	meter := meterPeak(t, pid)

	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: concurrency}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	jobs := make(chan hostileBody)
	answers := make(chan timedAnswer, concurrency)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for k := range jobs {
				a := timedCall(context.Background(), c, "GET", sp.URL+"/hostile/"+k.name, nil)
				a.kind = k.name
				answers <- a
			}
		})
	}
	total := rounds * ((concurrency + len(kinds) - 1) / len(kinds)) * len(kinds)
	ctrl, stop := make(chan time.Duration, 1), make(chan struct{})
	go func() { ctrl <- lateness(stop) }()
	go func() {
		for i := range total {
			jobs <- kinds[i%len(kinds)]
		}
		close(jobs)
	}()
	statusOf := map[string]int{}
	bombs := 0
	for _, k := range kinds {
		statusOf[k.name] = k.status
	}
	var (
		bad, wrongClass, late int
		slowest               time.Duration
	)
	var all []timedAnswer
	for range total {
		a := <-answers
		all = append(all, a)
		if a.kind == "gzip-bomb" {
			bombs++
		}
		if why := wellFormedError(a); why != "" {
			bad++
			t.Errorf("%s: %d %s", a.kind, a.status, why)
		}
		if a.status/100 != statusOf[a.kind]/100 {
			wrongClass++
			t.Errorf("%s: status %d, the upstream answered %d", a.kind, a.status, statusOf[a.kind])
		}
		slowest = max(slowest, a.elapsed)
	}
	wg.Wait()
	close(stop)
	controlLate := <-ctrl
	for _, a := range all {
		if a.elapsed > timeout+slack+controlLate {
			late++
			t.Errorf("%s: answered after %v; the control was %v late", a.kind, a.elapsed, controlLate)
		}
	}
	peak := meter.peak()

	figure(t, name, "requests (32 at once)", total, fmt.Sprintf("%d kinds, each at least twice", len(kinds)), total >= 2*len(kinds))
	figure(t, name, "answers not well-formed JSON", bad, "0", bad == 0)
	figure(t, name, "answers outside the upstream's status class", wrongClass, "0", wrongClass == 0)
	figure(t, name, "slowest answer", slowest.Round(time.Millisecond),
		fmt.Sprintf("≤ %v (upstream timeout + 100 ms) + the control's lateness (%v)", timeout+slack, controlLate.Round(time.Millisecond)), late == 0)
	grew := peak - idle
	figure(t, name, "peak RSS above idle", mibText(grew), "< 64 MiB", grew < 64<<20)

	// Every bomb stopped inflating at the bound: each was counted as
	// oversized once decoded, never rewritten from what it inflated to.
	// The log writes its lines in batches: the last ones may be a flush
	// away, so they are counted until all are there, bounded.
	stopped := 0
	for deadline := time.Now().Add(5 * time.Second); ; {
		stopped = strings.Count(sp.stdout.String(), `"oversized once decoded, wrapped as upstream_rejected"`)
		if stopped >= bombs || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	figure(t, name, "gzip bombs stopped at the 256 KiB bound", fmt.Sprintf("%d of %d", stopped, bombs), "all", stopped == bombs && bombs > 0)
}

// mibText formats a byte count in MiB with one decimal.
func mibText(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestReliabilityOverload has 256 requests at once get 900 KiB error
// bodies, which the route reads whole (limits.error_body is 1 MiB), so
// that together they would need 3.5 times the 64 MiB buffer budget. Bars:
// the resident set stays under the budget + 32 MiB (judged without the
// race detector, whose own memory grows with every goroutine); every
// answer is the rewritten error, the generic wrapped one, or a 503 with
// retry advice; at the peak the gauge shows the budget in use and never
// more, the counter says it was hit, and all of it is given back.
func TestReliabilityOverload(t *testing.T) {
	t.Parallel()
	const (
		name        = "8 overload"
		concurrency = 256
		bodySize    = 900 << 10
		budget      = 64 << 20
	)
	rounds := sized(1, 10)
	body := []byte(`{"error":"Invalid status","detail":"` + strings.Repeat("x", bodySize-40) + `"}`)
	// The upstream sends each body but its last byte, then waits for the
	// round to be released, so that every body is being read at once.
	var (
		sent    atomic.Int64
		release = make(chan struct{})
		mu      sync.Mutex
	)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		ch := release
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(body[:len(body)-1])
		_ = http.NewResponseController(w).Flush()
		sent.Add(1)
		select {
		case <-ch:
		case <-time.After(2 * waitTimeout):
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(body[len(body)-1:])
	}))
	sp := startSignpost(t, overloadConfig, up.URL, "--buffer-budget", "64MiB")
	pid := sp.cmd.Process.Pid
	meter := meterPeak(t, pid)

	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: concurrency}, Timeout: 20 * time.Second}
	defer c.CloseIdleConnections()
	var (
		rewritten, generic, refused, bad atomic.Int64
		peakInUse                        float64
	)
	for range rounds {
		sent.Store(0)
		var wg sync.WaitGroup
		for range concurrency {
			wg.Go(func() {
				a := timedCall(context.Background(), c, "PATCH", sp.URL+"/tickets/T-8841", []byte(`{"status":"OPEN"}`))
				var v struct {
					Error string `json:"error"`
				}
				switch {
				case wellFormedError(a) != "" || json.Unmarshal(a.body, &v) != nil:
					bad.Add(1)
					t.Errorf("%d %s", a.status, wellFormedError(a))
				case a.status == http.StatusBadRequest && v.Error == "invalid_status":
					rewritten.Add(1)
				case a.status == http.StatusBadRequest && v.Error == "upstream_rejected":
					generic.Add(1)
				case a.status == http.StatusServiceUnavailable && v.Error == "overloaded":
					refused.Add(1)
				default:
					bad.Add(1)
					t.Errorf("unexpected answer %d %s", a.status, clip(a.body))
				}
			})
		}
		// Every body but its last byte is on its way: the requests with
		// budget hold their buffers, the others have been answered.
		for deadline := time.Now().Add(2 * waitTimeout); sent.Load() < concurrency && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		peakInUse = max(peakInUse, sp.counter(t, "signpost_buffer_budget_in_use_bytes"))
		mu.Lock()
		close(release)
		release = make(chan struct{})
		mu.Unlock()
		wg.Wait()
	}
	peak := meter.peak()
	total := rounds * concurrency

	figure(t, name, "requests (256 at once, 900 KiB error bodies)", total, "256 per round", total%concurrency == 0)
	figure(t, name, "answers rewritten / generic / 503", fmt.Sprintf("%d / %d / %d", rewritten.Load(), generic.Load(), refused.Load()),
		"all well-formed", bad.Load() == 0)
	if raceEnabled {
		t.Logf("%s: peak RSS %s, not judged under the race detector", name, mibText(peak))
	} else {
		figure(t, name, "peak RSS", mibText(peak), "< "+mibText(budget+32<<20)+" (budget + 32 MiB)", peak < budget+32<<20)
	}
	figure(t, name, "buffer budget in use at the peak", mibText(int64(peakInUse)), "≤ the 64 MiB budget, and near it",
		peakInUse <= budget && peakInUse > budget-2<<20)
	size := sp.counter(t, "signpost_buffer_budget_bytes")
	figure(t, name, "signpost_buffer_budget_bytes", mibText(int64(size)), "= --buffer-budget 64MiB", size == budget)
	exhausted := sp.counter(t, "signpost_buffer_budget_exhausted_total")
	figure(t, name, "signpost_buffer_budget_exhausted_total", exhausted, "> 0: the budget was hit, and said so", exhausted > 0)
	inUse := sp.counter(t, "signpost_buffer_budget_in_use_bytes")
	figure(t, name, "signpost_buffer_budget_in_use_bytes after", inUse, "0: every byte given back", inUse == 0)
}

// upstreamFault is one fault toxiproxy puts between signpost and a
// healthy upstream, and what signpost must answer while it lasts.
type upstreamFault struct {
	name  string
	path  string // what the calls ask for
	toxic string // toxiproxy's JSON for the toxic; "" stops the proxy
	// want judges one answer: "" when it is the one the fault calls for.
	want func(r *vegeta.Result) string
}

// structured returns a judge of answers that must be signpost's own
// retryable error with status and code.
func structured(status int, code string) func(r *vegeta.Result) string {
	return func(r *vegeta.Result) string {
		var v struct {
			Error     string `json:"error"`
			Retryable bool   `json:"retryable"`
		}
		if int(r.Code) != status || json.Unmarshal(r.Body, &v) != nil || v.Error != code || !v.Retryable {
			return fmt.Sprintf("%d %q (%s), want %d %s, retryable", r.Code, clip(r.Body), r.Error, status, code)
		}
		return ""
	}
}

// Sizes of the bodies the faults cut mid-way, and where they cut them.
const (
	faultBodySize   = 128 << 10
	faultErrorSize  = 24 << 10
	faultCutSuccess = 32 << 10
	faultCutError   = 8 << 10
)

// upstreamFaults are the faults of TestReliabilityUpstreamFaults.
func upstreamFaults() []upstreamFault {
	timedOut := structured(504, "upstream_timeout")
	return []upstreamFault{
		{"5 s latency", "/ok", `{"type":"latency","attributes":{"latency":5000}}`, timedOut},
		{"hang", "/ok", `{"type":"timeout","attributes":{"timeout":0}}`, timedOut},
		{"reset peer", "/ok", `{"type":"reset_peer","attributes":{"timeout":0}}`, structured(502, "upstream_unavailable")},
		{"cut in the headers", "/ok", `{"type":"limit_data","attributes":{"bytes":12}}`, structured(502, "upstream_unavailable")},
		// An error body cut mid-way is read by signpost: the caller gets a
		// whole answer, the upstream's status kept (or the 504, should the
		// headers themselves come later than the timeout).
		{"error body cut mid-way", "/error", fmt.Sprintf(`{"type":"limit_data","attributes":{"bytes":%d}}`, faultCutError), func(r *vegeta.Result) string {
			if timedOut(r) == "" {
				return ""
			}
			a := timedAnswer{status: int(r.Code), ctype: r.Headers.Get("Content-Type"), body: r.Body}
			if r.Code != 400 || !bytes.Contains(r.Body, []byte(`"upstream_rejected"`)) {
				return fmt.Sprintf("%d %q (%s), want the wrapped 400", r.Code, clip(r.Body), r.Error)
			}
			return wellFormedError(a)
		}},
		// A success streams: once its headers are sent, a cut can only be
		// passed on as a cut, never as a complete answer.
		{"success body cut mid-way", "/big", fmt.Sprintf(`{"type":"limit_data","attributes":{"bytes":%d}}`, faultCutSuccess), func(r *vegeta.Result) string {
			if r.Error == "" && len(r.Body) == faultBodySize {
				return fmt.Sprintf("%d with the whole %d bytes, though the upstream's body was cut", r.Code, len(r.Body))
			}
			return ""
		}},
		// An upstream that dies closes its connections without answering;
		// slowly, here.
		{"slow close", "/crash", `{"type":"slow_close","attributes":{"delay":5000}}`, timedOut},
		{"upstream down", "/ok", "", structured(502, "upstream_unavailable")},
	}
}

// TestReliabilityUpstreamFaults puts toxiproxy, in process, between
// signpost and a healthy upstream, and sends 100 requests a second with
// vegeta through each fault in turn: 5 s of latency, a hang, a reset, a
// response cut in its headers, an error body and a success body cut
// mid-way, a slow close, the upstream down. Bars: every answer is the one
// the fault calls for (the structured, retryable 502 or 504; the wrapped
// error for a cut error body; a visible cut for a cut success) within the
// upstream timeout + 100 ms, plus however late a control signpost is at
// the same time (see lateControl); calls succeed again within 1 s of the
// fault's removal; and signpost ends with no more goroutines than it
// started with. It runs alone, not in parallel, since it times answers.
func TestReliabilityUpstreamFaults(t *testing.T) {
	const (
		name  = "7 upstream faults"
		slack = 100 * time.Millisecond
	)
	timeout := sized(500*time.Millisecond, 2*time.Second)
	attack := sized(400*time.Millisecond, 10*time.Second)
	big := bytes.Repeat([]byte("y"), faultBodySize)
	errBody := []byte(`{"error":"Invalid status","detail":"` + strings.Repeat("z", faultErrorSize) + `"}`)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/ok":
			_, _ = io.WriteString(w, `{"id":"T-8841","status":"open"}`)
		case "/big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = w.Write(big)
		case "/error":
			w.Header().Set("Content-Length", strconv.Itoa(len(errBody)))
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(errBody)
		case "/crash":
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}
	}))

	// toxiproxy as a library, listening on loopback in front of the
	// upstream; its own logs are discarded.
	tox := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	px := toxiproxy.NewProxy(tox, "upstream", "127.0.0.1:0", strings.TrimPrefix(up.URL, "http://"))
	if err := px.Start(); err != nil {
		t.Fatalf("starting toxiproxy: %v", err)
	}
	t.Cleanup(px.Stop)
	sp := startSignpost(t, ticketsConfig, "http://"+px.Listen, "--upstream-timeout", timeout.String())
	lateness := lateControl(t, timeout)

	transport := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 256}
	hc := &http.Client{Transport: transport, Timeout: timeout + 5*time.Second}
	recovered := func() time.Duration {
		start := time.Now()
		for time.Since(start) < 5*time.Second {
			a := timedCall(context.Background(), hc, "GET", sp.URL+"/ok", nil)
			if a.err == nil && a.status == http.StatusOK {
				return time.Since(start)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(start)
	}
	if d := recovered(); d > time.Second {
		t.Fatalf("signpost did not answer 200 through toxiproxy before any fault (%v)", d)
	}
	transport.CloseIdleConnections()
	goroutines := func() float64 { return sp.counter(t, "go_goroutines") }
	before := goroutines()

	var (
		total, wrong, late              int
		slowest, worstBack, controlLate time.Duration
	)
	for _, f := range upstreamFaults() {
		if f.toxic == "" {
			px.Stop()
		} else if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"fault",` + strings.TrimPrefix(f.toxic, "{"))); err != nil {
			t.Fatalf("%s: adding the toxic %s: %v", f.name, f.toxic, err)
		}
		ctrl, stop := make(chan time.Duration, 1), make(chan struct{})
		go func() { ctrl <- lateness(stop) }()
		atk := vegeta.NewAttacker(vegeta.Client(hc), vegeta.MaxBody(-1))
		target := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: sp.URL + f.path})
		var results []*vegeta.Result
		for r := range atk.Attack(target, vegeta.Rate{Freq: 100, Per: time.Second}, attack, f.name) {
			results = append(results, r)
		}
		close(stop)
		cl := <-ctrl
		controlLate = max(controlLate, cl)
		n, bad, over := len(results), 0, 0
		for _, r := range results {
			if why := f.want(r); why != "" {
				bad++
				if bad <= 3 {
					t.Errorf("%s: %s", f.name, why)
				}
			}
			if r.Latency > timeout+slack+cl {
				over++
				if over <= 3 {
					t.Errorf("%s: answered after %v; the control was %v late", f.name, r.Latency, cl)
				}
			}
			slowest = max(slowest, r.Latency)
		}
		total, wrong, late = total+n, wrong+bad, late+over
		if f.toxic == "" {
			if err := px.Start(); err != nil {
				t.Fatalf("restarting toxiproxy on %s: %v", px.Listen, err)
			}
		} else if err := px.Toxics.RemoveToxic(context.Background(), "fault"); err != nil {
			t.Fatalf("%s: removing the toxic: %v", f.name, err)
		}
		back := recovered()
		worstBack = max(worstBack, back)
		t.Logf("%s: %d calls, %d answered otherwise, %d late; control %v late; recovered in %v",
			f.name, n, bad, over, cl.Round(time.Millisecond), back.Round(time.Millisecond))
	}

	// Every connection the load opened is closed; what signpost started
	// for it must end with it.
	transport.CloseIdleConnections()
	after := goroutines()
	for deadline := time.Now().Add(3 * time.Second); after > before && time.Now().Before(deadline); after = goroutines() {
		time.Sleep(50 * time.Millisecond)
	}

	faults := len(upstreamFaults())
	figure(t, name, "calls at 100/s", total, fmt.Sprintf("%d faults, each for %v", faults, attack), total > 0)
	figure(t, name, "calls not answered as the fault calls for", wrong, "0", wrong == 0)
	figure(t, name, "slowest answer", slowest.Round(time.Millisecond),
		fmt.Sprintf("≤ %v (upstream timeout + 100 ms) + the control's lateness (at most %v)", timeout+slack, controlLate.Round(time.Millisecond)), late == 0)
	figure(t, name, "slowest recovery once the fault was removed", worstBack.Round(time.Millisecond), "≤ 1s", worstBack <= time.Second)
	figure(t, name, "goroutine growth (go_goroutines after - before)", after-before, "≤ 0", after <= before)
}

// lateControl starts a control signpost in front of an upstream that
// answers after exactly timeout. The function it returns sends the control
// 20 calls a second until stop is closed, and returns how much later than
// timeout its slowest answer came: what a machine busy with other work
// adds to any answer, which a timing bar then allows for.
func lateControl(t *testing.T, timeout time.Duration) func(stop <-chan struct{}) time.Duration {
	t.Helper()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(timeout):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"T-8841","status":"open"}`)
	}))
	control := startSignpost(t, ticketsConfig, up.URL, "--upstream-timeout", (2 * timeout).String())
	return func(stop <-chan struct{}) time.Duration {
		atk := vegeta.NewAttacker(vegeta.Timeout(timeout + 5*time.Second))
		go func() { <-stop; atk.Stop() }()
		target := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: control.URL + "/tickets/T-8841"})
		var late time.Duration
		for r := range atk.Attack(target, vegeta.Rate{Freq: 20, Per: time.Second}, 0, "control") {
			if r.Code == http.StatusOK {
				late = max(late, r.Latency-timeout)
			}
		}
		return late
	}
}
