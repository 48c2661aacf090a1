package test

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// TestConcurrentRequests mixes rewritten, wrapped, unrouted and successful
// calls, and calls answered with a next call, from several clients at
// once. Every answer must be exactly the one a lone call gets, with a
// request id of its own, and the counters must add up; under -race the
// binary itself is race-checked too.
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	api := newUpstream(t, ticketapi.New().Handler())
	sp := startSignpost(t, ticketsConfig, api.URL)

	calls := []struct {
		method, path, body string
		status             int
		want               string // exact body; empty means the same as the upstream's
	}{
		{"PATCH", "/tickets/T-8841", `{"status":"OPEN"}`, 400,
			`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`},
		{"GET", "/tickets/T-404", ``, 404,
			`{"error":"unknown_ticket","field":"ticket_id","message":"no ticket has this id","received":"T-404","retryable":false}`},
		{"POST", "/tickets", `{"title":"t","status":"open","priority":"p9","customer_id":"C-1042"}`, 400,
			`{"error":"invalid_priority","field":"priority","message":"allowed values: p1, p2, p3","received":"p9","retryable":false}`},
		// No rule explains "Missing title": the declared checks do, and
		// the upstream's words are kept beside them.
		{"POST", "/tickets", `{"status":"open"}`, 400, `{"error":"validation_failed","message":"3 fields are invalid; fix each one listed, then repeat the call.","upstream_message":"Missing title","errors":[` +
			`{"field":"title","code":"invalid_title","message":"is required; must be a non-empty string of at most 200 characters"},` +
			`{"field":"priority","code":"invalid_priority","message":"is required; allowed values: p1, p2, p3"},` +
			`{"field":"customer_id","code":"invalid_customer_id","message":"is required; must match the pattern ^C-[0-9]+$, e.g. C-1042; resolve an id with search_customers(query)"}],"retryable":false}`},
		{"GET", "/tickets/T-8841", ``, 200, ``},
		{"GET", "/nowhere", ``, 404, rejectedBody("404 Not Found", "404 page not found")},
		{"PATCH", "/tickets/T-8842", `{"status":"closed"}`, 409, closeUnassigned},
		{"POST", "/tickets", `{"title":"t","status":"open","priority":"p1","customer_id":"C-9999"}`, 404, unknownCustomer},
	}
	direct := make([]*reply, len(calls))
	for i, c := range calls {
		if c.want == "" {
			direct[i] = send(t, c.method, api.URL+c.path, []byte(c.body))
		}
	}

	const workers, rounds = 8, 10
	ids := make(chan string, workers*rounds)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				i := (w + r) % len(calls)
				c := calls[i]
				req, _ := http.NewRequest(c.method, sp.URL+c.path, bytes.NewReader([]byte(c.body)))
				// Each request is an agent of its own: none repeats a
				// failure another had.
				req.Header.Set("X-Session-Id", strconv.Itoa(w)+"-"+strconv.Itoa(r))
				res, err := client.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", c.method, c.path, err)
					return
				}
				var b bytes.Buffer
				_, err = b.ReadFrom(res.Body)
				res.Body.Close()
				ids <- res.Header.Get(requestIDHeader)
				want := []byte(c.want)
				if c.want == "" {
					want = direct[i].body
				}
				if err != nil || res.StatusCode != c.status || !bytes.Equal(b.Bytes(), want) {
					t.Errorf("%s %s: %d %q (%v), want %d %q", c.method, c.path, res.StatusCode, b.Bytes(), err, c.status, want)
				}
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if id == "" || seen[id] {
			t.Errorf("X-Request-Id %q missing or given to two calls", id)
		}
		seen[id] = true
	}

	// Each call ran workers*rounds/len(calls) times, rounded per worker.
	n := make([]float64, len(calls))
	for w := range workers {
		for r := range rounds {
			n[(w+r)%len(calls)]++
		}
	}
	sp.wantCounter(t, n[0], "signpost_rejections_total", "route", "update_ticket", "code", "invalid_status", "field", "status")
	sp.wantCounter(t, n[1], "signpost_rejections_total", "route", "get_ticket", "code", "unknown_ticket", "field", "ticket_id")
	sp.wantCounter(t, n[2]+n[3], "signpost_rejections_total", "route", "create_ticket", "code", "invalid_priority", "field", "priority")
	sp.wantCounter(t, n[3], "signpost_rejections_total", "route", "create_ticket", "code", "invalid_title", "field", "title")
	sp.wantCounter(t, n[5], "signpost_upstream_errors_unmatched_total", "route", "(unrouted)", "status", "404")
	sp.wantCounter(t, n[6], "signpost_rejections_total", "route", "update_ticket", "code", "ticket_unassigned", "field", "")
	sp.wantCounter(t, n[7], "signpost_rejections_total", "route", "create_ticket", "code", "unknown_customer", "field", "customer_id")
}
