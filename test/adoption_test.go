package test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/test/adoption"
)

// Adopting signpost on two real APIs from Debian's packages, Prometheus and
// the Docker registry: observe mode in front while scripted agents make the
// mistakes models make and recover from them, signpost draft on the record,
// check and test on the draft, then the draft enforced, judged on mistakes
// with values the traffic never held, each beside the bare API's answer to
// the same call (test/adoption holds the criteria).

// adoptionPackages is the line that installs both APIs.
const adoptionPackages = "apt-get install -y prometheus docker-registry"

// apiTimeout bounds an API's start, until it answers.
const apiTimeout = 30 * time.Second

// maxRouteRatio bounds the drafted routes against the real routes the
// traffic used successfully.
const maxRouteRatio = 1.2

// TestAdoptionPrometheus adopts signpost on Prometheus's HTTP API.
func TestAdoptionPrometheus(t *testing.T) {
	t.Parallel()
	bin := debianBinary(t, "/usr/bin/prometheus", adoptionPackages)
	api := startPrometheus(t, bin)
	adopt(t, "prometheus", api, prometheusAgents, prometheusMistakes)
}

// TestAdoptionRegistry adopts signpost on the Docker registry's HTTP API.
func TestAdoptionRegistry(t *testing.T) {
	t.Parallel()
	bin := debianBinary(t, "/usr/bin/docker-registry", adoptionPackages)
	api := startRegistry(t, bin)
	adopt(t, "registry", api, registryAgents, registryMistakes)
}

// debianBinary returns path when it is installed; else the test is
// skipped, except under CI, which installs the packages with install.
func debianBinary(t *testing.T, path, install string) string {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	why := path + " is not installed; install it with: " + install
	if os.Getenv("CI") != "" {
		t.Fatal(why + "; CI is set, and .ci/run installs them")
	}
	t.Skip("SKIP: " + why)
	return ""
}

// startAPI runs an API's binary, ended at cleanup, and waits until ready
// answers 200 on it.
func startAPI(t *testing.T, name, addr, ready string, args ...string) string {
	t.Helper()
	return startAPIAnswering(t, name, addr, ready, http.StatusOK, args...)
}

