package test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// TestObserveThenDraftThenEnforce adopts signpost on the ticket API as a
// team would: observe mode in front while agents work, every answer
// byte-identical to the API's own; signpost draft writes rules from what
// it saw, which pass check and test; served in enforce mode, they rewrite
// the same mistakes with the field at fault, the permitted values and the
// aliases the traffic revealed.
func TestObserveThenDraftThenEnforce(t *testing.T) {
	// Two fresh APIs in the same state: one behind signpost, one called
	// directly, so each answer through signpost has the API's own beside it.
	behind := newUpstream(t, ticketapi.New().Handler())
	direct := newUpstream(t, ticketapi.New().Handler())
	dir := t.TempDir()
	observing := filepath.Join(dir, "observe.yaml")
	if err := os.WriteFile(observing, []byte("# No rules yet: watch the traffic.\nmode: observe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := startSignpost(t, observing, behind.URL)

	for _, c := range ticketapi.Agents() {
		var body []byte
		if c.Body != "" {
			body = []byte(c.Body)
		}
		header := []string{"X-Session-Id", c.Caller, "Content-Type", "application/json"}
		got := send(t, c.Method, sp.URL+c.Path, body, header...)
		want := send(t, c.Method, direct.URL+c.Path, body, header...)
		wantIdentical(t, c.Method+" "+c.Path+" "+c.Body, got, want)
	}
	if t.Failed() {
		t.FailNow()
	}

	drafted := filepath.Join(dir, "tickets.yaml")
	if out, errs, code := runCLI(t, "draft", "--admin", strings.TrimPrefix(sp.Admin, "http://"), "-o", drafted, "--upstream", behind.URL); code != 0 {
		t.Fatalf("signpost draft: exit %d\n%s%s", code, out, errs)
	}
	rulesText, _ := os.ReadFile(drafted)
	t.Logf("the draft:\n%s", rulesText)
	if out, errs, code := runCLI(t, "check", drafted); code != 0 {
		t.Fatalf("signpost check on the draft: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := runCLI(t, "test", filepath.Join(dir, "tickets.tests.yaml")); code != 0 {
		testsText, _ := os.ReadFile(filepath.Join(dir, "tickets.tests.yaml"))
		t.Fatalf("signpost test on the draft's tests: exit %d\n%s%s\ntests:\n%s", code, out, errs, testsText)
	}

	// The observing signpost writes what it learned to its JSON log as it
	// exits: draft reads the same rules back from the log.
	if err := sp.cmd.Process.Signal(syscall.SIGTERM); err != nil || !sp.wait(stopTimeout) {
		t.Fatalf("the observing signpost did not exit on SIGTERM (%v)", err)
	}
	logged := filepath.Join(dir, "signpost.log")
	if err := os.WriteFile(logged, []byte(sp.stdout.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fromLog := filepath.Join(dir, "from-log.yaml")
	if out, errs, code := runCLI(t, "draft", "--from", logged, "-o", fromLog, "--upstream", behind.URL); code != 0 {
		t.Fatalf("signpost draft --from its log: exit %d\n%s%s", code, out, errs)
	}
	if again, _ := os.ReadFile(fromLog); string(again) != string(rulesText) {
		t.Errorf("the draft from the log differs from the draft from the admin listener:\n%s", again)
	}

	// Enforce the draft in front of a fresh API: the same mistakes now
	// come back actionable.
	en := startSignpost(t, drafted, newUpstream(t, ticketapi.New().Handler()).URL)
	create := `{"title":"Printer on fire","status":"open","priority":%q,"customer_id":"C-1042"%s}`
	tests := []struct {
		name, method, path, body string
		status                   int
		field                    string
		mentions                 []string // in the message
		suggests                 string   // in did_you_mean
		next                     string   // next_call's call
	}{
		{"a status off the enum", "PATCH", "/tickets/T-8841", `{"status":"active"}`, 400, "status",
			[]string{"open", "pending", "closed"}, "open", ""},
		{"a priority synonym", "POST", "/tickets", fmt.Sprintf(create, "urgent", ""), 400, "priority",
			[]string{"p1", "p2", "p3"}, "p1", ""},
		{"a date without its time", "POST", "/tickets", fmt.Sprintf(create, "p2", `,"due_at":"2026-12-24"`), 400, "due_at",
			[]string{"2026-11-30T17:00:00Z"}, "", ""},
		{"an id without its prefix", "GET", "/tickets/8841", "", 404, "ticket_id", []string{"T-"}, "", ""},
		{"a close before the assign", "PATCH", "/tickets/T-8842", `{"status":"closed"}`, 409, "", nil, "", "assign_ticket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			got := send(t, tt.method, en.URL+tt.path, body, "Content-Type", "application/json", "X-Session-Id", "checker-"+tt.name)
			var e struct {
				Error, Field, Message string
				DidYouMean            []string               `json:"did_you_mean"`
				NextCall              *struct{ Call string } `json:"next_call"`
			}
			if got.status != tt.status || json.Unmarshal(got.body, &e) != nil || e.Error == "" {
				t.Fatalf("%s %s: %d %s, want %d and an actionable body", tt.method, tt.path, got.status, got.body, tt.status)
			}
			if e.Field != tt.field {
				t.Errorf("field %q, want %q in %s", e.Field, tt.field, got.body)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(e.Message, m) {
					t.Errorf("message %q does not mention %q", e.Message, m)
				}
			}
			if tt.suggests != "" && !slices.Contains(e.DidYouMean, tt.suggests) {
				t.Errorf("did_you_mean %q, want %q in %s", e.DidYouMean, tt.suggests, got.body)
			}
			if tt.next != "" && (e.NextCall == nil || e.NextCall.Call != tt.next) {
				t.Errorf("next_call %+v, want %s in %s", e.NextCall, tt.next, got.body)
			}
		})
	}
	// The HTML page of the crashed search never reaches the agent.
	got := send(t, "GET", en.URL+"/customers?query="+url.QueryEscape("O'Brien"), nil)
	if got.status != 500 || strings.Contains(string(got.body), "SQLSTATE") || !json.Valid(got.body) {
		t.Errorf("the crashed search: %d %s, want 500 with a JSON body of signpost's own", got.status, got.body)
	}
}

// wantIdentical checks that signpost in observe mode answered as the API
// did: status, end-to-end headers, body bytes, and nothing added.
func wantIdentical(t *testing.T, what string, got, direct *reply) {
	t.Helper()
	if got.status != direct.status || string(got.body) != string(direct.body) {
		t.Errorf("%s: through signpost %d %q, the API answered %d %q", what, got.status, clip(got.body), direct.status, clip(direct.body))
	}
	g, d := endToEnd(got.header), endToEnd(direct.header)
	g.Del("Date")
	d.Del("Date")
	for _, k := range sortedKeys(g, d) {
		if !slices.Equal(g[k], d[k]) {
			t.Errorf("%s: header %s = %q through signpost, the API sent %q", what, k, g[k], d[k])
		}
	}
}

// TestObserveSwitchedByReload switches a route from observe to enforce
// with a reload, no restart: the same wrong call passes through untouched,
// then comes back rewritten, and what observe mode recorded stays.
func TestObserveSwitchedByReload(t *testing.T) {
	up := newUpstream(t, ticketapi.New().Handler())
	path := filepath.Join(t.TempDir(), "tickets.yaml")
	rulesFor := func(mode string) []byte {
		return []byte(`mode: ` + mode + `
routes:
  update_ticket:
    method: PATCH
    path: /tickets/{ticket_id}
    fields:
      status: {enum: [open, pending, closed]}
    errors:
      - match: {status: 400, json: error, equals: Invalid status}
        code: invalid_status
        field: status
`)
	}
	if err := os.WriteFile(path, rulesFor("observe"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := startSignpost(t, path, up.URL, "--watch=false")
	wrong := []byte(`{"status":"OPEN"}`)
	got := send(t, "PATCH", sp.URL+"/tickets/T-8841", wrong, "Content-Type", "application/json", "X-Session-Id", "a")
	if got.status != 400 || string(got.body) != `{"error":"Invalid status"}` || got.header.Get(requestIDHeader) != "" {
		t.Fatalf("observing: %d %s %v, want the API's own 400, untouched", got.status, got.body, got.header)
	}
	sp.wantCounter(t, 1, "signpost_would_rewrite_total", "route", "update_ticket", "code", "invalid_status")

	if err := os.WriteFile(path, rulesFor("enforce"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := send(t, "POST", sp.Admin+"/-/reload", nil); r.status != 200 {
		t.Fatalf("POST /-/reload: %d %s", r.status, r.body)
	}
	got = send(t, "PATCH", sp.URL+"/tickets/T-8841", wrong, "Content-Type", "application/json", "X-Session-Id", "b")
	wantJSONError(t, got, 400, `{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`)
	sp.wantCounter(t, 1, "signpost_would_rewrite_total", "route", "update_ticket", "code", "invalid_status")
	var doc struct {
		Operations []struct {
			Route    string
			Requests int
		}
	}
	if r := send(t, "GET", sp.Admin+"/draft", nil); json.Unmarshal(r.body, &doc) != nil || len(doc.Operations) != 1 || doc.Operations[0].Route != "update_ticket" {
		t.Errorf("GET /draft after the reload: %s, want what observe mode recorded before it", r.body)
	}
}
