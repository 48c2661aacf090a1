package test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// threeFaults is a create_ticket call with three declared fields at fault:
// status, priority and due_at. The ticket API, failing fast, names only
// the first.
const threeFaults = `{"title":"Export fails","status":"ACTIVE","priority":"urgent","due_at":"next Friday","customer_id":"C-1042"}`

// threeFaultsBody lists all three, in declared order.
const threeFaultsBody = `{"error":"validation_failed","message":"3 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
	`{"field":"status","code":"invalid_status","message":"allowed values: open, pending, closed","received":"ACTIVE"},` +
	`{"field":"priority","code":"invalid_priority","message":"allowed values: p1, p2, p3","received":"urgent"},` +
	`{"field":"due_at","code":"invalid_due_at","message":"must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z","received":"next Friday"}` +
	`],"retryable":false}`

// TestBatchedFaults sends one create_ticket call with three faults in both
// validation modes. After (configs/tickets.yaml as shipped): the ticket API
// rejects the status, and the answer lists all three faults. Before
// (testdata/tickets_before.yaml): the same answer, and the upstream never
// sees the call. In both, each fault is counted and the operator's log line
// names every field; the corrected call then succeeds.
func TestBatchedFaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode, config, msg string
		upstreamCalls     int64 // of the faulty call
	}{
		{"after", ticketsConfig, "rewrote upstream error", 1},
		{"before", "testdata/tickets_before.yaml", "rejected before the upstream", 0},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			api := &counting{h: ticketapi.New().Handler()}
			up := newUpstream(t, api)
			sp := startSignpost(t, tt.config, up.URL)

			got := send(t, "POST", sp.URL+"/tickets", []byte(threeFaults), "Content-Type", "application/json")
			wantJSONError(t, got, http.StatusBadRequest, threeFaultsBody)
			if n := api.n.Load(); n != tt.upstreamCalls {
				t.Errorf("the upstream saw %d requests, want %d", n, tt.upstreamCalls)
			}
			for _, f := range [][2]string{{"status", "invalid_status"}, {"priority", "invalid_priority"}, {"due_at", "invalid_due_at"}} {
				sp.wantCounter(t, 1, "signpost_rejections_total", "route", "create_ticket", "code", f[1], "field", f[0])
			}
			line := sp.logFor(t, tt.msg, wantRequestID(t, got))
			if line["code"] != "validation_failed" || line["route"] != "create_ticket" ||
				fmt.Sprint(line["fields"]) != "[status priority due_at]" {
				t.Errorf("log line %v, want code validation_failed on create_ticket with fields [status priority due_at]", line)
			}
			if tt.mode == "after" && line["upstream_body"] != `{"error":"Invalid status"}` {
				t.Errorf("log line upstream_body = %q, want the ticket API's own answer", line["upstream_body"])
			}

			fixed := `{"title":"Export fails","status":"open","priority":"p2","due_at":"2026-03-13T17:00:00Z","customer_id":"C-1042"}`
			ok := send(t, "POST", sp.URL+"/tickets", []byte(fixed), "Content-Type", "application/json")
			if ok.status != http.StatusCreated || !strings.Contains(string(ok.body), `"ticket_id":"T-8843"`) {
				t.Errorf("corrected call: %d %s, want 201 with ticket T-8843", ok.status, ok.body)
			}
			if n := api.n.Load(); n != tt.upstreamCalls+1 {
				t.Errorf("the upstream saw %d requests in all, want %d", n, tt.upstreamCalls+1)
			}
		})
	}
}

// shipmentFields are testdata/many_fields.yaml's twelve fields, in declared
// order, each with the message a missing value gets.
var shipmentFields = [][2]string{
	{"sender_name", "is required; must be a string of at most 80 characters"},
	{"sender_email", "is required; must be an email address, e.g. ada@example.com"},
	{"sender_country", "is required; allowed values: DE, FR, NL"},
	{"recipient_name", "is required; must be a string of at most 80 characters"},
	{"recipient_email", "is required; must be an email address, e.g. ada@example.com"},
	{"recipient_country", "is required; allowed values: DE, FR, NL"},
	{"weight_grams", "is required; must be an integer from 1 to 30000, e.g. 1"},
	{"length_cm", "is required; must be an integer from 1 to 120, e.g. 1"},
	{"width_cm", "is required; must be an integer from 1 to 80, e.g. 1"},
	{"height_cm", "is required; must be an integer from 1 to 80, e.g. 1"},
	{"ship_on", "is required; must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11"},
	{"service", "is required; allowed values: standard, express"},
}

// cappedBody is the answer to a call missing the first n shipment fields
// when a body lists at most max entries: each rule is stated by the first
// field that breaks it and referred to by the later ones (same_as); the
// fields that state a rule are listed first, up to max, then those that
// refer to a listed one while room is left; the others are named in
// unlisted, every list in declared order.
func cappedBody(n, max int) string {
	fields := shipmentFields[:n]
	stater := map[string]string{} // rule -> the first field breaking it
	for _, f := range fields {
		if _, ok := stater[f[1]]; !ok {
			stater[f[1]] = f[0]
		}
	}
	listed := map[string]bool{}
	for _, f := range fields {
		if stater[f[1]] == f[0] && len(listed) < max {
			listed[f[0]] = true
		}
	}
	for _, f := range fields {
		if stater[f[1]] != f[0] && listed[stater[f[1]]] && len(listed) < max {
			listed[f[0]] = true
		}
	}
	var entries, unlisted []string
	for _, f := range fields {
		code := "invalid_" + f[0]
		switch by := stater[f[1]]; {
		case !listed[f[0]]:
			unlisted = append(unlisted, `"`+f[0]+`"`)
		case by != f[0]:
			entries = append(entries, `{"field":"`+f[0]+`","code":"`+code+`","same_as":"`+by+`"}`)
		default:
			entries = append(entries, `{"field":"`+f[0]+`","code":"`+code+`","message":"`+f[1]+`"}`)
		}
	}
	if len(unlisted) == 0 {
		return fmt.Sprintf(`{"error":"validation_failed","message":"%d fields are invalid; fix each one listed, then repeat the call.","errors":[%s],"retryable":false}`,
			n, strings.Join(entries, ","))
	}
	return fmt.Sprintf(`{"error":"validation_failed","message":"%d fields are invalid, %d listed here with their rules and %d more named in unlisted; fix them all, then repeat the call.","errors":[%s],"unlisted":[%s],"retryable":false}`,
		n, len(entries), len(unlisted), strings.Join(entries, ","), strings.Join(unlisted, ","))
}

// TestBatchCapped checks the cap on a batch, in before mode: eleven or
// twelve faults name every field, each rule stated once, and the message
// counts them all; limits.errors caps the entries listed, those stating a
// rule first, and names the fields past it. The upstream never sees a
// call.
func TestBatchCapped(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("upstream got %s %s, which has fields at fault", r.Method, r.URL.Path)
	}))
	def := startSignpost(t, "testdata/many_fields.yaml", up.URL)
	three := startSignpost(t, withSettings(t, "testdata/many_fields.yaml", "limits: {errors: 3}"), up.URL)

	for _, tt := range []struct {
		name string
		sp   *signpost
		body string
		n    int // faults
		max  int
	}{
		{"eleven, default cap", def, `{"service":"standard"}`, 11, 10},
		{"twelve, default cap", def, `{}`, 12, 10},
		{"eleven, errors: 3", three, `{"service":"standard"}`, 11, 3},
		{"twelve, errors: 3", three, `{}`, 12, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := send(t, "POST", tt.sp.URL+"/shipments", []byte(tt.body), "Content-Type", "application/json")
			wantJSONError(t, got, http.StatusBadRequest, cappedBody(tt.n, tt.max))
		})
	}

	// Under the cap, every fault is listed and the message says so.
	got := send(t, "POST", three.URL+"/shipments", []byte(
		`{"sender_name":"Ada","sender_email":"ada@example.com","sender_country":"de","recipient_name":"Bo","recipient_email":"bo@example.com",`+
			`"recipient_country":"NL","weight_grams":"5","length_cm":10,"width_cm":10,"height_cm":10,"ship_on":"2026-03-11","service":"standard"}`))
	wantJSONError(t, got, http.StatusBadRequest, `{"error":"validation_failed","message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[`+
		`{"field":"sender_country","code":"invalid_sender_country","message":"allowed values: DE, FR, NL","received":"de"},`+
		`{"field":"weight_grams","code":"invalid_weight_grams","message":"must be a JSON number, not a string; must be an integer from 1 to 30000, e.g. 1","received":"5"}],"retryable":false}`)

	line := def.waitLog(t, "rejected before the upstream", map[string]any{"route": "create_shipment"})
	if fields, _ := line["fields"].([]any); len(fields) == 0 || !slices.Contains(fields, any("sender_name")) {
		t.Errorf("log line %v does not name the fields at fault", line)
	}
}