// startAPIAnswering is startAPI for an API whose ready path answers status
// once it is up.
func startAPIAnswering(t *testing.T, name, addr, ready string, status int, args ...string) string {
	t.Helper()
	out := newLogBuffer()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", name, clip([]byte(out.String())))
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(apiTimeout)
	for {
		r, err := try("GET", base+ready)
		if err == nil && r.status == status {
			return base
		}
		select {
		case <-done:
			t.Fatalf("%s exited before it answered %s:\n%s", name, ready, out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer %s with %d within %v (last: %v %v):\n%s", name, ready, status, apiTimeout, r, err, out)
		}
	}
}

// startPrometheus runs Prometheus on a loopback port, scraping itself
// every second so that its queries find data, and returns its base URL.
func startPrometheus(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	addr := freePort(t)
	config := filepath.Join(dir, "prometheus.yml")
	text := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: prometheus\n    static_configs:\n      - targets: [%q]\n", addr)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startAPI(t, "prometheus", addr, "/-/ready", bin, "--config.file="+config,
		"--web.listen-address="+addr, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--log.level=warn")
	// The first scrape, so that "up" has a sample.
	deadline := time.Now().Add(apiTimeout)
	for {
		r, err := try("GET", base+"/api/v1/query?query=up")
		if err == nil && strings.Contains(string(r.body), `"job":"prometheus"`) {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus had no sample of up within %v", apiTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startRegistry runs the registry on a loopback port with its storage in
// a temporary directory, and returns its base URL.
func startRegistry(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	addr := freePort(t)
	config := filepath.Join(dir, "config.yml")
	text := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n  secret: adoption-test\n",
		filepath.Join(dir, "storage"), addr)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return startAPI(t, "docker-registry", addr, "/v2/", bin, "serve", config)
}

// call is one request a scripted agent made, with the real route of the
// API it meant: "" for a call no route of the API serves.
type call struct {
	caller, route, method, path string
	status                      int
}

// agent is one scripted caller, known to signpost by its session header.
type agent struct {
	t     *testing.T
	base  string
	id    string
	calls *[]call
}

// do sends one call as the agent and records it.
func (a *agent) do(route, method, path string, body []byte, header ...string) *reply {
	a.t.Helper()
	r := send(a.t, method, a.base+path, body, append([]string{"X-Session-Id", a.id}, header...)...)
	*a.calls = append(*a.calls, call{a.id, route, method, path, r.status})
	return r
}

// want fails the test when a call the script expects to succeed, or to
// fail, did not: the script would otherwise teach something else.
func (a *agent) want(r *reply, status int, what string) {
	a.t.Helper()
	if r.status != status {
		a.t.Fatalf("%s: %s: status %d, want %d: %s", a.id, what, r.status, status, clip(r.body))
	}
}

// wrongCall is a mistake of step 4: the call, and what is wrong in it.
type wrongCall struct {
	adoption.Mistake
	body   []byte
	header []string
	// prepare, when set, makes the calls the mistake needs first against
	// base and returns the mistake to send there.
	prepare func(t *testing.T, base string, m adoption.Mistake) adoption.Mistake
}

// adopt runs the four steps against the API at api and judges the result.
func adopt(t *testing.T, name, api string,
	agents func(a *agent, i int),
	mistakes func(t *testing.T, api string) []wrongCall) {
	dir := t.TempDir()

	// 1. Observe.
	observing := filepath.Join(dir, "observe.yaml")
	if err := os.WriteFile(observing, []byte("mode: observe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	obs := startSignpost(t, observing, api)

	// 2. The scripted agents, each a caller of its own.
	var calls []call
	for i := range 4 {
		agents(&agent{t: t, base: obs.URL, id: fmt.Sprintf("%s-agent-%d", name, i+1), calls: &calls}, i)
	}
	var real []string
	for _, c := range calls {
		if c.route != "" && c.status < 300 && !slices.Contains(real, c.route) {
			real = append(real, c.route)
		}
	}
	slices.Sort(real)
	t.Logf("%d calls by 4 agents; %d real routes succeeded: %s", len(calls), len(real), strings.Join(real, ", "))

	// 3. Draft, check, test.
	drafted := filepath.Join(dir, name+".yaml")
	if out, errs, code := runCLI(t, "draft", "--admin", strings.TrimPrefix(obs.Admin, "http://"), "-o", drafted, "--upstream", api); code != 0 {
		t.Fatalf("signpost draft: exit %d\n%s%s", code, out, errs)
	}
	rulesText, err := os.ReadFile(drafted)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the draft:\n%s", rulesText)
	if out, errs, code := runCLI(t, "check", drafted); code != 0 {
		t.Errorf("signpost check on the draft: exit %d\n%s%s", code, out, errs)
	}
	testsFile := filepath.Join(dir, name+".tests.yaml")
	if out, errs, code := runCLI(t, "test", testsFile); code != 0 {
		tests, _ := os.ReadFile(testsFile)
		t.Errorf("signpost test on the drafted tests: exit %d\n%s%s\nthe tests:\n%s", code, out, errs, tests)
	}
	rules, err := adoption.ParseRules(rulesText)
	if err != nil {
		t.Fatalf("reading the draft's routes: %v", err)
	}

	// 4. Enforce the draft, and judge new mistakes beside the bare API.
	en := startSignpost(t, drafted, api)
	type row struct {
		name                 string
		bare, through        *reply
		bareJudge, spJudge   adoption.Judgement
		kept                 bool
		keptWhy              string
		bareCall, signpostAt string
	}
	var rows []row
	for _, w := range mistakes(t, api) {
		sideOf := func(base string) (adoption.Mistake, *reply) {
			m := w.Mistake
			if w.prepare != nil {
				m = w.prepare(t, base, m)
			}
			header := append([]string{"X-Session-Id", newCaller()}, w.header...)
			return m, send(t, m.Method, base+m.Path, w.body, header...)
		}
		bm, bare := sideOf(api)
		sm, through := sideOf(en.URL)
		bareAns := adoption.Answer{Status: bare.status, Body: bare.body}
		spAns := adoption.Answer{Status: through.status, Body: through.body}
		r := row{name: w.Name, bare: bare, through: through,
			bareJudge: adoption.Judge(bm, nil, bareAns, nil),
			spJudge:   adoption.Judge(sm, rules, spAns, &bareAns),
			bareCall:  bm.Method + " " + bm.Path, signpostAt: sm.Method + " " + sm.Path}
		r.kept, r.keptWhy = adoption.Kept(sm, rules, bareAns, spAns)
		rows = append(rows, r)
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%s: each new mistake, the bare API beside signpost enforcing the draft\n", name)
	fmt.Fprintf(&table, "%-44s | %-16s | %-16s | %s\n", "mistake", "bare", "signpost", "upstream information")
	for _, r := range rows {
		kept := "kept"
		if !r.kept {
			kept = "LOST"
		}
		fmt.Fprintf(&table, "%-44s | %3d %-12s | %3d %-12s | %s\n", r.name, r.bare.status, r.bareJudge.Verdict,
			r.through.status, r.spJudge.Verdict, kept)
	}
	t.Log("\n" + table.String())
	for _, r := range rows {
		detail := fmt.Sprintf("%s\n\tbare API (%s): %d %s\n\t\t%s: %s\n\tsignpost (%s): %d %s\n\t\t%s: %s\n\t\tupstream information: %s",
			r.name, r.bareCall, r.bare.status, clip(r.bare.body), r.bareJudge.Verdict, r.bareJudge.Why,
			r.signpostAt, r.through.status, clip(r.through.body), r.spJudge.Verdict, r.spJudge.Why, r.keptWhy)
		switch {
		case r.spJudge.Verdict == adoption.False:
			t.Errorf("signpost's answer is false: %s", detail)
		case !r.kept:
			t.Errorf("signpost's answer lost what the API said: %s", detail)
		default:
			t.Logf("%s", detail)
		}
	}

	// 5. No more routes than the API has, within a margin.
	var names []string
	for _, rt := range rules.Routes {
		names = append(names, rt.Method+" "+rt.Path)
	}
	if limit := maxRouteRatio * float64(len(real)); float64(len(rules.Routes)) > limit {
		t.Errorf("the draft has %d routes for the %d real routes the traffic used (more than %.1f×):\n\tdrafted: %s\n\treal:    %s",
			len(rules.Routes), len(real), maxRouteRatio, strings.Join(names, ", "), strings.Join(real, ", "))
	} else {
		t.Logf("the draft has %d routes for %d real ones: %s", len(rules.Routes), len(real), strings.Join(names, ", "))
	}
}

// Prometheus.

// Values Prometheus accepts, none of them in the agents' traffic.
var (
	promTimes   = []string{"2026-11-02T08:30:00Z", "2026-11-02T08:30:00.125+02:00", "1762072200", "1762072200.5"}
	promSteps   = []string{"45s", "45", "2m30s", "0.25", "3h", "1d"}
	promQueries = []string{"vector(1) + 2", `sum by (job) (rate(prometheus_http_requests_total[5m]))`, `{__name__="go_goroutines"}`}
	promMatches = []string{"go_goroutines", `{job="prometheus",instance!=""}`, `{__name__=~"go_.*"}`}
	promLabels  = []string{"instance", "__name__", "le", "handler", "code"}
)

// prometheusAgents is the script of agent i: each mistake, then the call
// that works. The values vary by agent.
func prometheusAgents(a *agent, i int) {
	const (
		query      = "GET /api/v1/query"
		queryPost  = "POST /api/v1/query"
		queryRange = "GET /api/v1/query_range"
		labelVals  = "GET /api/v1/label/{name}/values"
		series     = "GET /api/v1/series"
	)
	now := time.Now().UTC()
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	rfc := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for j := 0; j+1 < len(kv); j += 2 {
			v.Set(kv[j], kv[j+1])
		}
		return path + "?" + v.Encode()
	}
	pick := func(vs ...string) string { return vs[i%len(vs)] }
	ok, bad := http.StatusOK, http.StatusBadRequest

	a.want(a.do(query, "GET", q("/api/v1/query", "query", "up"), nil), ok, "an instant query")
	// A function given an instant vector where it takes a range.
	fn := pick("rate", "increase", "irate", "delta")
	metric := pick("prometheus_http_requests_total", "go_gc_duration_seconds_count", "process_cpu_seconds_total", "prometheus_tsdb_head_series")
	a.want(a.do(query, "GET", q("/api/v1/query", "query", fn+"("+metric+")"), nil), bad, "a range function on an instant vector")
	a.want(a.do(query, "GET", q("/api/v1/query", "query", fn+"("+metric+"["+pick("1m", "5m", "2m", "30s")+"])"), nil), ok, "the range given")
	// A selector left open.
	a.want(a.do(query, "GET", q("/api/v1/query", "query", `up{job="prometheus"`), nil), bad, "an unclosed selector")
	a.want(a.do(query, "GET", q("/api/v1/query", "query", `up{job="prometheus"}`), nil), ok, "the selector closed")
	// A time in words.
	a.want(a.do(query, "GET", q("/api/v1/query", "query", "up", "time", pick("now", "today", "yesterday", "5 minutes ago")), nil), bad, "a time in words")
	a.want(a.do(query, "GET", q("/api/v1/query", "query", "up", "time", unix(-time.Minute)), nil), ok, "a Unix time")
	// The form the API documents for long queries.
	a.want(a.do(queryPost, "POST", "/api/v1/query", []byte("query="+url.QueryEscape("count(up)")), "Content-Type", "application/x-www-form-urlencoded"), ok, "a query posted as a form")

	// A range with a start in the wrong format.
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", now.Add(-10*time.Minute).Format(pick("2006-01-02 15:04", "02/01/2006 15:04", "Jan 2 2006 15:04", "2006-01-02 15:04:05")), "end", rfc(0), "step", "15s"), nil), bad, "a start in the wrong format")
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", rfc(-10*time.Minute), "end", rfc(0), "step", "15s"), nil), ok, "an RFC 3339 start")
	// A step in words.
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", unix(-10*time.Minute), "end", unix(0), "step", pick("15 seconds", "1 minute", "15secs", "30 s")), nil), bad, "a step in words")
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", unix(-10*time.Minute), "end", unix(0), "step", pick("15s", "60s", "15", "30s")), nil), ok, "a step as a duration")
	// No step at all.
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", unix(-5*time.Minute), "end", unix(0)), nil), bad, "a range without a step")
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", unix(-5*time.Minute), "end", unix(0), "step", "30s"), nil), ok, "the step given")
	// The end before the start.
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", unix(0), "end", unix(-time.Hour), "step", "60s"), nil), bad, "the end before the start")
	a.want(a.do(queryRange, "GET", q("/api/v1/query_range", "query", "up", "start", unix(-time.Hour), "end", unix(0), "step", "60s"), nil), ok, "start and end in order")

	// A label name the API does not allow.
	a.want(a.do(labelVals, "GET", "/api/v1/label/"+url.PathEscape(pick("job name", "1instance", "job-name", "process.cpu"))+"/values", nil), bad, "an invalid label name")
	a.want(a.do(labelVals, "GET", "/api/v1/label/"+pick("job", "instance", "job", "instance")+"/values", nil), ok, "a label's values")
	// A series matcher written as a label pair.
	a.want(a.do(series, "GET", q("/api/v1/series", "match[]", pick("job=prometheus", "up job", "instance=127.0.0.1", `job=="prometheus"`)), nil), bad, "a matcher that is not a selector")
	a.want(a.do(series, "GET", q("/api/v1/series", "match[]", pick(`{job="prometheus"}`, "up", `up{job="prometheus"}`, `{__name__="up"}`)), nil), ok, "a selector")
	// No matcher at all.
	a.want(a.do(series, "GET", "/api/v1/series", nil), bad, "series without match[]")
	a.want(a.do(series, "GET", q("/api/v1/series", "match[]", "up"), nil), ok, "series of up")
	// A method the API does not take.
	method := pick("DELETE", "PUT", "DELETE", "PATCH")
	a.want(a.do("", method, q("/api/v1/query", "query", "up"), nil), http.StatusMethodNotAllowed, "a wrong method")
	a.want(a.do(query, "GET", q("/api/v1/query", "query", "up"), nil), ok, "the query with GET")
}

// prometheusMistakes are new mistakes on Prometheus, with values the
// agents never sent.
func prometheusMistakes(t *testing.T, api string) []wrongCall {
	now := time.Now().UTC()
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	part := func(name, in, value string, valid []string, aliases ...string) adoption.Part {
		return adoption.Part{Name: name, In: in, Value: value, Valid: valid, Aliases: aliases}
	}
	rng := func(name string, fault []string, query, start, end, step string) wrongCall {
		v := url.Values{"query": {query}, "start": {start}, "end": {end}}
		if step != "" {
			v.Set("step", step)
		}
		return wrongCall{Mistake: adoption.Mistake{Name: name, Method: "GET", Path: "/api/v1/query_range?" + v.Encode(), Fault: fault,
			Parts: []adoption.Part{part("query", "query", query, promQueries), part("start", "query", start, promTimes),
				part("end", "query", end, promTimes), part("step", "query", step, promSteps)}}}
	}
	instant := func(name string, fault []string, query, at string) wrongCall {
		v := url.Values{"query": {query}}
		if at != "" {
			v.Set("time", at)
		}
		return wrongCall{Mistake: adoption.Mistake{Name: name, Method: "GET", Path: "/api/v1/query?" + v.Encode(), Fault: fault,
			Parts: []adoption.Part{part("query", "query", query, promQueries), part("time", "query", at, promTimes)}}}
	}
	badQuery := `sum(rate(prometheus_http_requests_total[5m]) by (code)`
	return []wrongCall{
		rng("query_range: start as DD.MM.YYYY", []string{"start"}, "go_goroutines", now.Add(-time.Hour).Format("02.01.2006 15:04"), unix(0), "45s"),
		rng("query_range: step as 90sec", []string{"step"}, "go_goroutines", unix(-time.Hour), unix(0), "90sec"),
		rng("query_range: end before start", []string{"end", "start"}, "go_goroutines", unix(-2*time.Hour), unix(-3*time.Hour), "45s"),
		rng("query_range: too many points", []string{"step", "start", "end"}, "go_goroutines", unix(-400*24*time.Hour), unix(0), "1"),
		instant("query: unbalanced parentheses", []string{"query"}, badQuery, ""),
		instant("query: time as 'last monday'", []string{"time"}, "go_goroutines", "last monday"),
		{Mistake: adoption.Mistake{Name: "query: bad PromQL posted as a form", Method: "POST", Path: "/api/v1/query", Fault: []string{"query"},
			Parts: []adoption.Part{part("query", "body", `go_goroutines{job=}`, promQueries)}},
			body: []byte("query=" + url.QueryEscape(`go_goroutines{job=}`)), header: []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{Mistake: adoption.Mistake{Name: "series: matcher with ~ alone", Method: "GET", Path: "/api/v1/series?" + url.Values{"match[]": {`handler~"/api"`}}.Encode(),
			Fault: []string{"match[]"}, Parts: []adoption.Part{part("match[]", "query", `handler~"/api"`, promMatches, "match")}}},
		{Mistake: adoption.Mistake{Name: "label values: name starting with a digit", Method: "GET", Path: "/api/v1/label/9handler/values",
			Fault: []string{"name"}, Parts: []adoption.Part{part("name", "path", "9handler", promLabels, "label", "label_name")}}},
		{Mistake: adoption.Mistake{Name: "series: PATCH", Method: "PATCH", Path: "/api/v1/series?" + url.Values{"match[]": {"go_goroutines"}}.Encode(),
			Parts: []adoption.Part{part("match[]", "query", "go_goroutines", promMatches, "match")}}},
	}
}

// The Docker registry.

// Values the registry accepts, none of them in the agents' traffic.
var (
	regNames   = []string{"qa/pipelines/nightly", "library/alpine", "solo", "my-org/my.repo_1/x-y"}
	regTags    = []string{"latest", "v1.2.3", "1.0_rc-2", "sha256:" + strings.Repeat("ab", 32)}
	regDigests = []string{"sha256:" + strings.Repeat("cd", 32), "sha512:" + strings.Repeat("ef", 64)}
	regTypes   = []string{"application/vnd.docker.distribution.manifest.v2+json", "application/vnd.oci.image.manifest.v1+json"}
)

const manifestType = "application/vnd.docker.distribution.manifest.v2+json"

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// manifest is an image manifest naming a config and one layer.
func manifest(config, layer []byte) []byte {
	return fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":"application/vnd.docker.container.image.v1+json","size":%d,"digest":%q},"layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","size":%d,"digest":%q}]}`,
		manifestType, len(config), digestOf(config), len(layer), digestOf(layer))
}

// uploadTarget is the path and query of an upload's Location, which the
// registry writes as an absolute URL: an agent follows it on the base it
// called.
func uploadTarget(t *testing.T, r *reply) string {
	t.Helper()
	loc := r.header.Get("Location")
	u, err := url.Parse(loc)
	if err != nil || loc == "" {
		t.Fatalf("an upload answered %d without a Location: %q", r.status, loc)
	}
	return u.RequestURI()
}

// withDigest adds the digest query parameter to an upload's target.
func withDigest(target, digest string) string {
	if digest == "" {
		return target
	}
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + "digest=" + url.QueryEscape(digest)
}

// registryAgents is the script of agent i: pushing an image over the HTTP
// API and reading it back, each mistake followed by the call that works.
func registryAgents(a *agent, i int) {
	const (
		ping       = "GET /v2/"
		startBlob  = "POST /v2/{name}/blobs/uploads/"
		finishBlob = "PUT /v2/{name}/blobs/uploads/{uuid}"
		putMan     = "PUT /v2/{name}/manifests/{reference}"
		getMan     = "GET /v2/{name}/manifests/{reference}"
		tags       = "GET /v2/{name}/tags/list"
		getBlob    = "GET /v2/{name}/blobs/{digest}"
	)
	pick := func(vs ...string) string { return vs[i%len(vs)] }
	name := pick("team/workers", "team/api", "infra/tools/builder", "apps/web")
	config := fmt.Appendf(nil, `{"architecture":"amd64","os":"linux","config":{"Labels":{"agent":"%d"}},"rootfs":{"type":"layers","diff_ids":[]}}`, i)
	layer := fmt.Appendf(nil, "layer %d of %s", i, name)
	octets := []string{"Content-Type", "application/octet-stream"}
	upload := func(blob []byte, digest string) *reply {
		start := a.do(startBlob, "POST", "/v2/"+name+"/blobs/uploads/", nil)
		a.want(start, http.StatusAccepted, "starting an upload")
		return a.do(finishBlob, "PUT", withDigest(uploadTarget(a.t, start), digest), blob, octets...)
	}

	a.want(a.do(ping, "GET", "/v2/", nil), http.StatusOK, "the API's version check")
	// The config blob, first with the digest of other bytes, then left out.
	a.want(upload(config, digestOf(append(config, '\n'))), http.StatusBadRequest, "a blob with the digest of other bytes")
	a.want(upload(config, ""), http.StatusBadRequest, "a blob without its digest")
	a.want(upload(config, digestOf(config)), http.StatusCreated, "the config blob")
	// The manifest before its layer is uploaded.
	man := manifest(config, layer)
	a.want(a.do(putMan, "PUT", "/v2/"+name+"/manifests/v1", man, "Content-Type", manifestType), http.StatusBadRequest, "a manifest naming a layer not uploaded")
	a.want(upload(layer, digestOf(layer)), http.StatusCreated, "the layer blob")
	// The manifest sent as plain JSON.
	a.want(a.do(putMan, "PUT", "/v2/"+name+"/manifests/v1", man, "Content-Type", "application/json"), http.StatusBadRequest, "a manifest as application/json")
	a.want(a.do(putMan, "PUT", "/v2/"+name+"/manifests/v1", man, "Content-Type", manifestType), http.StatusCreated, "the manifest")

	// A tag that was never pushed, then the tags listed, then the one there.
	a.want(a.do(getMan, "GET", "/v2/"+name+"/manifests/"+pick("latest", "stable", "main", "prod"), nil, "Accept", manifestType), http.StatusNotFound, "an unknown tag")
	a.want(a.do(tags, "GET", "/v2/"+name+"/tags/list", nil), http.StatusOK, "the tags")
	a.want(a.do(getMan, "GET", "/v2/"+name+"/manifests/v1", nil, "Accept", manifestType), http.StatusOK, "the manifest by tag")
	a.want(a.do(getMan, "GET", "/v2/"+name+"/manifests/"+digestOf(man), nil, "Accept", manifestType), http.StatusOK, "the manifest by digest")
	// A repository name cut short.
	short := name[:strings.LastIndexByte(name, '/')] + "/" + pick("worker", "apis", "build", "webs")
	a.want(a.do(tags, "GET", "/v2/"+short+"/tags/list", nil), http.StatusNotFound, "an unknown repository")
	a.want(a.do(tags, "GET", "/v2/"+name+"/tags/list", nil), http.StatusOK, "the repository's tags")
	// A digest cut short.
	a.want(a.do(getBlob, "GET", "/v2/"+name+"/blobs/"+digestOf(layer)[:15+5*i], nil), http.StatusBadRequest, "a digest cut short")
	a.want(a.do(getBlob, "GET", "/v2/"+name+"/blobs/"+digestOf(layer), nil), http.StatusOK, "the layer")
	// A method the tags list does not take.
	a.want(a.do("", pick("DELETE", "POST", "PUT", "DELETE"), "/v2/"+name+"/tags/list", nil), http.StatusMethodNotAllowed, "a wrong method")
	a.want(a.do(tags, "GET", "/v2/"+name+"/tags/list", nil), http.StatusOK, "the tags with GET")
}

// registryMistakes are new mistakes on the registry, on a repository of
// three segments pushed straight to it, with values the agents never sent.
func registryMistakes(t *testing.T, api string) []wrongCall {
	const repo = "qa/pipelines/nightly"
	config := []byte(`{"architecture":"arm64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	layer := []byte("the nightly layer")
	for _, blob := range [][]byte{config, layer} {
		start := send(t, "POST", api+"/v2/"+repo+"/blobs/uploads/", nil)
		if r := send(t, "PUT", api+withDigest(uploadTarget(t, start), digestOf(blob)), blob, "Content-Type", "application/octet-stream"); r.status != http.StatusCreated {
			t.Fatalf("pushing a blob to %s: %d %s", repo, r.status, r.body)
		}
	}
	if r := send(t, "PUT", api+"/v2/"+repo+"/manifests/2026.11", manifest(config, layer), "Content-Type", manifestType); r.status != http.StatusCreated {
		t.Fatalf("pushing %s:2026.11: %d %s", repo, r.status, r.body)
	}

	part := func(name, in, value string, valid []string, aliases ...string) adoption.Part {
		return adoption.Part{Name: name, In: in, Value: value, Valid: valid, Aliases: aliases}
	}
	named := func(n string) adoption.Part { return part("name", "path", n, regNames, "repository") }
	missing := "sha256:" + strings.Repeat("0f", 32)
	dangling := []byte(strings.Replace(string(manifest(config, layer)), digestOf(layer), missing, 1))
	manifestParts := func(contentType string) []adoption.Part {
		return []adoption.Part{named(repo), part("reference", "path", "2026.12", regTags, "tag"),
			part("Content-Type", "header", contentType, regTypes), part("schemaVersion", "body", "2", nil),
			part("mediaType", "body", manifestType, nil), part("config", "body", "", nil), part("layers", "body", "", nil)}
	}
	return []wrongCall{
		{Mistake: adoption.Mistake{Name: "manifest: unknown tag", Method: "GET", Path: "/v2/" + repo + "/manifests/2026.10-rc",
			Fault: []string{"reference"}, Parts: []adoption.Part{named(repo), part("reference", "path", "2026.10-rc", regTags, "tag")}},
			header: []string{"Accept", manifestType}},
		{Mistake: adoption.Mistake{Name: "tags: unknown repository", Method: "GET", Path: "/v2/qa/pipelines/nighty/tags/list",
			Fault: []string{"name"}, Parts: []adoption.Part{named("qa/pipelines/nighty")}}},
		{Mistake: adoption.Mistake{Name: "tags: name in upper case", Method: "GET", Path: "/v2/QA/Pipelines/nightly/tags/list",
			Fault: []string{"name"}, Parts: []adoption.Part{named("QA/Pipelines/nightly")}}},
		{Mistake: adoption.Mistake{Name: "blob: digest cut short", Method: "GET", Path: "/v2/" + repo + "/blobs/sha256:9e1f",
			Fault: []string{"digest"}, Parts: []adoption.Part{named(repo), part("digest", "path", "sha256:9e1f", regDigests)}}},
		{Mistake: adoption.Mistake{Name: "manifest: layer never uploaded", Method: "PUT", Path: "/v2/" + repo + "/manifests/2026.12",
			Fault: []string{"layers"}, Parts: manifestParts(manifestType)},
			body: dangling, header: []string{"Content-Type", manifestType}},
		{Mistake: adoption.Mistake{Name: "manifest: sent as text/plain", Method: "PUT", Path: "/v2/" + repo + "/manifests/2026.12",
			Fault: []string{"Content-Type"}, Parts: manifestParts("text/plain")},
			body: manifest(config, layer), header: []string{"Content-Type", "text/plain"}},
		{Mistake: adoption.Mistake{Name: "upload: digest of other bytes", Method: "PUT", Fault: []string{"digest"}},
			body: []byte("nightly extra layer"), header: []string{"Content-Type", "application/octet-stream"},
			prepare: func(t *testing.T, base string, m adoption.Mistake) adoption.Mistake {
				start := send(t, "POST", base+"/v2/"+repo+"/blobs/uploads/", nil, "X-Session-Id", newCaller())
				target := uploadTarget(t, start)
				m.Path = withDigest(target, digestOf([]byte("nightly extra layer!")))
				u, _ := url.Parse(target)
				m.Parts = []adoption.Part{named(repo), part("uuid", "path", u.Path[strings.LastIndexByte(u.Path, '/')+1:], nil),
					part("_state", "query", u.Query().Get("_state"), nil), part("digest", "query", digestOf([]byte("nightly extra layer!")), regDigests)}
				return m
			}},
		{Mistake: adoption.Mistake{Name: "tags: DELETE", Method: "DELETE", Path: "/v2/" + repo + "/tags/list",
			Parts: []adoption.Part{named(repo)}}},
	}
}
