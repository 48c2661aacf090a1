package test

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/rules"
)

// legacyAPI always fails its export with a 500 behind an HTML stack trace,
// answers /status with a 503 that names a wait and never clears, unless
// ?ok=1 asks for a success, and refuses any status but open, pending and
// closed.
func legacyAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Query().Get("ok") == "1":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true}`))
		case r.URL.Path == "/export":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(500)
			_, _ = w.Write([]byte("<html><body><h1>Internal Server Error</h1><pre>java.lang.NullPointerException\n\tat com.acme.Export.run(Export.java:41) on db-7.internal</pre></body></html>"))
		case r.URL.Path == "/status":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(503)
			_, _ = w.Write([]byte("Service Unavailable"))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"Invalid status"}`))
		}
	})
}

// loopAnswer is what the tests read of a body.
type loopAnswer struct {
	Error      string   `json:"error"`
	Message    string   `json:"message"`
	Received   any      `json:"received"`
	DidYouMean []string `json:"did_you_mean"`
	Repeated   int      `json:"repeated"`
	Retryable  bool     `json:"retryable"`
	RetryAfter int      `json:"retry_after_seconds"`
}

func readLoopAnswer(t *testing.T, body []byte) loopAnswer {
	t.Helper()
	var a loopAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return a
}

const stopWords = "repeating it will not succeed now"

// wantStop checks a stop body: the code kept, the count in words and in
// "repeated", never retryable, no upstream internals, few tokens.
func wantStop(t *testing.T, call int, body []byte, code string, n int) {
	t.Helper()
	a := readLoopAnswer(t, body)
	if a.Error != code || a.Repeated != n || a.Retryable || a.RetryAfter != 0 ||
		!strings.Contains(a.Message, stopWords) || !strings.Contains(a.Message, "the same way "+strconv.Itoa(n)+" times in a row") ||
		!strings.Contains(a.Message, "tell the user") {
		t.Errorf("call %d: %s\nwant a stop body with code %s, repeated %d", call, body, code, n)
	}
	for _, leak := range []string{"java", "Export.java", "db-7", "<html", "Internal Server Error"} {
		if strings.Contains(string(body), leak) {
			t.Errorf("call %d: the stop body holds %q: %s", call, leak, body)
		}
	}
	if tokens := rules.Tokens(string(body)); tokens >= 60 {
		t.Errorf("call %d: the stop body is %d tokens; want under 60: %s", call, tokens, body)
	}
}

// TestLoopOnAFailingExport: an agent calls an export that always fails
// eight times. The first loopAnswer allows one retry after a short wait; from
// the second the loopAnswer says to stop, and the counter counts each stop.
func TestLoopOnAFailingExport(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, legacyAPI())
	sp := startSignpost(t, "testdata/repeats.yaml", up.URL)
	for i := 1; i <= 8; i++ {
		got := send(t, "GET", sp.URL+"/export", nil, "X-Session-Id", "agent")
		if got.status != 500 {
			t.Fatalf("call %d: status %d, want the upstream's 500", i, got.status)
		}
		if i == 1 {
			a := readLoopAnswer(t, got.body)
			if a.Error != "upstream_failed" || !a.Retryable || a.RetryAfter != 1 || a.Repeated != 0 ||
				!strings.Contains(a.Message, "one retry after a short wait is reasonable") {
				t.Errorf("call 1: %s\nwant upstream_failed, retryable after 1 second", got.body)
			}
			continue
		}
		wantStop(t, i, got.body, "upstream_failed", i)
	}
	sp.wantCounter(t, 7, "signpost_repeats_stopped_total", "route", "export", "code", "upstream_failed")
}

