package test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// closeUnassigned is the answer to closing T-8842, which has no assignee:
// the prerequisite call, with the ticket id filled in from the path.
const closeUnassigned = `{"error":"ticket_unassigned","message":"an unassigned ticket cannot be closed; call assign_ticket first",` +
	`"next_call":{"call":"assign_ticket","arguments":{"ticket_id":"T-8842"}},"retryable":false}`

// unknownCustomer is the answer to creating a ticket for C-9999, which the
// ticket API does not know: the value sent, JSON-quoted in the message, and
// the call that resolves a customer id.
const unknownCustomer = `{"error":"unknown_customer","field":"customer_id",` +
	`"message":"no customer matches \"C-9999\"; resolve an id with search_customers(query)","received":"C-9999",` +
	`"next_call":{"call":"search_customers","arguments":{"query":"C-9999"}},"retryable":false}`

// TestNextCallCloseBeforeAssign closes an unassigned ticket: the ticket
// API's bare 409 becomes a body naming assign_ticket with the ticket id
// filled in, and following it (assign, then close again) succeeds.
func TestNextCallCloseBeforeAssign(t *testing.T) {
	t.Parallel()
	api := newUpstream(t, ticketapi.New().Handler())
	sp := startSignpost(t, ticketsConfig, api.URL)

	got := send(t, "PATCH", sp.URL+"/tickets/T-8842", []byte(`{"status":"closed"}`), "Content-Type", "application/json")
	wantJSONError(t, got, http.StatusConflict, closeUnassigned)
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "update_ticket", "code", "ticket_unassigned", "field", "")
	line := sp.logFor(t, "rewrote upstream error", wantRequestID(t, got))
	if line["code"] != "ticket_unassigned" || line["status"] != float64(409) || line["upstream_body"] != `{"error":"Cannot close ticket"}` {
		t.Errorf("log line %v, want code ticket_unassigned, status 409 and the upstream's body", line)
	}

	// Follow next_call: its call and arguments, plus the assignee the
	// agent chooses, then repeat the call that failed.
	assign := send(t, "POST", sp.URL+"/tickets/T-8842/assign", []byte(`{"assignee":"eng-7"}`), "Content-Type", "application/json")
	if assign.status != http.StatusOK || !strings.Contains(string(assign.body), `"assignee":"eng-7"`) {
		t.Fatalf("assign_ticket as next_call named it: %d %s, want 200", assign.status, assign.body)
	}
	closed := send(t, "PATCH", sp.URL+"/tickets/T-8842", []byte(`{"status":"closed"}`), "Content-Type", "application/json")
	if closed.status != http.StatusOK || !strings.Contains(string(closed.body), `"status":"closed"`) {
		t.Errorf("closing after assign_ticket: %d %s, want 200 with the closed ticket", closed.status, closed.body)
	}
	if n := sp.total(t, "signpost_upstream_errors_unmatched_total"); n != 0 {
		t.Errorf("signpost_upstream_errors_unmatched_total = %v, want 0", n)
	}
}

// TestLookupUnknownCustomer creates a ticket for a customer the ticket API
// does not know: the 404 names the value sent and the lookup that resolves
// an id, as next_call with the value as its query. Following it works
// against the ticket API, and so does the ticket once a real id is found.
func TestLookupUnknownCustomer(t *testing.T) {
	t.Parallel()
	api := newUpstream(t, ticketapi.New().Handler())
	sp := startSignpost(t, ticketsConfig, api.URL)

	got := send(t, "POST", sp.URL+"/tickets",
		[]byte(`{"title":"Login loops","status":"open","priority":"p1","customer_id":"C-9999"}`), "Content-Type", "application/json")
	wantJSONError(t, got, http.StatusNotFound, unknownCustomer)
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "create_ticket", "code", "unknown_customer", "field", "customer_id")

	// next_call as given: the id sent matches no customer by id or name.
	found := send(t, "GET", sp.URL+"/customers?"+url.Values{"query": {"C-9999"}}.Encode(), nil)
	if found.status != http.StatusOK || string(found.body) != `{"customers":[]}` {
		t.Errorf("search_customers(query: C-9999): %d %s, want 200 and no customers", found.status, found.body)
	}
	// The same call with the name the user gave resolves the id.
	found = send(t, "GET", sp.URL+"/customers?"+url.Values{"query": {"acme"}}.Encode(), nil)
	if want := `{"customers":[{"customer_id":"C-1042","name":"Acme Corp"}]}`; found.status != http.StatusOK || string(found.body) != want {
		t.Fatalf("search_customers(query: acme): %d %s, want 200 %s", found.status, found.body, want)
	}
	created := send(t, "POST", sp.URL+"/tickets",
		[]byte(`{"title":"Login loops","status":"open","priority":"p1","customer_id":"C-1042"}`), "Content-Type", "application/json")
	if created.status != http.StatusCreated {
		t.Errorf("create_ticket with the resolved id: %d %s, want 201", created.status, created.body)
	}
}
