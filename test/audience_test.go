package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// javaTrace is an application server's HTML error page for a crash, with
// a stack trace and an internal host name.
const javaTrace = `<html><head><title>HTTP Status 500 - Internal Server Error</title></head><body>` +
	`<h1>HTTP Status 500 - Internal Server Error</h1><pre>java.lang.NullPointerException: Cannot invoke "com.example.tickets.Ticket.getAssignee()" because "ticket" is null
	at com.example.tickets.TicketService.update(TicketService.java:142)
	at com.example.tickets.TicketController.patch(TicketController.java:57)
	at jdk.internal.reflect.GeneratedMethodAccessor12.invoke(Unknown Source)
Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available (tickets-db-7.internal:5432)
</pre></body></html>
`

// TestStackTraceStaysInLog sends an HTML 500 with a Java stack trace
// through a route with rules, none for 500: the agent gets the status and
// a wrapped body with no trace of the trace; the operator's log line has
// the upstream body, under the request id the agent's answer carries.
func TestStackTraceStaysInLog(t *testing.T) {
	t.Parallel()
	up := cannedUpstream(t, map[string]canned{
		"PATCH /tickets/T-8841": {status: 500, header: []string{"Content-Type", "text/html; charset=utf-8"}, body: []byte(javaTrace)},
	})
	sp := startSignpost(t, ticketsConfig, up.URL)

	got := send(t, "PATCH", sp.URL+"/tickets/T-8841", []byte(`{"status":"open"}`), "Content-Type", "application/json")
	wantJSONError(t, got, http.StatusInternalServerError, failedBody("500 Internal Server Error"))
	for _, leak := range []string{"Exception", "at com.", "<html", "java", "tickets-db-7", "5432", "Hikari"} {
		if strings.Contains(string(got.body), leak) {
			t.Errorf("the agent's body holds %q: %s", leak, got.body)
		}
	}
	id := wantRequestID(t, got)
	line := sp.logFor(t, "upstream error unmatched", id)
	if line["route"] != "update_ticket" || line["status"] != float64(500) {
		t.Errorf("log line %v, want route update_ticket and status 500", line)
	}
	if line["upstream_body"] != javaTrace {
		t.Errorf("log line upstream_body = %q, want the upstream's page with its trace", line["upstream_body"])
	}
	if line["request_id"] != id {
		t.Errorf("log line request_id = %v, the answer's X-Request-Id %q", line["request_id"], id)
	}
	sp.wantCounter(t, 1, "signpost_upstream_errors_unmatched_total", "route", "update_ticket", "status", "500")
}

