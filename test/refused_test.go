package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// refusalCodes are the codes signpost refuses a malformed head with, each
// counted in signpost_requests_refused_total: the front's, and a target
// of * on a method other than OPTIONS.
var refusalCodes = []string{"invalid_request_line", "invalid_header", "missing_host", "invalid_host", "invalid_framing", "invalid_request_target"}

// hasSeries reports whether samples hold the series name{labels}, labels
// given as pairs, whatever its value.
func hasSeries(samples []sample, name string, labels ...string) bool {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, s := range samples {
		if s.name == name && mapsEqual(s.labels, want) {
			return true
		}
	}
	return false
}

// TestRefusedHeadsAreLoggedAndCounted: a malformed request line, a
// missing Host and a value with control bytes, sent on raw connections,
// are each answered with signpost's 400, logged once with the code, the
// field, the value as the body echoes it and the caller's address, and
// counted under their code, whose series start at zero. No raw control
// byte reaches the log.
func TestRefusedHeadsAreLoggedAndCounted(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(*http.Request, []byte) string { return answer(200, "ok") })
	sp := startSignpost(t, ticketsConfig, up)
	samples := sp.scrape(t)
	for _, code := range refusalCodes {
		if !hasSeries(samples, "signpost_requests_refused_total", "code", code) {
			t.Errorf("signpost_requests_refused_total{code=%q} is not exported at start", code)
		}
	}
	for _, tc := range []struct{ name, raw, code, field, received, body string }{
		{"a space in the target", "GET /tickets/T 1 HTTP/1.1\r\nHost: api\r\n\r\n", "invalid_request_line", "request-line", "GET /tickets/T 1 HTTP/1.1",
			`{"error":"invalid_request_line","field":"request-line","message":"the request line must end with the protocol, HTTP/1.1, after one space; a space or control character in the target is written percent-encoded (%20), e.g. GET /tickets/T-1 HTTP/1.1","received":"GET /tickets/T 1 HTTP/1.1","retryable":false}`},
		{"no Host", "GET /tickets/T-1 HTTP/1.1\r\nAccept: application/json\r\n\r\n", "missing_host", "Host", "",
			`{"error":"missing_host","field":"Host","message":"an HTTP/1.1 request carries a Host field naming the service, e.g. Host: api.example.com","received":"","retryable":false}`},
		{"control bytes in a value", "GET /tickets/T-1 HTTP/1.1\r\nHost: api\r\nX-Note: a\x00b\x7f\x1b[2J\r\n\r\n", "invalid_header", "X-Note", `a\u0000b\u007f\u001b[2J`,
			`{"error":"invalid_header","field":"X-Note","message":"a field value holds no control character but tab: no NUL, CR, LF or DEL within it; percent-encode such bytes, e.g. X-Note: two words","received":"a\u0000b\u007f\u001b[2J","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dialSignpost(t, sp)
			res, body := roundTrip(t, c, br, "GET", tc.raw)
			if res.StatusCode != 400 || res.Header.Get("Content-Type") != jsonType || !res.Close || body != tc.body {
				t.Errorf("got %d %s (close %v) %s\nwant 400 %s, closing, %s", res.StatusCode, res.Header.Get("Content-Type"), res.Close, body, jsonType, tc.body)
			}
			line := sp.waitLog(t, "refused a malformed request", map[string]any{"code": tc.code, "field": tc.field, "received": tc.received,
				"remote_addr": c.LocalAddr().String()})
			if line["level"] != "WARN" || line["rule"] == "" {
				t.Errorf("log line %v; want a warning naming the rule", line)
			}
			sp.wantCounter(t, 1, "signpost_requests_refused_total", "code", tc.code)
		})
	}
	for _, b := range []byte(sp.stdout.String()) {
		if b < ' ' && b != '\n' || b == 0x7f {
			t.Fatalf("the log holds the control byte %#x", b)
		}
	}
}

// TestRefusalsInProblemJSON: under a rule file with format: problem+json,
// the front's refusals are Problem Details too.
func TestRefusalsInProblemJSON(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(*http.Request, []byte) string { return answer(200, "ok") })
	sp := startSignpost(t, "../configs/payments.yaml", up)
	for _, tc := range []struct{ name, raw, body string }{
		{"no Host", "GET /accounts/A-100200/payments HTTP/1.1\r\nAccept: application/json\r\n\r\n",
			`{"type":"about:blank","title":"Bad Request","status":400,"code":"missing_host","field":"Host","detail":"an HTTP/1.1 request carries a Host field naming the service, e.g. Host: api.example.com","received":"","retryable":false}`},
		{"no protocol", "GET /accounts\r\nHost: api\r\n\r\n",
			`{"type":"about:blank","title":"Bad Request","status":400,"code":"invalid_request_line","field":"request-line","detail":"the request line must be a method, a target and a protocol, separated by single spaces, e.g. GET /tickets/T-1 HTTP/1.1","received":"GET /accounts","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dialSignpost(t, sp)
			res, body := roundTrip(t, c, br, "GET", tc.raw)
			if res.StatusCode != 400 || res.Header.Get("Content-Type") != problemType || body != tc.body {
				t.Errorf("got %d %s %s\nwant 400 %s %s", res.StatusCode, res.Header.Get("Content-Type"), body, problemType, tc.body)
			}
		})
	}
}

// TestDeclaredSeriesAreTheOnesCounted: the rejection series signpost
// exports at zero when it starts are those a rejection counts in: after a
// rule's rewrite, its series reads 1, and no series was added.
func TestDeclaredSeriesAreTheOnesCounted(t *testing.T) {
	t.Parallel()
	up := respondingUpstream(t, func(*http.Request, []byte) string {
		const body = `{"error":"Invalid priority"}`
		return fmt.Sprintf("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	})
	sp := startSignpost(t, ticketsConfig, up)
	series := func() []string {
		var out []string
		for _, s := range sp.scrape(t) {
			if s.name == "signpost_rejections_total" {
				out = append(out, s.labels["route"]+" "+s.labels["code"]+" "+s.labels["field"])
			}
		}
		return out
	}
	before := series()
	if !hasSeries(sp.scrape(t), "signpost_rejections_total", "route", "create_ticket", "code", "invalid_priority", "field", "priority") {
		t.Fatalf("no zero series for create_ticket's invalid_priority at start; the series: %q", before)
	}
	got := send(t, "POST", sp.URL+"/tickets", []byte(`{"title":"Printer on fire","status":"open","priority":"urgent","customer_id":"C-1042"}`),
		"Content-Type", "application/json")
	if got.status != 400 || !strings.Contains(string(got.body), `"error":"invalid_priority"`) {
		t.Fatalf("answer %d %s; want the rule's invalid_priority", got.status, got.body)
	}
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "create_ticket", "code", "invalid_priority", "field", "priority")
	if after := series(); len(after) != len(before) {
		t.Errorf("the rejection added series: before %q, after %q", before, after)
	}
}
