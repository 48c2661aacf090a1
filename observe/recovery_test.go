package observe

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRecovery credits an error with the same caller's next success on
// the same operation within the window, blaming the fields that changed.
func TestRecovery(t *testing.T) {
	type step struct {
		caller uint64
		status int
		body   string
		wait   time.Duration
	}
	const bad = `{"error":"invalid status"}`
	for _, tc := range []struct {
		name      string
		steps     []step
		recovered int64
		blamed    []Blame
	}{
		{"case fixed", []step{
			{1, 422, `{"status":"OPEN","title":"t"}`, 0},
			{1, 200, `{"status":"open","title":"t"}`, time.Minute},
		}, 1, []Blame{{Field: "status", In: "body", Count: 1, Changes: []Change{{"OPEN", "open", 1}}}}},
		{"field dropped and added", []step{
			{1, 422, `{"status":"x","old":1}`, 0},
			{1, 200, `{"status":"x","new":true}`, time.Minute},
		}, 1, []Blame{
			{Field: "new", In: "body", Count: 1, Changes: []Change{{"", "true", 1}}},
			{Field: "old", In: "body", Count: 1, Changes: []Change{{"1", "", 1}}},
		}},
		{"credential changed is not blamed", []step{
			{1, 422, `{"status":"OPEN","password":"a"}`, 0},
			{1, 200, `{"status":"open","password":"b"}`, time.Minute},
		}, 1, []Blame{{Field: "status", In: "body", Count: 1, Changes: []Change{{"OPEN", "open", 1}}}}},
		{"past the window", []step{
			{1, 422, `{"status":"OPEN"}`, 0},
			{1, 200, `{"status":"open"}`, 11 * time.Minute},
		}, 0, nil},
		{"another caller", []step{
			{1, 422, `{"status":"OPEN"}`, 0},
			{2, 200, `{"status":"open"}`, time.Minute},
		}, 0, nil},
		{"once only", []step{
			{1, 422, `{"status":"OPEN"}`, 0},
			{1, 200, `{"status":"open"}`, time.Minute},
			{1, 200, `{"status":"closed"}`, time.Minute},
		}, 1, []Blame{{Field: "status", In: "body", Count: 1, Changes: []Change{{"OPEN", "open", 1}}}}},
		{"two recoveries", []step{
			{1, 422, `{"status":"OPEN"}`, 0},
			{2, 422, `{"status":"Open"}`, 0},
			{1, 200, `{"status":"open"}`, time.Minute},
			{2, 200, `{"status":"open"}`, time.Minute},
			{3, 422, `{"status":"OPEN"}`, 0},
			{3, 200, `{"status":"open"}`, time.Minute},
		}, 3, []Blame{{Field: "status", In: "body", Count: 3, Changes: []Change{{"OPEN", "open", 2}, {"Open", "open", 1}}}}},
		{"unchanged retry", []step{
			{1, 422, `{"status":"open"}`, 0},
			{1, 200, `{"status":"open"}`, time.Minute},
		}, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			r := New(Options{Now: c.now})
			for _, s := range tc.steps {
				c.advance(s.wait)
				x := &Exchange{Caller: s.caller, Method: "PATCH", Path: "/tickets/T-1", Body: []byte(s.body), Status: s.status}
				if s.status >= 400 {
					x.Response = []byte(bad)
				}
				r.Add(x)
			}
			op := findOp(t, r.Document(), "PATCH", "/tickets/{ticket_id}")
			if len(op.Errors) != 1 {
				t.Fatalf("errors = %+v; want one", op.Errors)
			}
			e := op.Errors[0]
			if e.Recovered != tc.recovered || !slices.EqualFunc(e.Blamed, tc.blamed, blameEqual) {
				t.Errorf("recovered %d, blamed %+v; want %d, %+v", e.Recovered, e.Blamed, tc.recovered, tc.blamed)
			}
		})
	}
}

func blameEqual(a, b Blame) bool {
	return a.Field == b.Field && a.In == b.In && a.Count == b.Count && slices.Equal(a.Changes, b.Changes)
}