// TestLoopOnAnUnavailableService: a 503 with Retry-After is transient, so
// the stop comes at the third identical failure, and drops the wait.
func TestLoopOnAnUnavailableService(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, legacyAPI())
	sp := startSignpost(t, "testdata/repeats.yaml", up.URL)
	for i := 1; i <= 4; i++ {
		got := send(t, "GET", sp.URL+"/status", nil, "X-Session-Id", "agent")
		if got.status != 503 {
			t.Fatalf("call %d: status %d, want the upstream's 503", i, got.status)
		}
		if i < 3 {
			if a := readLoopAnswer(t, got.body); !a.Retryable || a.RetryAfter != 2 || a.Repeated != 0 || got.header.Get("Retry-After") != "2" {
				t.Errorf("call %d: %s (Retry-After %q); want retryable after the upstream's 2 seconds", i, got.body, got.header.Get("Retry-After"))
			}
			continue
		}
		wantStop(t, i, got.body, "upstream_failed", i)
		if ra := got.header.Get("Retry-After"); ra != "" {
			t.Errorf("call %d: a stop sent with Retry-After %s", i, ra)
		}
	}
	sp.wantCounter(t, 2, "signpost_repeats_stopped_total", "route", "status", "code", "upstream_failed")
}

// TestRejectedValueSentAgain: the same invalid status sent again is told
// it was rejected already, with the rule and did_you_mean, and never to
// stop; another invalid value starts over.
func TestRejectedValueSentAgain(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, legacyAPI())
	sp := startSignpost(t, "testdata/repeats.yaml", up.URL)
	for i, tc := range []struct {
		value    string
		repeated int
	}{{"done", 0}, {"done", 2}, {"done", 3}, {"Closed", 0}} {
		got := send(t, "PATCH", sp.URL+"/tickets/T-1", []byte(`{"status":"`+tc.value+`"}`), "Content-Type", jsonType, "X-Session-Id", "agent")
		a := readLoopAnswer(t, got.body)
		already := strings.HasPrefix(a.Message, "this value was already rejected")
		if got.status != 400 || a.Error != "invalid_status" || a.Received != tc.value || a.Repeated != tc.repeated ||
			already != (tc.repeated > 0) || !strings.Contains(a.Message, "allowed values: open, pending, closed") || a.Retryable {
			t.Errorf("call %d (%s): %d %s; want invalid_status, repeated %d", i+1, tc.value, got.status, got.body, tc.repeated)
		}
		if strings.Contains(a.Message, stopWords) {
			t.Errorf("call %d: a field fault told to stop: %s", i+1, got.body)
		}
		if tc.value == "done" && (len(a.DidYouMean) != 1 || a.DidYouMean[0] != "closed") {
			t.Errorf("call %d: did_you_mean %v; want [closed]", i+1, a.DidYouMean)
		}
	}
	sp.wantCounter(t, 0, "signpost_repeats_stopped_total")
}

// TestRepeatsApart: a success on the route starts the count over, and
// callers with different session ids count apart.
func TestRepeatsApart(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, legacyAPI())
	sp := startSignpost(t, "testdata/repeats.yaml", up.URL)
	for i, step := range []struct {
		caller, target string
		repeated       int // -1: a success
	}{
		{"a", "/export", 0},
		{"b", "/export", 0}, // another caller: not a's repeat
		{"a", "/export", 2},
		{"a", "/export?ok=1", -1}, // a success starts a's count over
		{"a", "/export", 0},
		{"b", "/export", 2},
		{"a", "/export", 2},
	} {
		got := send(t, "GET", sp.URL+step.target, nil, "X-Session-Id", step.caller)
		if step.repeated < 0 {
			if got.status != 200 {
				t.Fatalf("step %d: %d %s, want a success", i+1, got.status, got.body)
			}
			continue
		}
		if step.repeated > 0 {
			wantStop(t, i+1, got.body, "upstream_failed", step.repeated)
			continue
		}
		if a := readLoopAnswer(t, got.body); a.Repeated != 0 || !a.Retryable {
			t.Errorf("step %d (caller %s): %s; want a first failure, retryable", i+1, step.caller, got.body)
		}
	}
	sp.wantCounter(t, 3, "signpost_repeats_stopped_total", "route", "export", "code", "upstream_failed")
}

