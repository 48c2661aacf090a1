package proxy

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestFieldFaultsThroughThePipeline sends requests whose fault the bare
// field rule would misstate through the proxy, in every mode a route can
// have: validated after the upstream or before it, answered as json or as
// problem+json. The body must name the real fault in each.
func TestFieldFaultsThroughThePipeline(t *testing.T) {
	cfg, err := rules.Load("testdata/fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const expected = "title, note, minutes, due_at, date"
	for _, tc := range []struct {
		name, body string
		upStatus   int
		upBody     string
		afterOnly  bool
		want       string // in signpost's own format
	}{
		{"form-encoded body", "title=t&note=n", 400, `{"error":"note is required"}`, false,
			`{"error":"invalid_json_body","message":"the request body is form-encoded, not JSON; send one JSON object with the fields ` + expected + `","retryable":false}`},
		{"array body", `[{"title":"t","note":"n"}]`, 400, `{"error":"note is required"}`, false,
			`{"error":"invalid_json_body","message":"the request body is a JSON array; send one JSON object with the fields ` + expected + `","retryable":false}`},
		{"null body", `null`, 400, `{"error":"note is required"}`, false,
			`{"error":"invalid_json_body","message":"the request body is JSON null; send one JSON object with the fields ` + expected + `","retryable":false}`},
		{"empty string", `{"title":"t","note":""}`, 400, `{"error":"note is required"}`, false,
			`{"error":"invalid_note","field":"note","message":"is empty; must be a non-empty string of at most 20 characters","received":"","retryable":false}`},
		{"empty title refused", `{"title":"","note":"n"}`, 400, `{"error":"Invalid title"}`, true,
			`{"error":"invalid_title","field":"title","message":"is empty; must be a non-empty string of at most 200 characters","received":"","retryable":false}`},
		{"integer as string", `{"title":"t","note":"n","minutes":"30"}`, 400, `{"error":"Invalid minutes"}`, false,
			`{"error":"invalid_minutes","field":"minutes","message":"must be a JSON number, not a string; must be an integer from 1 to 120, e.g. 1","received":"30","retryable":false}`},
		{"nested value sent flat", `{"title":"t","note":"n","date":"2026-03-11"}`, 400, `{"error":"Invalid date"}`, true,
			`{"error":"invalid_date","field":"date","message":"belongs at event.when.date, not at the top level; must be a calendar date as YYYY-MM-DD, e.g. 2026-03-11","received":"2026-03-11","retryable":false}`},
		{"offset +00:00", `{"title":"t","note":"n","due_at":"2026-03-11T09:14:02+00:00"}`, 400, `{"error":"Invalid due date"}`, false,
			`{"error":"invalid_due_at","field":"due_at","message":"must be an RFC 3339 timestamp in UTC, with the offset written Z, e.g. 2026-11-30T17:00:00Z","received":"2026-03-11T09:14:02+00:00","retryable":false}`},
		{"captured number", `{"title":"t","note":"n","minutes":440}`, 422, `{"error":"minutes 440 is out of range"}`, true,
			`{"error":"invalid_minutes","field":"minutes","message":"must be an integer from 1 to 120, e.g. 1","received":440,"retryable":false}`},
	} {
		for _, mode := range []string{"after", "before", "after-problem", "before-problem"} {
			before := mode == "before" || mode == "before-problem"
			if before && tc.afterOnly {
				continue
			}
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				rt := &roundTrip{status: tc.upStatus, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(tc.upBody)}
				p, err := New(cfg, Options{Transport: rt})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				f := &fixture{p: p}
				w := f.do("POST", "/"+mode+"/tickets", tc.body)
				status := tc.upStatus
				if before {
					status = 400
					if rt.got != nil {
						t.Errorf("the upstream was called in before mode with %s", rt.got)
					}
				}
				if w.Code != status {
					t.Errorf("status %d; want %d", w.Code, status)
				}
				want := tc.want
				ctype := "application/json"
				if mode == "after-problem" || mode == "before-problem" {
					want, ctype = problem(t, tc.want, status), "application/problem+json"
				}
				if got := w.Header().Get("Content-Type"); got != ctype {
					t.Errorf("Content-Type %q; want %q", got, ctype)
				}
				var got, exp any
				if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
					t.Fatalf("%v: %s", err, w.Body)
				}
				json.Unmarshal([]byte(want), &exp)
				if !reflect.DeepEqual(got, exp) {
					t.Errorf("body\n got: %s\nwant: %s", w.Body, want)
				}
			})
		}
	}
}

// problem is a body in signpost's own format as problem+json renders it.
func problem(t *testing.T, body string, status int) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	m["code"], m["detail"] = m["error"], m["message"]
	delete(m, "error")
	delete(m, "message")
	m["type"], m["title"], m["status"] = "about:blank", http.StatusText(status), status
	b, _ := json.Marshal(m)
	return string(b)
}