// TestBefore counts the success on another operation that an error needed
// first: assigning a ticket before changing it.
func TestBefore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []struct {
			method, path string
			status       int
		}
		want []Value
	}{
		{"assign first", []struct {
			method, path string
			status       int
		}{
			{"PATCH", "/tickets/T-1", 409},
			{"POST", "/tickets/T-1/assign", 200},
			{"PATCH", "/tickets/T-1", 200},
		}, []Value{{Value: "POST /tickets/{ticket_id}/assign", Count: 1}}},
		{"success before the error", []struct {
			method, path string
			status       int
		}{
			{"POST", "/tickets/T-1/assign", 200},
			{"PATCH", "/tickets/T-1", 409},
			{"PATCH", "/tickets/T-1", 200},
		}, nil},
		{"twice counts once", []struct {
			method, path string
			status       int
		}{
			{"PATCH", "/tickets/T-1", 409},
			{"POST", "/tickets/T-1/assign", 200},
			{"POST", "/tickets/T-2/assign", 200},
			{"GET", "/tickets/T-1", 200},
			{"PATCH", "/tickets/T-1", 200},
		}, []Value{{Value: "GET /tickets/{ticket_id}", Count: 1}, {Value: "POST /tickets/{ticket_id}/assign", Count: 1}}},
		{"never repeated", []struct {
			method, path string
			status       int
		}{
			{"PATCH", "/tickets/T-1", 409},
			{"POST", "/tickets/T-1/assign", 200},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			r := New(Options{Now: c.now})
			for _, s := range tc.steps {
				c.advance(time.Second)
				x := &Exchange{Caller: 7, Method: s.method, Path: s.path, Status: s.status}
				if s.status >= 400 {
					x.Response = []byte(`{"error":"ticket not assigned"}`)
				}
				r.Add(x)
			}
			e := findOp(t, r.Document(), "PATCH", "/tickets/{ticket_id}").Errors[0]
			if !slices.Equal(e.Before, tc.want) {
				t.Errorf("before = %v; want %v", e.Before, tc.want)
			}
		})
	}
}

// TestExplainedPends lets an explained error replace the caller's pending
// one, so that the success after it credits no earlier error.
func TestExplainedPends(t *testing.T) {
	r := New(Options{})
	x := func(status int, explained bool, resp string) *Exchange {
		return &Exchange{Caller: 1, Method: "PUT", Path: "/a", Status: status, Explained: explained, Response: []byte(resp)}
	}
	r.Add(x(422, false, "unexplained"))
	r.Add(x(422, true, "explained"))
	r.Add(x(200, false, ""))
	op := findOp(t, r.Document(), "PUT", "/a")
	if len(op.Errors) != 1 || op.Errors[0].Recovered != 0 || op.Requests != 3 {
		t.Errorf("errors %+v, requests %d; want one, not recovered, 3 requests", op.Errors, op.Requests)
	}
}

// TestCallersBound forgets the least recently seen caller past the bound,
// counting it when it had an error pending.
func TestCallersBound(t *testing.T) {
	c := newClock()
	r := New(Options{Callers: 2, Now: c.now})
	add := func(caller uint64, status int) {
		r.Add(&Exchange{Caller: caller, Method: "GET", Path: "/a", Status: status, Response: []byte("e")})
	}
	add(1, 500)
	add(2, 500)
	add(3, 500) // forgets 1, pending
	add(2, 200) // 2 recovers
	add(4, 500) // forgets 3, pending
	c.advance(time.Hour)
	add(5, 500) // forgets 2, nothing pending
	add(6, 500) // forgets 4, pending past the window
	add(1, 200) // 1 was forgotten
	d := r.Document()
	if d.Dropped.Callers != 2 {
		t.Errorf("dropped callers = %d; want 2", d.Dropped.Callers)
	}
	if e := findOp(t, d, "GET", "/a").Errors[0]; e.Recovered != 1 {
		t.Errorf("recovered = %d; want 1", e.Recovered)
	}
}

// TestNoCaller leaves exchanges of caller 0, the unknown caller, out of
// recoveries.
func TestNoCaller(t *testing.T) {
	r := New(Options{})
	r.Add(&Exchange{Method: "PUT", Path: "/a", Status: 422, Response: []byte("e"), Body: []byte(`{"s":"A"}`)})
	r.Add(&Exchange{Method: "PUT", Path: "/a", Status: 200, Body: []byte(`{"s":"a"}`)})
	if e := findOp(t, r.Document(), "PUT", "/a").Errors[0]; e.Recovered != 0 || e.Blamed != nil {
		t.Errorf("error %+v; want no recovery", e)
	}
}