// TestTwoAudiences checks that a rewrite writes two texts keyed by one
// code: the agent's body has the code, field, value and rule and nothing
// of the upstream's internals; the operator's log line has the route,
// code, field, the value as a JSON value of its type, the upstream's
// status and body, and the request id.
func TestTwoAudiences(t *testing.T) {
	t.Parallel()
	const statusBody = `{"error":"Invalid status","detail":"StatusValidator.java:88 rejected OPEN","node":"tickets-api-7.internal","trace_id":"9f1c2e"}`
	const priorityBody = `{"error":"Invalid priority","detail":"PriorityEnum.valueOf(7) failed","node":"tickets-api-7.internal"}`
	up := cannedUpstream(t, map[string]canned{
		"PATCH /tickets/T-8841": {status: 400, header: []string{"Content-Type", "application/json"}, body: []byte(statusBody)},
		"POST /tickets":         {status: 400, header: []string{"Content-Type", "application/json"}, body: []byte(priorityBody)},
	})
	sp := startSignpost(t, ticketsConfig, up.URL)

	for _, tt := range []struct {
		name, method, path, body string
		want                     string
		upstream                 string
		log                      map[string]any
	}{
		{
			name: "string value", method: "PATCH", path: "/tickets/T-8841", body: `{"status":"OPEN"}`,
			want:     `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`,
			upstream: statusBody,
			log:      map[string]any{"route": "update_ticket", "code": "invalid_status", "field": "status", "received": "OPEN", "status": float64(400)},
		},
		{
			name: "number value", method: "POST", path: "/tickets", body: `{"title":"t","status":"open","priority":7,"customer_id":"C-1042"}`,
			want:     `{"error":"invalid_priority","field":"priority","message":"allowed values: p1, p2, p3","received":7,"retryable":false}`,
			upstream: priorityBody,
			log:      map[string]any{"route": "create_ticket", "code": "invalid_priority", "field": "priority", "received": float64(7), "status": float64(400)},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := send(t, tt.method, sp.URL+tt.path, []byte(tt.body), "Content-Type", "application/json")
			wantJSONError(t, got, http.StatusBadRequest, tt.want)
			for _, leak := range []string{"java", "internal", "9f1c2e", "Validator", "valueOf", "detail", "upstream"} {
				if strings.Contains(string(got.body), leak) {
					t.Errorf("the agent's body holds %q: %s", leak, got.body)
				}
			}
			line := sp.logFor(t, "rewrote upstream error", wantRequestID(t, got))
			for k, v := range tt.log {
				if line[k] != v {
					t.Errorf("log line %s = %#v, want %#v", k, line[k], v)
				}
			}
			if line["upstream_body"] != tt.upstream {
				t.Errorf("log line upstream_body = %#v, want the upstream's body %s", line["upstream_body"], tt.upstream)
			}
		})
	}
}

// TestBrokenErrorBodyWrapped sends an error page with a stack trace that
// breaks off: the upstream resets the connection mid-body, or stalls past
// --upstream-timeout. Under the default wrap policy, docs/response-contract.md
// promises that an error no rule matches gets signpost's own body, and that
// when signpost cannot get an answer it answers itself, never with an empty
// body: so the agent must get a structured answer (the 500 wrapped as
// upstream_failed, or a 502), soon, and no byte of the trace.
func TestBrokenErrorBodyWrapped(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	head := javaTrace[:len(javaTrace)/2]
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/tickets/T-1": // the connection is reset mid-body
			c, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("upstream: %v", err)
				return
			}
			defer c.Close()
			fmt.Fprintf(buf, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(javaTrace), head)
			_ = buf.Flush()
		case "/tickets/T-2": // the body stalls
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", fmt.Sprint(len(javaTrace)))
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, head)
			_ = http.NewResponseController(w).Flush()
			g.wait(r.Context())
		}
	}), g)
	sp := startSignpost(t, ticketsConfig, up.URL, "--upstream-timeout", "500ms")

	for _, tt := range []struct{ name, ticket string }{
		{"reset mid-body", "T-1"},
		{"stalled past the timeout", "T-2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("PATCH", sp.URL+"/tickets/"+tt.ticket, strings.NewReader(`{"status":"open"}`))
			start := time.Now()
			res, err := client.Do(req)
			if err != nil {
				t.Fatalf("BUG: PATCH /tickets/%s: no answer at all (%v) after %v; want signpost's own JSON body", tt.ticket, err, time.Since(start).Round(time.Millisecond))
			}
			defer res.Body.Close()
			body, err := io.ReadAll(bufio.NewReader(res.Body))
			if d := time.Since(start); d > waitTimeout {
				t.Errorf("answered after %v", d)
			}
			for _, leak := range []string{"Exception", "at com.", "<html"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("BUG: the agent got %q of the upstream's trace: %q", leak, clip(body))
				}
			}
			var e struct {
				Error     string `json:"error"`
				Retryable *bool  `json:"retryable"`
			}
			if err != nil || res.Header.Get("Content-Type") != jsonType || json.Unmarshal(body, &e) != nil ||
				!slices.Contains([]string{"upstream_failed", "upstream_unavailable"}, e.Error) || e.Retryable == nil {
				t.Errorf("BUG: %d %q (read error %v); want a complete JSON body, upstream_failed or upstream_unavailable", res.StatusCode, clip(body), err)
			}
		})
	}
}
