package main

import (
	"cmp"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	const tickets = "../../configs/tickets.yaml"
	for _, tc := range []struct {
		name   string
		config string // the tickets' rules when empty
		args   []string
		code   int
		want   []string
	}{
		{
			name: "third rule matches",
			args: []string{"--method", "PATCH", "--path", "/tickets/T-8842", "--status", "409", "--body", `{"error":"Cannot close ticket"}`},
			want: []string{
				"route update_ticket: PATCH /tickets/{ticket_id} (" + tickets + ":20)",
				"errors[0] line 27 invalid_status: no, status 409 is not 400",
				"errors[1] line 30 unknown_ticket: no, status 409 is not 404",
				"errors[2] line 35 ticket_unassigned: matches",
				"the caller gets 409, application/json:",
				`"ticket_id": "T-8842"`,
			},
		},
		{
			name: "a near miss is spelled out",
			args: []string{"--method", "PATCH", "--path", "/tickets/T-8841", "--status", "400", "--body", `{"error":"Invalid Status"}`, "--request-body", `{"status":"open"}`},
			want: []string{
				`errors[0] line 27 invalid_status: no, the value at "error" is "Invalid Status", not equal to "Invalid status"`,
				"no rule matches",
				`"error": "upstream_rejected"`,
			},
		},
		{
			name: "request values are echoed",
			args: []string{"--route", "update_ticket", "--status", "400", "--body", `{"error":"Invalid status"}`, "--request-body", `{"status":"OPEN"}`},
			want: []string{"errors[0] line 27 invalid_status: matches", `"received": "OPEN"`},
		},
		{
			name: "unrouted",
			args: []string{"--method", "GET", "--path", "/health", "--status", "503", "--header", "Retry-After: 3"},
			want: []string{"GET /health matches no route of " + tickets, `"retry_after_seconds": 3`},
		},
		{
			name: "a call repeated is told to stop",
			args: []string{"--method", "PATCH", "--path", "/tickets/T-8842", "--status", "409", "--body", `{"error":"Cannot close ticket"}`, "--repeat", "3"},
			want: []string{
				"errors[2] line 35 ticket_unassigned: matches",
				"sent 3 times in a row, the caller gets the last time 409, application/json:",
				"this call failed the same way 3 times in a row; repeating it will not succeed now",
				`"repeated": 3`,
				`"call": "assign_ticket"`,
			},
		},
		{
			name: "a rejected value sent again",
			args: []string{"--method", "PATCH", "--path", "/tickets/T-8841", "--status", "400", "--body", `{"error":"Invalid status"}`, "--request-body", `{"status":"OPEN"}`, "--repeat", "2"},
			want: []string{"this value was already rejected", `"received": "OPEN"`, `"repeated": 2`},
		},
		{name: "bad repeat", args: []string{"--route", "update_ticket", "--status", "400", "--repeat", "0"}, code: 2, want: []string{"--repeat 0: send the call from 1 to 100 times"}},
		{name: "no config", args: []string{"--status", "400"}, code: 2, want: []string{"--config names the rule file"}},
		{name: "no status", args: []string{"--route", "update_ticket"}, code: 2, want: []string{"--status 0: give the upstream's status"}},
		{name: "no route", args: []string{"--status", "400"}, code: 2, want: []string{"name the route with --route"}},
		{name: "unknown route", args: []string{"--route", "update_tiket", "--status", "400"}, code: 2, want: []string{`no route "update_tiket"`, `did you mean "update_ticket"?`}},
		{name: "bad header", args: []string{"--route", "update_ticket", "--status", "400", "--header", "nocolon"}, code: 2, want: []string{`--header "nocolon" is not Name: value`}},
		{name: "bad method", args: []string{"--method", "GE T", "--path", "/x", "--status", "400"}, code: 2, want: []string{`method "GE T" is not an HTTP method`}},
		{name: "a path no request line carries", args: []string{"--method", "GET", "--path", "/tickets/T 1", "--status", "400"}, code: 2,
			want: []string{`path "/tickets/T 1" holds a space at character 11`, "e.g. /tickets/T%201"}},
		{name: "a route written percent-encoded", config: "testdata/testcmd/labels.rules.yaml", args: []string{"--route", "label_values", "--status", "400", "--body", `"bad limit"`},
			want: []string{"route label_values: GET /api/v1/label/foo%20bar/values", "errors[0] line 10 bad_limit: matches"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"explain"}, tc.args...)
			if tc.name != "no config" {
				args = append([]string{"explain", "--config", cmp.Or(tc.config, tickets)}, tc.args...)
			}
			code, stdout, stderr := run(t, args...)
			if code != tc.code {
				t.Errorf("exit %d; want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, stdout, stderr)
				}
			}
		})
	}
}