// TestMCPSessionsRepeatApart: each MCP session is a caller of its own: a
// session's first failure is not another's repeat, and its second is.
func TestMCPSessionsRepeatApart(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, legacyAPI())
	first := startMCP(t, "streamable-http", "testdata/repeats.yaml", up.URL)
	line, ok := first.stdout.waitLine(startTimeout, first.done, func(l logLine) bool { return l["msg"] == "serving tools over MCP" })
	if !ok {
		t.Fatal("no serving line")
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "signpost-e2e-second", Version: "1"}, nil)
	second, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: line["endpoint"].(string), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	secondServer := &mcpServer{signpost: first.signpost, session: second}
	for i, step := range []struct {
		server   *mcpServer
		repeated int
	}{{first, 0}, {secondServer, 0}, {first, 2}, {secondServer, 2}, {first, 3}} {
		got := readResult(t, step.server.call(t, "export", `{}`))
		if !got.isError {
			t.Fatalf("step %d: not a tool error: %s", i+1, got.text)
		}
		a := readLoopAnswer(t, []byte(got.structured))
		if a.Repeated != step.repeated || (step.repeated > 0) != strings.Contains(a.Message, stopWords) {
			t.Errorf("step %d: %s; want repeated %d", i+1, got.structured, step.repeated)
		}
	}
	first.wantCounter(t, 3, "signpost_repeats_stopped_total", "route", "export", "code", "upstream_failed")
}

// TestRepeatsBehindOneAddress runs 20 agents at once behind one address,
// none with a session header: ten send a wrong status of their own on
// every call, nine the same wrong status as each other, and one, with a
// credential of its own, repeats an export that always fails. No answer
// may claim an agent did what it did not: an agent whose every value was
// its own is never told a value was already rejected, and every answer
// that counts repeats says it counted the address's calls. The looping
// agent, told apart by its credential, is still told to stop.
func TestRepeatsBehindOneAddress(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, legacyAPI())
	sp := startSignpost(t, "testdata/repeats.yaml", up.URL)
	type answer struct {
		agent, call int
		body        []byte
		err         error
	}
	const agents, calls = 20, 4
	answers := make(chan answer, agents*calls)
	var wg sync.WaitGroup
	for agent := range agents {
		wg.Go(func() {
			for call := range calls {
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond) // interleaved
				var req *http.Request
				switch {
				case agent == 0:
					req, _ = http.NewRequest("GET", sp.URL+"/export", nil)
					req.Header.Set("Authorization", "Bearer agent-zero")
				case agent <= 10:
					req, _ = http.NewRequest("PATCH", sp.URL+"/tickets/T-1", strings.NewReader(`{"status":"mine-`+strconv.Itoa(agent)+`-`+strconv.Itoa(call)+`"}`))
				default:
					req, _ = http.NewRequest("PATCH", sp.URL+"/tickets/T-1", strings.NewReader(`{"status":"FINISHED"}`))
				}
				an := answer{agent: agent, call: call}
				res, err := client.Do(req)
				if err == nil {
					an.body, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				an.err = err
				answers <- an
			}
		})
	}
	wg.Wait()
	close(answers)
	stopped := 0
	for an := range answers {
		if an.err != nil {
			t.Fatalf("agent %d, call %d: %v", an.agent, an.call+1, an.err)
		}
		a := readLoopAnswer(t, an.body)
		switch {
		case a.Repeated > 0 && !strings.Contains(a.Message, "from this address"):
			t.Errorf("agent %d, call %d: %q counts repeats without saying they were the address's", an.agent, an.call+1, a.Message)
		case an.agent >= 1 && an.agent <= 10 && (a.Repeated > 0 || strings.Contains(a.Message, "already rejected")):
			t.Errorf("agent %d sent a value of its own on call %d and was told %q", an.agent, an.call+1, a.Message)
		case an.agent == 0 && an.call > 0 && a.Repeated > 0 && strings.Contains(a.Message, "will not succeed now"):
			stopped++
		}
	}
	if stopped != calls-1 {
		t.Errorf("the looping agent was told to stop %d times of %d; want from its second call on", stopped, calls-1)
	}
}
