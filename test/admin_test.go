package test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// browserTimeout bounds everything a test does in the browser, its start
// included.
const browserTimeout = 30 * time.Second

// chromium returns the Chromium or Chrome to drive. Without one the test
// is skipped, except under CI, which installs chromium and so fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell", "headless_shell"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const why = "no chromium or google-chrome on PATH; install one (apt-get install -y chromium) to run the browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(why + "; CI is set, and CI installs chromium")
	}
	t.Skip(why)
	return ""
}

// browser is one headless Chromium tab, with what its pages reported to
// the console.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	problems []string // exceptions, console errors, and errors of the browser log (CSP violations among them)
}

// newBrowser starts headless Chromium with a fresh profile; it is gone at
// the end of the test, and everything in it is bounded by browserTimeout.
// As root, Chromium needs --no-sandbox.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	b := &browser{}
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	b.ctx = bctx
	// Cleanups run last first: the browser exits before its profile
	// directory is removed.
	t.Cleanup(func() {
		bcancel()
		acancel()
		cancel()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return b
}

func (b *browser) listen(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		p = "exception: " + ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil {
			p += " " + ex.Description
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		p = "console.error"
		for _, a := range ev.Args {
			p += fmt.Sprintf(" %s", a.Value)
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level != log.EntryLevelError && ev.Entry.Level != log.EntryLevelWarning {
			return
		}
		p = fmt.Sprintf("%s %s: %s (%s)", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
	default:
		return
	}
	b.mu.Lock()
	b.problems = append(b.problems, p)
	b.mu.Unlock()
}

// wantQuiet fails the test if a page threw or logged an error.
func (b *browser) wantQuiet(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("the browser reported %s", p)
	}
}

// stepTimeout bounds one action in the browser: a query waits for its
// element to appear, so one for an element that never does must not use
// up browserTimeout.
const stepTimeout = 10 * time.Second

// text is the rendered text of the first element sel matches, as a reader
// sees it: a table's cells separated by tabs and its rows by newlines.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// TestAdminPage sends a real signpost rewritten errors of three codes, one
// of them an error no rule matches that the body explains, and a success, lets one caller's recovery lapse,
// then reads the admin page in headless Chromium: the figures, and that
// the page's script refreshes them without a reload.
func TestAdminPage(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	api := newUpstream(t, ticketapi.New().Handler())
	sp := startSignpost(t, withSettings(t, ticketsConfig, "learn: {recovery_window: 2s}"), api.URL)

	// Caller a: two invalid_status, one ticket_unassigned, one body cut
	// short, then a success: recovered on the fifth call.
	patch := func(session, ticket, body string, status int) {
		t.Helper()
		got := send(t, "PATCH", sp.URL+"/tickets/"+ticket, []byte(body), "Content-Type", jsonType, "X-Session-Id", session)
		if got.status != status {
			t.Fatalf("PATCH /tickets/%s %s: %d %s, want %d", ticket, body, got.status, got.body, status)
		}
	}
	patch("a", "T-8841", `{"status":"Closed"}`, 400)
	patch("a", "T-8841", `{"status":"done"}`, 400)
	patch("a", "T-8842", `{"status":"closed"}`, 409)
	patch("a", "T-8841", `{"status":`, 400) // the upstream's "Bad request", explained by the body: invalid_json_body
	patch("a", "T-8841", `{"status":"pending"}`, 200)
	// Caller b: one unknown_ticket and no success, unrecovered once its
	// two-second window lapses.
	if got := send(t, "GET", sp.URL+"/tickets/T-1", nil, "X-Session-Id", "b"); got.status != 404 {
		t.Fatalf("GET /tickets/T-1: %d %s, want 404", got.status, got.body)
	}
	// Caller c: closes an unassigned ticket twice, is told to stop the
	// second time, and never succeeds: a loop stopped once the window
	// lapses, not a recovery that never came.
	patch("c", "T-8842", `{"status":"closed"}`, 409)
	patch("c", "T-8842", `{"status":"closed"}`, 409)
	sp.wantCounter(t, 1, "signpost_repeats_stopped_total", "route", "update_ticket", "code", "ticket_unassigned")
	deadline := time.Now().Add(10 * time.Second)
	for sp.counter(t, "signpost_unrecovered_total", "route", "get_ticket", "code", "unknown_ticket") != 1 ||
		sp.counter(t, "signpost_recovery_stopped_total", "route", "update_ticket", "code", "ticket_unassigned") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("signpost_unrecovered_total{route=get_ticket} and signpost_recovery_stopped_total{route=update_ticket} did not reach 1 within 10s of a lapsed 2s window")
		}
		time.Sleep(100 * time.Millisecond)
	}
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "update_ticket", "code", "invalid_json_body", "field", "")

	if err := chromedp.Do(b.ctx, chromedp.Navigate(sp.Admin+"/?refresh=1")); err != nil {
		t.Fatalf("loading the admin page: %v", err)
	}
	route := func(name string) string { return `section.route[data-route="` + name + `"] ` }
	for _, tt := range []struct {
		sel  string
		want []string // lines of its rendered text
	}{
		{`#routes table.overview`, []string{
			"route\tmethod and path\trequests\trejections\tunmatched errors\trecoveries\twithin 3 calls\tnever\ttold to stop",
			"get_ticket\tGET /tickets/{ticket_id}\t1\t1\t0\t1\t0%\t100%\t0",
			"update_ticket\tPATCH /tickets/{ticket_id}\t7\t6\t0\t2\t0%\t0%\t1",
			"create_ticket\tPOST /tickets\t0\t0\t0\t0\t–\t–\t0",
		}},
		{route("update_ticket") + "table.rejections", []string{"invalid_json_body\t—\t1", "invalid_status\tstatus\t2", "ticket_unassigned\t—\t3", "total\t6"}},
		{route("update_ticket") + "table.unmatched", []string{"none"}},
		{route("update_ticket") + "table.recovery", []string{"3\t0\t0%\t", "4–5\t1\t50%\t", "never\t0\t0%\t", "told to stop\t1\t50%\t"}},
		{route("get_ticket") + "table.rejections", []string{"unknown_ticket\tticket_id\t1"}},
		{route("get_ticket") + "table.recovery", []string{"never\t1\t100%\t"}},
		{`#ready`, []string{"ready", "[+]rules ok"}},
	} {
		text := b.text(t, tt.sel)
		lines := strings.Split(text, "\n")
		for _, want := range tt.want {
			found := false
			for _, l := range lines {
				if l == want || strings.HasSuffix(want, "\t") && strings.HasPrefix(l, want) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s lacks the line %q; it reads:\n%s", tt.sel, want, text)
			}
		}
	}
	if meta := b.text(t, route("update_ticket")+".meta"); !strings.HasSuffix(meta, "tickets.yaml:20:3 · 7 requests: 1 success, 6 rewritten") {
		t.Errorf("update_ticket's summary reads %q; want its position and 7 requests: 1 success, 6 rewritten", meta)
	}
	if eval[bool](t, b, `document.querySelector('section.route[data-route="create_ticket"]') !== null`) {
		t.Errorf("create_ticket, with no traffic, has a section of its own; want only its overview row")
	}

	// The script runs under the page's Content-Security-Policy: it shows
	// its button, and a new rejection appears within a refresh or two.
	if !eval[bool](t, b, `!document.getElementById("pause").hidden`) {
		t.Errorf("the pause button is hidden: the page's script did not run")
	}
	patch("c", "T-8841", `{"status":"Open"}`, 400)
	refreshed := `document.querySelector('` + route("update_ticket") + `table.rejections').innerText.split("\n").includes("invalid_status\tstatus\t3")`
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout+time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](refreshed, chromedp.WithPollingTimeout(stepTimeout))); err != nil {
		if errors.Is(err, chromedp.ErrPollingTimeout) {
			err = fmt.Errorf("not within %v of refreshing every second", stepTimeout)
		}
		t.Errorf("the page did not show the third invalid_status: %v; it reads:\n%s", err, b.text(t, route("update_ticket")+"table.rejections"))
	}
	b.wantQuiet(t)
}

// TestAdminReadyAndRules checks /readyz and /rules on a running signpost.
func TestAdminReadyAndRules(t *testing.T) {
	t.Parallel()
	api := newUpstream(t, ticketapi.New().Handler())
	sp := startSignpost(t, ticketsConfig, api.URL)
	got := send(t, "GET", sp.Admin+"/readyz?verbose", nil)
	if got.status != http.StatusOK || !strings.HasPrefix(string(got.body), "[+]rules ok\n") || !strings.HasSuffix(string(got.body), "readyz check passed\n") {
		t.Errorf("GET /readyz?verbose: %d %q, want 200, [+]rules ok first and readyz check passed last", got.status, got.body)
	}
	got = send(t, "GET", sp.Admin+"/rules", nil)
	for _, want := range []string{
		`"file": "../configs/tickets.yaml"`,
		`"upstream": "` + api.URL + `"`,
		`"name": "update_ticket"`,
		`"next_call": "assign_ticket(ticket_id)"`,
	} {
		if got.status != http.StatusOK || !strings.Contains(string(got.body), want) {
			t.Errorf("GET /rules: %d, lacks %s\n%s", got.status, want, got.body)
		}
	}
}