// What the draft needs to judge a value and a recovery: how many callers
// sent each successful value, which values were too long to keep whole,
// and a recovery that changed the body's encoding.
func TestInferenceEvidence(t *testing.T) {
	long := strings.Repeat("a1", 40)
	for _, tc := range []struct {
		name  string
		xs    []Exchange
		check func(t *testing.T, op Operation)
	}{
		{"callers of each value", []Exchange{
			{Caller: 1, Method: "GET", Path: "/rules", RawQuery: "type=alert", Status: 200},
			{Caller: 2, Method: "GET", Path: "/rules", RawQuery: "type=alert", Status: 200},
			{Caller: 3, Method: "GET", Path: "/rules", RawQuery: "type=alert", Status: 200},
			{Caller: 4, Method: "GET", Path: "/rules", RawQuery: "type=alert", Status: 200},
			{Caller: 1, Method: "GET", Path: "/rules", RawQuery: "type=record", Status: 200},
			{Caller: 1, Method: "GET", Path: "/rules", RawQuery: "type=record", Status: 200},
			{Caller: 0, Method: "GET", Path: "/rules", RawQuery: "type=record", Status: 200},
		}, func(t *testing.T, op Operation) {
			want := []Value{{Value: "alert", Count: 4, Callers: 3}, {Value: "record", Count: 3, Callers: 1}}
			if got := op.Fields[0].Good; !slices.Equal(got, want) {
				t.Errorf("good = %v; want %v", got, want)
			}
		}},
		{"a value too long to keep whole feeds no shape", []Exchange{
			{Caller: 1, Method: "GET", Path: "/blobs", RawQuery: "digest=" + long, Status: 200},
			{Caller: 1, Method: "GET", Path: "/blobs", RawQuery: "digest=a1", Status: 200},
		}, func(t *testing.T, op Operation) {
			f := op.Fields[0]
			if f.Long != 1 || len(f.Shapes) != 1 || f.Shapes[0] != (Value{Value: "a0", Count: 1}) {
				t.Errorf("long %d, shapes %v; want 1 long, the shape a0 once", f.Long, f.Shapes)
			}
		}},
		{"a recovery that changed the encoding", []Exchange{
			{Caller: 1, Method: "POST", Path: "/query", RequestType: "application/json", Body: []byte(`{"query":"up"}`), Status: 400,
				ResponseType: "application/json", Response: []byte(`{"error":"no query"}`)},
			{Caller: 1, Method: "POST", Path: "/query", RequestType: "application/x-www-form-urlencoded; charset=utf-8", Status: 200},
		}, func(t *testing.T, op Operation) {
			b := op.Errors[0].Blamed
			i := slices.IndexFunc(b, func(b Blame) bool { return b.Field == "Content-Type" && b.In == "header" })
			if i < 0 || !slices.Equal(b[i].Changes, []Change{{From: "application/json", To: "application/x-www-form-urlencoded", Count: 1}}) {
				t.Errorf("blamed %+v; want Content-Type changed from JSON to a form", b)
			}
		}},
		{"the same encoding is no change", []Exchange{
			{Caller: 1, Method: "POST", Path: "/query", RequestType: "application/json", Body: []byte(`{"query":"up{"}`), Status: 400,
				ResponseType: "application/json", Response: []byte(`{"error":"bad query"}`)},
			{Caller: 1, Method: "POST", Path: "/query", RequestType: "Application/JSON", Body: []byte(`{"query":"up"}`), Status: 200},
		}, func(t *testing.T, op Operation) {
			for _, b := range op.Errors[0].Blamed {
				if b.In == "header" {
					t.Errorf("blamed %+v", b)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Options{})
			for i := range tc.xs {
				r.Add(&tc.xs[i])
			}
			d := r.Document()
			if len(d.Operations) != 1 {
				t.Fatalf("operations = %d; want 1", len(d.Operations))
			}
			tc.check(t, d.Operations[0])
		})
	}
}
