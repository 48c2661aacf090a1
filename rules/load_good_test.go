package rules_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// mustLoad loads a rule file that must be free of problems.
func mustLoad(tb testing.TB, path string) *rules.Config {
	tb.Helper()
	cfg, err := rules.Load(path)
	if err != nil {
		tb.Fatalf("Load(%s):\n%v", path, err)
	}
	return cfg
}

// mustParse parses rule-file text that must be free of problems.
func mustParse(tb testing.TB, text string) *rules.Config {
	tb.Helper()
	cfg, err := rules.Parse("inline.yaml", []byte(text))
	if err != nil {
		tb.Fatalf("Parse:\n%v", err)
	}
	return cfg
}

// summary renders the compiled model one line per setting, route, field and
// error rule, so that a test states all of it at once.
func summary(cfg *rules.Config) string {
	var b strings.Builder
	upstream := "none"
	if cfg.Upstream != nil {
		upstream = cfg.Upstream.String()
	}
	fmt.Fprintf(&b, "upstream %s listen %s admin %s\n", upstream, cfg.Listen, cfg.Admin)
	fmt.Fprintf(&b, "limits error_body=%d request_body=%d received=%d errors=%d\n", cfg.Limits.ErrorBody, cfg.Limits.RequestBody, cfg.Limits.Received, cfg.Limits.Errors)
	fmt.Fprintf(&b, "format %s unmatched %s\n", cfg.Format, cfg.Unmatched)
	for _, r := range cfg.Routes {
		fmt.Fprintf(&b, "route %s %s %s @%d:%d body=%t validate=%s format=%s unmatched=%s", r.Name, r.Method, r.Path, r.Pos.Line, r.Pos.Column, r.HasBodyFields(), r.Validate, r.Format, r.Unmatched)
		if r.Description != "" {
			fmt.Fprintf(&b, " description=%q", r.Description)
		}
		b.WriteString("\n")
		for _, f := range r.Fields {
			req := ""
			if f.Required {
				req = " required"
			}
			if f.Description != "" {
				req += fmt.Sprintf(" description=%q", f.Description)
			}
			fmt.Fprintf(&b, "  field %s in=%s key=%s%s @%d:%d: %s\n", f.Name, f.In, f.Key, req, f.Pos.Line, f.Pos.Column, f.Rule)
		}
		for _, e := range r.Errors {
			m := e.Match
			fmt.Fprintf(&b, "  error[%d] @%d:%d status=%s", e.Index, e.Pos.Line, e.Pos.Column, m.Status)
			if m.JSON != "" {
				fmt.Fprintf(&b, " json=%s", m.JSON)
			}
			if m.Equals != nil {
				fmt.Fprintf(&b, " equals=%q", *m.Equals)
			}
			if m.Contains != nil {
				fmt.Fprintf(&b, " contains=%q", *m.Contains)
			}
			if m.Regex != nil {
				fmt.Fprintf(&b, " regex=%s", m.Regex)
			}
			if m.Body != nil {
				fmt.Fprintf(&b, " body=%s", m.Body)
			}
			fmt.Fprintf(&b, " -> %s", e.Code)
			if e.Field != nil {
				fmt.Fprintf(&b, " field=%s", e.Field.Name)
				if r.Field(e.Field.Name) != e.Field {
					b.WriteString(" (not the route's own field)")
				}
			}
			if e.Message != "" {
				fmt.Fprintf(&b, " message=%q", e.Message)
			}
			if e.Retryable != nil {
				fmt.Fprintf(&b, " retryable=%t", *e.Retryable)
			}
			if e.RetryAfter > 0 {
				fmt.Fprintf(&b, " retry_after=%d", e.RetryAfter)
			}
			if c := e.NextCall; c != nil {
				fmt.Fprintf(&b, " next_call=%s", c.Route.Name)
				for _, a := range c.Args {
					fmt.Fprintf(&b, " %s<-%s", a.Name, a.From.Name)
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func TestLoadGood(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"../configs/tickets.yaml", `
upstream http://127.0.0.1:8081 listen 127.0.0.1:8080 admin 127.0.0.1:9090
limits error_body=65536 request_body=1048576 received=64 errors=10
format json unmatched wrap
route get_ticket GET /tickets/{ticket_id} @8:3 body=false validate=after format=json unmatched=wrap description="Read one ticket, with its status, priority, customer and assignee"
  field ticket_id in=path key=ticket_id required @12:7: must match the pattern ^T-[0-9]+$, e.g. T-8841
  error[0] @14:9 status=404 json=error equals="No such ticket" -> unknown_ticket field=ticket_id message="no ticket has this id"
route update_ticket PATCH /tickets/{ticket_id} @20:3 body=true validate=after format=json unmatched=wrap description="Change a ticket's status"
  field ticket_id in=path key=ticket_id required @24:7: must match the pattern ^T-[0-9]+$, e.g. T-8841
  field status in=body key=status @25:7: allowed values: open, pending, closed
  error[0] @27:9 status=400 json=error equals="Invalid status" -> invalid_status field=status message="allowed values: open, pending, closed"
  error[1] @30:9 status=404 json=error equals="No such ticket" -> unknown_ticket field=ticket_id message="no ticket has this id"
  error[2] @35:9 status=409 json=error equals="Cannot close ticket" -> ticket_unassigned message="an unassigned ticket cannot be closed; call assign_ticket first" next_call=assign_ticket ticket_id<-ticket_id
route create_ticket POST /tickets @41:3 body=true validate=after format=json unmatched=wrap description="Open a ticket for a customer"
  field title in=body key=title required description="a one-line summary of the problem" @45:7: must be a non-empty string of at most 200 characters
  field status in=body key=status required @46:7: allowed values: open, pending, closed
  field priority in=body key=priority required @47:7: allowed values: p1, p2, p3
  field due_at in=body key=due_at @48:7: must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z
  field customer_id in=body key=customer_id required @50:7: must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query)
  error[0] @52:9 status=400 json=error equals="Invalid status" -> invalid_status field=status message="allowed values: open, pending, closed"
  error[1] @55:9 status=400 json=error equals="Invalid priority" -> invalid_priority field=priority message="allowed values: p1, p2, p3"
  error[2] @58:9 status=400 json=error equals="Invalid due date" -> invalid_due_at field=due_at message="must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z"
  error[3] @61:9 status=404 json=error equals="No such customer" -> unknown_customer field=customer_id message="no customer matches {received}; resolve an id with search_customers(query)"
route assign_ticket POST /tickets/{ticket_id}/assign @67:3 body=true validate=after format=json unmatched=wrap description="Hand a ticket to an engineer"
  field ticket_id in=path key=ticket_id required @71:7: must match the pattern ^T-[0-9]+$, e.g. T-8841
  field assignee in=body key=assignee required description="the engineer's handle" @72:7: must match the pattern ^eng-[0-9]+$, e.g. eng-3
  error[0] @74:9 status=400 json=error equals="Invalid assignee" -> invalid_assignee field=assignee message="must match the pattern ^eng-[0-9]+$, e.g. eng-3"
  error[1] @77:9 status=404 json=error equals="No such ticket" -> unknown_ticket field=ticket_id message="no ticket has this id"
route search_customers GET /customers @83:3 body=false validate=after format=json unmatched=wrap description="Find customers by name or id, for the customer_id a ticket needs"
  field query in=query key=query required description="part of a customer's name or id" @87:7: is required
`},
		{"testdata/merge.good.yaml", `
upstream https://tickets.internal.example:8443/api/v2 listen :8080 admin 127.0.0.1:9091
limits error_body=2048 request_body=1048576 received=32 errors=10
format json unmatched wrap
route get_ticket GET /tickets/{ticket_id} @13:3 body=false validate=after format=json unmatched=wrap
  field ticket_id in=path key=ticket_id required @17:7: must match the pattern ^T-[0-9]+$, e.g. T-8841
  error[0] @19:9 status=404 json=error equals="No such ticket" -> unknown_ticket field=ticket_id message="no ticket has this id"
route update_ticket PATCH /tickets/{ticket_id} @23:3 body=true validate=after format=json unmatched=wrap
  field ticket_id in=path key=ticket_id required @27:7: must match the pattern ^T-[0-9]+$, e.g. T-8841
  field status in=body key=status @28:7: allowed values: open, pending, closed
  field note in=body key=note @29:7: was rejected by the upstream
  error[0] @31:9 status=400 json=error equals="Invalid status" -> invalid_status field=status message="allowed values: open, pending, closed"
  error[1] @34:9 status=404, 410 json=error equals="No such ticket" -> unknown_ticket field=ticket_id message="must match the pattern ^T-[0-9]+$, e.g. T-8841"
route list_tickets GET /tickets @37:3 body=false validate=after format=json unmatched=wrap
  field status in=query key=status required @40:7: allowed values: open, pending, closed
  field limit in=query key=limit @41:7: must be an integer from 1 to 100, e.g. 1
`},
		{"testdata/formats.good.yaml", `
upstream none listen 127.0.0.1:8080 admin 127.0.0.1:9090
limits error_body=65536 request_body=524288 received=64 errors=10
format json unmatched wrap
route create_event POST /calendars/{calendar_id}/events @6:3 body=true validate=after format=json unmatched=wrap
  field calendar_id in=path key=calendar_id required @10:7: must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b
  field starts_at in=body key=starts_at required @11:7: must be an RFC 3339 timestamp in UTC, e.g. 2026-11-30T17:00:00Z
  field day in=body key=day @12:7: must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11
  field organizer in=body key=organizer @13:7: must be an email address, e.g. grace@example.com
  field seats in=body key=seats @14:7: must be an integer from 1 to 10, e.g. 1
  field price in=body key=price @15:7: must be a number of at least 0.5, e.g. 0.5
  field discount in=body key=discount @16:7: must be a number of at most 0.25, e.g. 0.25
  field guests in=body key=guests @17:7: must be an integer of at most 500, e.g. 42
  field ratio in=body key=ratio @18:7: must be an integer from 0.5 to 9.5, e.g. 1
  field private in=body key=private @19:7: must be true or false
  field title in=body key=title @20:7: must be a string of at most 80 characters
  field code in=body key=code @21:7: must match the pattern ^[A-Z]{3}$ in at most 3 characters, e.g. ABC
  field source in=body key=meta.source required @22:7: is required
  field tenant in=header key=X-Tenant required @23:7: is required
  field dry_run in=query key=dry_run @24:7: must be true or false
  field summary in=body key=summary required @25:7: must be a non-empty string of at most 120 characters
  field handle in=body key=handle @26:7: must match the pattern ^[a-z]*$ in at least 2 characters, e.g. ada
  error[0] @28:9 status=4xx body=Invalid (?P<received>[a-z]+) -> invalid_field message="the upstream rejected a field"
route replace_event PUT /events/{event_id} @31:3 body=true validate=after format=json unmatched=wrap
  field event_id in=path key=event_id required @35:7: is required
  field title in=body key=title @36:7: was rejected by the upstream
route delete_event DELETE /events/{event_id:[0-9]+} @37:3 body=false validate=after format=json unmatched=wrap
  field event_id in=path key=event_id required @41:7: must be an integer, e.g. 42
  field reason in=query key=reason @42:7: was rejected by the upstream
  error[0] @44:9 status=409, 423, 5xx json=error.code regex=^LOCKED -> event_locked message="the event is locked" retryable=true
`},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			cfg := mustLoad(t, tt.file)
			if cfg.File != tt.file {
				t.Errorf("File = %q, want %q", cfg.File, tt.file)
			}
			got := summary(cfg)
			if want := strings.TrimPrefix(tt.want, "\n"); got != want {
				t.Errorf("compiled model differs\n--- got:\n%s--- want:\n%s", got, want)
			}
		})
	}
}
