package rewrite_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// fixture is one golden case: a request, the upstream's answer, and the
// body signpost must write (or "no match").
type fixture struct {
	method, target string
	header         http.Header
	body           string
	status         int
	upHeader       http.Header
	upstream       string
	want           string
}

const separator = "----------"

var headerLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*): (.*)$`)

func readFixture(t *testing.T, path string) fixture {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.SplitSeq(strings.TrimRight(string(data), "\n"), "\n") {
		if !strings.HasPrefix(l, "# ") {
			lines = append(lines, l)
		}
	}
	parts := strings.Split(strings.Join(lines, "\n"), "\n"+separator+"\n")
	if len(parts) != 3 {
		t.Fatalf("%s: want request, upstream response and expected body separated by %q lines; found %d parts", path, separator, len(parts))
	}
	var f fixture
	first, header, body := splitMessage(parts[0])
	var ok bool
	if f.method, f.target, ok = strings.Cut(first, " "); !ok {
		t.Fatalf("%s: request line %q: want METHOD TARGET", path, first)
	}
	f.header, f.body = header, body
	first, f.upHeader, f.upstream = splitMessage(parts[1])
	if first == "none" { // validated before any upstream call
		f.status = 0
	} else if f.status, err = strconv.Atoi(first); err != nil {
		t.Fatalf("%s: upstream status %q: %v", path, first, err)
	}
	f.want = strings.TrimSpace(parts[2])
	return f
}

// splitMessage splits "first line, headers, body".
func splitMessage(s string) (string, http.Header, string) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Scan()
	first := sc.Text()
	h := http.Header{}
	var body []string
	inHeader := true
	for sc.Scan() {
		if m := headerLine.FindStringSubmatch(sc.Text()); inHeader && m != nil {
			h.Add(m[1], m[2])
			continue
		}
		inHeader = false
		body = append(body, sc.Text())
	}
	return first, h, strings.Join(body, "\n")
}

func loadRules(t testing.TB) *rules.Config {
	t.Helper()
	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// route finds the route of cfg a request goes to, as the proxy would.
func route(t testing.TB, cfg *rules.Config, method, target string) (*rules.Route, *rewrite.Request) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := mux.NewRouter()
	for _, rt := range cfg.Routes {
		r.NewRoute().Name(rt.Name).Methods(rt.Method).Path(rt.Path)
	}
	var m mux.RouteMatch
	if !r.Match(&http.Request{Method: method, URL: u}, &m) || m.Route == nil {
		t.Fatalf("%s %s matches no route", method, target)
	}
	for _, rt := range cfg.Routes {
		if rt.Name == m.Route.GetName() {
			return rt, &rewrite.Request{Method: method, Vars: m.Vars, Query: u.Query()}
		}
	}
	t.Fatal("unreachable")
	return nil, nil
}

var update = flag.Bool("update", false, "rewrite the expected bodies of the golden fixtures under testdata/ instead of comparing with them")

// rewriteWant puts got in the place of the expected body of the fixture at
// path: what follows its last separator line.
func rewriteWant(t *testing.T, path string, got []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(data), "\n"+separator+"\n")
	if i < 0 {
		t.Fatalf("%s: no %q line to write the expected body after", path, separator)
	}
	out := append(data[:i+len(separator)+2:i+len(separator)+2], got...)
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGolden renders each fixture's upstream error as signpost would: the
// fixtures in testdata/ in signpost's own format, those in
// testdata/problem/ as RFC 9457 Problem Details.
func TestGolden(t *testing.T) {
	defer rewrite.SetClock(time.Date(2026, 3, 11, 9, 14, 2, 0, time.UTC))()
	cfg := loadRules(t)
	for _, dir := range []string{"testdata", "testdata/problem"} {
		t.Run(filepath.Base(dir), func(t *testing.T) { golden(t, cfg, dir) })
	}
}

func golden(t *testing.T, cfg *rules.Config, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) == 0 {
		t.Fatal("no fixtures in " + dir)
	}
	problem := filepath.Base(dir) == "problem"
	// One Error is set by every fixture in turn, as a proxy keeps one:
	// nothing of an earlier answer may show in a later one.
	var reused rewrite.Error
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			f := readFixture(t, path)
			rt, req := route(t, cfg, f.method, f.target)
			req.Header = f.header
			if f.body != "" {
				req.Body = []byte(f.body)
			}
			up := &rewrite.Upstream{Status: f.status, Header: f.upHeader, Body: &rules.Body{Raw: []byte(f.upstream)}}
			var e *rewrite.Error
			if f.status == 0 {
				e = rewrite.Before(rt, req, cfg.Limits)
			} else if rule := rt.MatchError(f.status, up.Body); rule != nil {
				e = new(rewrite.Error).SetMatch(rt, rule, up, req, cfg.Limits)
			} else {
				e = rewrite.Wrap(up, rt, req)
			}
			var got []byte
			switch {
			case e == nil:
				got = []byte("valid")
			case problem:
				got = e.ProblemJSON()
			default:
				got = e.JSON()
			}
			if e != nil && !json.Valid(got) {
				t.Fatalf("body is not valid JSON: %s", got)
			}
			if string(got) != f.want && *update {
				rewriteWant(t, path, got)
			} else if string(got) != f.want {
				t.Errorf("body mismatch\n got: %s\nwant: %s", got, f.want)
			}
			if e == nil {
				return
			}
			// Appended to a buffer that holds something already, the body
			// is the same, after what was there.
			prefix := []byte("kept|")
			appended := e.AppendJSON(prefix)
			if problem {
				appended = e.AppendProblemJSON(prefix)
			}
			if string(appended) != "kept|"+string(got) {
				t.Errorf("appended after %q:\n got: %s\nwant: kept|%s", prefix, appended, got)
			}
			if rule := rt.MatchError(f.status, up.Body); f.status != 0 && rule != nil {
				again := reused.SetMatch(rt, rule, up, req, cfg.Limits)
				if string(again.JSON()) != string(e.JSON()) {
					t.Errorf("SetMatch on an Error used before:\n got: %s\nwant: %s", again.JSON(), e.JSON())
				}
			}
		})
	}
}

// statusRule is what the test rules' status field says of a value outside
// its set.
const statusRule = "allowed values: " + "open, pending, closed"

func TestInvalidUTF8IsEscaped(t *testing.T) {
	cfg := loadRules(t)
	rt, req := route(t, cfg, "PATCH", "/tickets/T-1")
	req.Body = []byte("{\"status\":\"O\xffP\xc3\"}")
	body := &rules.Body{Raw: []byte(`{"error":"Invalid status"}`)}
	got := new(rewrite.Error).SetMatch(rt, rt.MatchError(400, body), &rewrite.Upstream{Status: 400, Body: body}, req, rules.Limits{Received: 64}).JSON()
	// gjson does not validate UTF-8 inside strings, so the raw bytes reach
	// the rewrite; they must leave it as U+FFFD escapes.
	want := `{"error":"invalid_status","field":"status","message":"` + statusRule + `","received":"O\ufffdP\ufffd","retryable":false}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFailure(t *testing.T) {
	got := string(rewrite.Failure(502, "upstream_unavailable", "the upstream service could not be reached", true).JSON())
	want := `{"error":"upstream_unavailable","message":"the upstream service could not be reached","retryable":true}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestReceivedCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, `"abc"`},
		{"abcd", 3, `"abc…[+1 chars]"`},
		{"żółw", 2, `"żó…[+2 chars]"`},
		{"", 8, `""`},
	} {
		if got := string(rewrite.Received(rules.Text(tc.in), tc.max)); got != tc.want {
			t.Errorf("Received(%q, %d) = %s; want %s", tc.in, tc.max, got, tc.want)
		}
	}
}
