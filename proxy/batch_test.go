package proxy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// TestDeclaredChecksThroughThePipeline sends faulty calls through the whole
// pipeline, in both validation modes and both formats: a value that breaks
// its declared constraint gets that constraint whatever rule matched; an
// existence error is batched with the other faults; an error no rule
// explains gets the declared fields' faults, counted and logged as a
// rejection; a batch names every faulty field and states each rule once.
func TestDeclaredChecksThroughThePipeline(t *testing.T) {
	const eventRule = `is required; must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z`
	var events strings.Builder
	events.WriteString(`{"field":"e01","code":"invalid_e01","message":"` + eventRule + `"}`)
	for _, n := range []string{"02", "03", "04", "05", "06", "07", "08", "09", "10"} { // limits.errors: 10 listed
		events.WriteString(`,{"field":"e` + n + `","code":"invalid_e` + n + `","same_as":"e01"}`)
	}
	for _, tc := range []struct {
		name           string
		method, target string
		body           string
		status         int
		upstream       string
		// after is the answer in after mode, with the upstream's status;
		// before, when not empty, the answer in before mode, with 400 and
		// without calling the upstream.
		after, before string
		afterStatus   int
		// rejected is a fault the answer counts, as code and field.
		rejected [2]string
	}{
		{name: "a broken pattern under an existence rule", method: "GET", target: "/tickets/t-8841",
			status: 404, upstream: `{"error":"No such ticket"}`, afterStatus: 404,
			after:    `{"error":"invalid_ticket_id","field":"ticket_id","message":"must match the pattern ^T-[0-9]+$, e.g. T-8841","received":"t-8841","retryable":false}`,
			before:   `{"error":"invalid_ticket_id","field":"ticket_id","message":"must match the pattern ^T-[0-9]+$, e.g. T-8841","received":"t-8841","retryable":false}`,
			rejected: [2]string{"invalid_ticket_id", "ticket_id"}},
		{name: "an unknown customer beside a title too long", method: "POST", target: "/tickets",
			body:   `{"title":"Export fails on every large report","status":"open","customer_id":"C-9999"}`,
			status: 404, upstream: `{"error":"No such customer"}`, afterStatus: 404,
			after: `{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"title","code":"invalid_title","message":"must be a string of at most 20 characters","received":"Export fails on every large report"},` +
				`{"field":"customer_id","code":"unknown_customer","message":"no customer matches \"C-9999\"","received":"C-9999"}],"retryable":false}`,
			before:   `{"error":"invalid_title","field":"title","message":"must be a string of at most 20 characters","received":"Export fails on every large report","retryable":false}`,
			rejected: [2]string{"invalid_title", "title"}},
		{name: "no rule for 400, a number for a uuid", method: "POST", target: "/users", body: `{"user_id":42,"role":"admin"}`,
			status: 400, upstream: `{"error":"bad request"}`, afterStatus: 400,
			after:    `{"error":"invalid_user_id","field":"user_id","message":"must be a JSON string, not a number; must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b","upstream_message":"bad request","received":42,"retryable":false}`,
			before:   `{"error":"invalid_user_id","field":"user_id","message":"must be a JSON string, not a number; must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b","received":42,"retryable":false}`,
			rejected: [2]string{"invalid_user_id", "user_id"}},
		{name: "no rule for 400, a form-encoded body", method: "POST", target: "/users", body: `user_id=42&role=admin`,
			status: 400, upstream: `{"error":"bad request"}`, afterStatus: 400,
			after:    `{"error":"invalid_json_body","message":"the request body is form-encoded, not JSON; send one JSON object with the fields user_id, role","retryable":false}`,
			before:   `{"error":"invalid_json_body","message":"the request body is form-encoded, not JSON; send one JSON object with the fields user_id, role","retryable":false}`,
			rejected: [2]string{"invalid_json_body", ""}},
		{name: "twelve fields missing, one rule", method: "POST", target: "/events", body: `{}`,
			status: 422, upstream: `{"error":"bad"}`, afterStatus: 422,
			after:    `{"error":"validation_failed","message":"12 fields are invalid, 10 listed here with their rules and 2 more named in unlisted; fix them all, then repeat the call.","upstream_message":"bad","errors":[` + events.String() + `],"unlisted":["e11","e12"],"retryable":false}`,
			before:   `{"error":"validation_failed","message":"12 fields are invalid, 10 listed here with their rules and 2 more named in unlisted; fix them all, then repeat the call.","errors":[` + events.String() + `],"unlisted":["e11","e12"],"retryable":false}`,
			rejected: [2]string{"invalid_e12", "e12"}},
	} {
		for _, mode := range []rules.Mode{rules.ValidateAfter, rules.ValidateBefore} {
			for _, format := range []rules.BodyFormat{rules.FormatJSON, rules.FormatProblem} {
				t.Run(tc.name+"/"+string(mode)+"/"+string(format), func(t *testing.T) {
					cfg, err := rules.Load("testdata/batch.yaml")
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range cfg.Routes {
						r.Validate, r.Format = mode, format
					}
					var log bytes.Buffer
					reg := prometheus.NewRegistry()
					up := &roundTrip{status: tc.status, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(tc.upstream)}
					calls := 0
					counted := roundTripFunc(func(r *http.Request) (*http.Response, error) { calls++; return up.RoundTrip(r) })
					p, err := New(cfg, Options{Transport: counted, Metrics: metrics.New(reg), Log: slog.New(slog.NewJSONHandler(&log, nil))})
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					f := &fixture{p: p, reg: reg}
					w := httptest.NewRecorder()
					p.ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body)))
					want, status, called := tc.after, tc.afterStatus, true
					if mode == rules.ValidateBefore {
						want, status, called = tc.before, 400, false
					}
					ctype := "application/json"
					if format == rules.FormatProblem {
						ctype = "application/problem+json"
						want = `{"type":"about:blank","title":"` + http.StatusText(status) + `","status":` + itoa(status) + `,"code":` +
							strings.Replace(strings.TrimPrefix(want, `{"error":`), `,"message":`, `,"detail":`, 1)
					}
					if w.Code != status || w.Body.String() != want {
						t.Errorf("got %d %s\nwant %d %s", w.Code, w.Body, status, want)
					}
					if got := w.Result().Header.Get("Content-Type"); got != ctype {
						t.Errorf("Content-Type %q; want %q", got, ctype)
					}
					if (calls > 0) != called {
						t.Errorf("upstream called %d times; want called: %t", calls, called)
					}
					if c := f.counter(t, "signpost_rejections_total", "code", tc.rejected[0], "field", tc.rejected[1]); c != 1 {
						t.Errorf("rejections of %v = %v; want 1", tc.rejected, c)
					}
					if c := f.counter(t, "signpost_upstream_errors_unmatched_total"); c != 0 {
						t.Errorf("unmatched errors = %v; want 0: the checks explain it", c)
					}
					var line struct{ Msg, Code string }
					for l := range strings.Lines(log.String()) {
						if json.Unmarshal([]byte(l), &line) == nil && line.Msg != "request" {
							break
						}
					}
					wantMsg := "rewrote upstream error"
					if !called {
						wantMsg = "rejected before the upstream"
					}
					if line.Msg != wantMsg {
						t.Errorf("log line %q; want %q in:\n%s", line.Msg, wantMsg, log.String())
					}
				})
			}
		}
	}
}

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
