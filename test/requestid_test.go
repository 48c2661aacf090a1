package test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// TestRequestID checks the id that ties a call to the upstream's logs and
// to signpost's: a caller's sane X-Request-Id is forwarded and returned
// unchanged; a missing or unsafe one is replaced by a generated id, which
// the upstream gets and the caller sees. Every answer carries one, whether
// passed through, rewritten, wrapped, or written by signpost alone.
func TestRequestID(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 64)
	api := ticketapi.New().Handler()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids := r.Header.Values(requestIDHeader)
		if len(ids) != 1 {
			t.Errorf("upstream got X-Request-Id %q, want exactly one", ids)
		}
		seen <- strings.Join(ids, ",")
		api.ServeHTTP(w, r)
	}))
	sp := startSignpost(t, ticketsConfig, up.URL)
	before := startSignpost(t, "testdata/tickets_before.yaml", up.URL)
	down := startSignpost(t, ticketsConfig, refusingURL(t))

	calls := []struct {
		name, method, path, body string
		status                   int
		sp                       *signpost
		reaches                  bool // the upstream sees the call
	}{
		{"success", "GET", "/tickets/T-8841", ``, 200, sp, true},
		{"rewritten", "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400, sp, true},
		{"wrapped", "POST", "/tickets", `{"status":"open"}`, 400, sp, true},
		{"unrouted", "GET", "/nowhere", ``, 404, sp, true},
		{"rejected before the upstream", "POST", "/tickets", `{"title":"x"}`, 400, before, false},
		{"upstream unavailable", "GET", "/tickets/T-8841", ``, 502, down, false},
	}
	sane := strings.Repeat("a", 128)
	for _, tt := range []struct {
		name, sent string // "" sends no header
		keep       bool
	}{
		{"absent", "", false},
		{"empty", " ", false},
		{"sane token", "agent-7f3a.call:12/retry+1=_x", true},
		{"128 characters", sane, true},
		{"129 characters", sane + "a", false},
		{"300 characters", strings.Repeat("x", 300), false},
		{"spaces", "id with spaces", false},
		{"not ASCII", "café-1", false},
		{"a header smuggled in", "id-1, X-Admin: true", false},
		{"JSON", `{"id":1}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, c := range calls {
				var body io.Reader = http.NoBody
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				req, _ := http.NewRequest(c.method, c.sp.URL+c.path, body)
				if tt.sent != "" {
					req.Header.Set(requestIDHeader, tt.sent)
				}
				res := do(t, req)
				if res.status != c.status {
					t.Errorf("%s: status %d, want %d: %s", c.name, res.status, c.status, res.body)
				}
				id := wantRequestID(t, res)
				switch {
				case tt.keep && id != tt.sent:
					t.Errorf("%s: X-Request-Id = %q, want the caller's %q kept", c.name, id, tt.sent)
				case !tt.keep && id == tt.sent:
					t.Errorf("%s: the caller's unsafe X-Request-Id %q was kept", c.name, tt.sent)
				case !tt.keep && got[id]:
					t.Errorf("%s: generated X-Request-Id %q twice", c.name, id)
				}
				got[id] = true
				if c.reaches {
					select {
					case upID := <-seen:
						if upID != id {
							t.Errorf("%s: the upstream got X-Request-Id %q, the caller %q", c.name, upID, id)
						}
					default:
						t.Errorf("%s: the upstream did not see the call", c.name)
					}
				}
			}
			select {
			case extra := <-seen:
				t.Errorf("the upstream saw a call with id %q that should not have reached it", extra)
			default:
			}
		})
	}
	// The operator's line for a rewrite carries the id the caller got.
	res := send(t, "PATCH", sp.URL+"/tickets/T-8841", []byte(`{"status":"OPEN"}`), requestIDHeader, "trace-42")
	select {
	case <-seen:
	case <-time.After(waitTimeout):
		t.Errorf("the upstream did not see the call within %v", waitTimeout)
	}
	if id := wantRequestID(t, res); id != "trace-42" {
		t.Fatalf("X-Request-Id = %q, want trace-42", id)
	}
	sp.logFor(t, "rewrote upstream error", "trace-42")
}

// TestRequestIDUpstreamOwn puts signpost in front of an upstream that
// answers with an X-Request-Id of its own instead of the one it was sent.
// docs/response-contract.md's contract: every response carries the
// caller's sane id (else a new one), the same id the upstream got and the
// log line holds; so an operator given the id from an agent's answer finds
// signpost's line.
func TestRequestIDUpstreamOwn(t *testing.T) {
	t.Parallel()
	up := cannedUpstream(t, map[string]canned{
		"GET /tickets/T-8841":   {status: 200, header: []string{"Content-Type", "application/json", requestIDHeader, "up-77"}, body: []byte(`{"ticket_id":"T-8841"}`)},
		"PATCH /tickets/T-8841": {status: 400, header: []string{"Content-Type", "application/json", requestIDHeader, "up-78"}, body: []byte(`{"error":"Invalid status"}`)},
		"GET /nowhere":          {status: 404, header: []string{"Content-Type", "text/plain", requestIDHeader, "up-79"}, body: []byte("not found")},
	})
	sp := startSignpost(t, ticketsConfig, up.URL)
	for _, tt := range []struct {
		name, method, path, body, sent, log string
	}{
		{"passed through", "GET", "/tickets/T-8841", ``, "trace-1", ""},
		{"rewritten", "PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, "trace-2", "rewrote upstream error"},
		{"wrapped", "GET", "/nowhere", ``, "trace-3", "upstream error unmatched"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			got := send(t, tt.method, sp.URL+tt.path, body, requestIDHeader, tt.sent)
			if id := wantRequestID(t, got); id != tt.sent {
				t.Errorf("BUG: X-Request-Id = %q, want the caller's %q, which the upstream got and the log line holds", id, tt.sent)
			}
			if tt.log != "" {
				sp.logFor(t, tt.log, tt.sent)
			}
		})
	}
}
