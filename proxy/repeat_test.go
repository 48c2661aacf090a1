package proxy

import (
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// TestRepeat sends one call several times and checks when the answer
// tells the caller to stop: from the second identical failure, from the
// third for one declared transient, never on a route that turns it off; a
// field fault sent again says its value was already rejected instead.
func TestRepeat(t *testing.T) {
	type want struct {
		code      string
		repeated  int
		retryable bool
		says      string
	}
	stop := "will not succeed now"
	for _, tc := range []struct {
		name    string
		method  string
		target  string
		body    string
		status  int
		header  http.Header
		upBody  string
		answers []want
	}{
		{"a wrapped 500", "POST", "/export", "", 500, nil, "<html>boom</html>", []want{
			{"upstream_failed", 0, false, "may or may not"}, {"upstream_failed", 2, false, stop}, {"upstream_failed", 3, false, stop}}},
		{"a 503 with Retry-After", "POST", "/export", "", 503, http.Header{"Retry-After": {"5"}}, "", []want{
			{"upstream_failed", 0, true, "may or may not have taken effect: check first, then retry after 5 seconds"},
			{"upstream_failed", 0, true, "check first, then retry after 5 seconds"}, {"upstream_failed", 3, false, stop}}},
		{"a 429", "POST", "/export", "", 429, nil, "", []want{
			{"rate_limited", 0, true, "wait"}, {"rate_limited", 0, true, "wait"}, {"rate_limited", 3, false, stop}}},
		{"a route that turns it off", "POST", "/export-quiet", "", 500, nil, "", []want{
			{"upstream_failed", 0, false, "may or may not"}, {"upstream_failed", 0, false, "may or may not"}, {"upstream_failed", 0, false, "may or may not"}}},
		{"a futile rule", "POST", "/bookings", "", 409, nil, `{"error":"Slot taken"}`, []want{
			{"slot_taken", 0, false, "already booked"}, {"slot_taken", 2, false, stop + "; choose another slot"}}},
		{"a retryable rule", "POST", "/bookings", "", 409, nil, `{"error":"Busy"}`, []want{
			{"busy", 0, true, "busy"}, {"busy", 0, true, "busy"}, {"busy", 3, false, stop}}},
		{"a retryable fault of a field", "POST", "/rooms/R-1/bookings", "", 409, nil, `{"error":"Room busy"}`, []want{
			{"room_busy", 0, true, "being booked"}, {"room_busy", 0, true, "being booked"}, {"room_busy", 3, false, stop}}},
		{"a field fault sent again", "PATCH", "/tickets/T-1", `{"status":"done"}`, 400, nil, `{"error":"Invalid status"}`, []want{
			{"invalid_status", 0, false, "allowed values"}, {"invalid_status", 2, false, "already rejected"}, {"invalid_status", 3, false, "already rejected"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := rules.Load("testdata/repeats.yaml")
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			p, err := New(cfg, Options{Transport: &roundTrip{status: tc.status, header: tc.header, body: []byte(tc.upBody)}, Metrics: metrics.New(reg)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			for i, w := range tc.answers {
				rec := httptest.NewRecorder()
				p.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body)))
				var got struct {
					Error     string `json:"error"`
					Message   string `json:"message"`
					Repeated  int    `json:"repeated"`
					Retryable bool   `json:"retryable"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("call %d: %v: %s", i+1, err, rec.Body)
				}
				if rec.Code != tc.status || got.Error != w.code || got.Repeated != w.repeated || got.Retryable != w.retryable || !strings.Contains(got.Message, w.says) {
					t.Errorf("call %d: %d %s\nwant %d %+v", i+1, rec.Code, rec.Body, tc.status, w)
				}
				if w.repeated > 0 && strings.Contains(w.says, stop) {
					if ra := rec.Result().Header.Get("Retry-After"); ra != "" {
						t.Errorf("call %d: a stop sent with Retry-After %s", i+1, ra)
					}
					if strings.Contains(rec.Body.String(), "boom") {
						t.Errorf("call %d: the stop quotes the upstream: %s", i+1, rec.Body)
					}
				}
				if w.repeated > 0 && strings.Contains(w.says, "already") && strings.Contains(got.Message, stop) {
					t.Errorf("call %d: a field fault told to stop: %s", i+1, rec.Body)
				}
			}
			stops := 0.0
			for _, w := range tc.answers {
				if strings.Contains(w.says, stop) {
					stops++
				}
			}
			if c := metricstest.Counter(t, reg, "signpost_repeats_stopped_total"); c != stops {
				t.Errorf("signpost_repeats_stopped_total = %v; want %v", c, stops)
			}
		})
	}
}

// TestRepeatUpstreamFailure: signpost's own failure, had twice in a row on
// a route, is answered with the stop body, which keeps what is still true:
// a call refused before any byte was sent did not take effect; one that
// timed out may have, and the caller is told to check that first.
func TestRepeatUpstreamFailure(t *testing.T) {
	cfg, err := rules.Load("testdata/repeats.yaml")
	if err != nil {
		t.Fatal(err)
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name  string
		err   error
		code  string
		wants []string
	}{
		{"refused", refused, "upstream_unavailable", []string{
			`{"error":"upstream_unavailable","message":"the upstream service could not be reached; the call did not take effect, retry it shortly","retryable":true}`,
			`{"error":"upstream_unavailable","message":"this call failed the same way 2 times in a row; repeating it will not succeed now: stop, and tell the user","repeated":2,"retryable":false}`,
		}},
		{"timed out", timeoutErr{}, "upstream_timeout", []string{
			`{"error":"upstream_timeout","message":"the upstream service did not answer in time; the call may or may not have taken effect, check before retrying","retryable":true}`,
			`{"error":"upstream_timeout","message":"this call failed the same way 2 times in a row; repeating it will not succeed now; each call may or may not have taken effect: check that first, then stop, and tell the user","repeated":2,"retryable":false}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			p, err := New(cfg, Options{Transport: &roundTrip{err: tc.err}, Metrics: metrics.New(reg)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			for i, want := range tc.wants {
				rec := httptest.NewRecorder()
				r := httptest.NewRequest("POST", "/export", nil)
				r.Header.Set("X-Session-Id", "one agent")
				p.ServeHTTP(rec, r)
				if rec.Body.String() != want {
					t.Errorf("call %d: %d %s\nwant %s", i+1, rec.Code, rec.Body, want)
				}
			}
			if c := metricstest.Counter(t, reg, "signpost_repeats_stopped_total", "route", "export", "code", tc.code); c != 1 {
				t.Errorf("signpost_repeats_stopped_total = %v; want 1", c)
			}
		})
	}
}

// TestRepeatKnowsValuesNotTheirEchoes: whether a value was "already
// rejected" is judged on the value sent, not on its echo: two credentials
// echo alike, masked, but only the same one sent again is told so. A field
// never sent is missing, every time: its fault is never said to be of a
// value already rejected.
func TestRepeatKnowsValuesNotTheirEchoes(t *testing.T) {
	cfg, err := rules.Load("testdata/repeats.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Transport: &roundTrip{status: 401, body: []byte(`{"error":"Unauthorized"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for _, tc := range []struct {
		name       string
		calls      []*http.Request
		last, want string // what the last answer says, and must not say
	}{
		{"another credential", []*http.Request{
			withHeader(httptest.NewRequest("GET", "/users/u1", nil), "Authorization", "Bearer aaa"),
			withHeader(httptest.NewRequest("GET", "/users/u1", nil), "Authorization", "Bearer bbb"),
		}, "already rejected", `"received":"Bearer [masked]"`},
		{"a field not sent", []*http.Request{
			httptest.NewRequest("POST", "/users", strings.NewReader(`{"role":"admin"}`)),
			httptest.NewRequest("POST", "/users", strings.NewReader(`{"role":"admin"}`)),
		}, "already rejected", `"message":"is required","repeated":2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body string
			for _, r := range tc.calls {
				r.Header.Set("X-Session-Id", tc.name)
				w := httptest.NewRecorder()
				p.ServeHTTP(w, r)
				body = w.Body.String()
			}
			if strings.Contains(body, tc.last) || !strings.Contains(body, tc.want) {
				t.Errorf("last answer %s\nwant one with %s and without %q", body, tc.want, tc.last)
			}
		})
	}
	// The same credential sent again is a value already rejected.
	var body string
	for range 2 {
		w := httptest.NewRecorder()
		r := withHeader(httptest.NewRequest("GET", "/users/u1", nil), "Authorization", "Bearer ccc")
		r.Header.Set("X-Session-Id", "the same credential")
		p.ServeHTTP(w, r)
		body = w.Body.String()
	}
	if !strings.Contains(body, `"repeated":2`) || !strings.Contains(body, "already rejected") {
		t.Errorf("the same credential sent twice: %s; want it said to be already rejected, repeated 2", body)
	}
}

func withHeader(r *http.Request, k, v string) *http.Request {
	r.Header.Set(k, v)
	return r
}

// TestRepeatIsTheCallTheUpstreamSaw: a call is the same as the one before
// only if the upstream saw the same: a call that differs in a header is
// another call, whatever its body; a call whose body signpost forwarded
// unread is the same as no other. A true loop is still stopped.
func TestRepeatIsTheCallTheUpstreamSaw(t *testing.T) {
	cfg, err := rules.Load("testdata/repeats.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Options{Transport: &roundTrip{status: 415, body: []byte(`{"error":"Unsupported Media Type"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	call := func(session, method, target, ctype, body string) string {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("X-Session-Id", session)
		r.Header.Set("Content-Type", ctype)
		r.Header.Set("Traceparent", "00-"+session+"-"+strconv.Itoa(rand.Int())+"-01") // differs on every request
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w.Body.String()
	}
	const loop = `"repeated":2`
	status := `{"status":"open"}`
	if got := call("types", "PATCH", "/tickets/T-1", "text/plain", status); strings.Contains(got, "repeated") {
		t.Fatalf("first call: %s", got)
	}
	if got := call("types", "PATCH", "/tickets/T-1", "application/xml", status); strings.Contains(got, "repeated") {
		t.Errorf("a call with another Content-Type was taken for the same: %s", got)
	}
	if got := call("types", "PATCH", "/tickets/T-1", "application/xml", status); !strings.Contains(got, loop) {
		t.Errorf("the same call again, but for its trace id: %s; want it counted, %s", got, loop)
	}
	for i := range 3 {
		if got := call("unread", "POST", "/export", "application/json", `{"n":1}`); strings.Contains(got, "repeated") {
			t.Errorf("call %d with a body signpost did not read was taken for the same as another: %s", i+1, got)
		}
	}
}
