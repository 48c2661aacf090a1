package observe

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// operation returns the document's operation method path, failing the
// test when there is none.
func findOp(t *testing.T, d Document, method, path string) Operation {
	t.Helper()
	for _, op := range d.Operations {
		if op.Method == method && op.Path == path {
			return op
		}
	}
	t.Fatalf("no operation %s %s in %+v", method, path, d.Operations)
	return Operation{}
}

// TestDeclaredRoute keys a declared route by its name and reads its path
// variables from Vars, in the template's order.
func TestDeclaredRoute(t *testing.T) {
	r := New(Options{})
	for _, id := range []string{"T-1", "T-2"} {
		r.Add(&Exchange{Route: "assign", Template: "/tickets/{ticket_id}/assign/{agent}", Method: "post",
			Vars: map[string]string{"agent": "a7", "ticket_id": id}, Path: "/tickets/" + id + "/assign/a7", Status: 204})
	}
	// A variable the proxy did not send is not a value "".
	r.Add(&Exchange{Route: "assign", Template: "/tickets/{ticket_id}/assign/{agent}", Method: "POST",
		Vars: map[string]string{"ticket_id": "T-1"}, Path: "/tickets/T-1/assign/", Status: 404})
	d := r.Document()
	op := findOp(t, d, "POST", "/tickets/{ticket_id}/assign/{agent}")
	if op.Route != "assign" || op.Requests != 3 || op.Successes != 2 || len(op.Fields) != 2 {
		t.Fatalf("operation = %+v; want route assign, 2 successes of 3, 2 fields", op)
	}
	if f := op.Fields[0]; f.Name != "ticket_id" || f.In != "path" || len(f.Good) != 2 || f.Seen != 3 {
		t.Errorf("first field = %+v; want path ticket_id seen 3, with 2 good values", f)
	}
	if f := op.Fields[1]; f.Name != "agent" || f.Seen != 2 || !slices.Equal(f.Good, []Value{{Value: "a7", Count: 2}}) {
		t.Errorf("second field = %+v; want agent seen 2, a7 2", f)
	}
}

// TestErrors catalogues errors no rule explains, with a sample of the
// first, and leaves explained ones out.
func TestErrors(t *testing.T) {
	c := newClock()
	r := New(Options{Now: c.now})
	fail := func(status int, body string, explained bool) {
		r.Add(&Exchange{Method: "PATCH", Path: "/tickets/T-1", RawQuery: "v=1", Body: []byte(`{"status":"x"}`),
			Status: status, ResponseType: "application/json", Response: []byte(body), Explained: explained})
		c.advance(time.Second)
	}
	fail(422, `{"error":"bad status","id":1}`, false)
	fail(422, `{"error":"bad status","id":2}`, false)
	fail(409, `{"error":"closed"}`, false)
	fail(422, `{"error":"explained"}`, true)
	fail(500, "", false)

	op := findOp(t, r.Document(), "PATCH", "/tickets/{ticket_id}")
	if op.Requests != 5 {
		t.Errorf("requests = %d; want 5", op.Requests)
	}
	var got []string
	for _, e := range op.Errors {
		got = append(got, fmt.Sprintf("%d %s %q %d", e.Status, e.JSON, e.Text, e.Count))
	}
	want := []string{`422 error "bad status" 2`, `409 error "closed" 1`, `500  "" 1`}
	if !slices.Equal(got, want) {
		t.Fatalf("errors = %q; want %q", got, want)
	}
	e := op.Errors[0]
	t0 := newClock().now()
	if !e.FirstSeen.Equal(t0) || !e.LastSeen.Equal(t0.Add(time.Second)) || e.ContentType != "application/json" {
		t.Errorf("error seen %v to %v, type %q; want %v to %v, application/json", e.FirstSeen, e.LastSeen, e.ContentType, t0, t0.Add(time.Second))
	}
	wantSample := Sample{Method: "PATCH", Path: "/tickets/T-1", Query: "v=1", RequestBody: `{"status":"x"}`,
		Status: 422, ContentType: "application/json", ResponseBody: `{"error":"bad status","id":1}`}
	if e.Sample != wantSample {
		t.Errorf("sample = %+v; want the first, %+v", e.Sample, wantSample)
	}
}

// TestBounds forgets the least recently seen operations and errors past
// their bounds, and counts them.
func TestBounds(t *testing.T) {
	r := New(Options{Operations: 2, Errors: 2})
	get := func(path string, status int, text string) {
		r.Add(&Exchange{Method: "GET", Path: path, Status: status, Response: []byte(text)})
	}
	get("/a", 200, "")
	get("/b", 200, "")
	get("/a", 200, "") // /b is now the least recently seen
	get("/c", 200, "")
	get("/c", 500, "one")
	get("/c", 500, "two")
	get("/c", 500, "one") // two is now the least recently seen
	get("/c", 500, "three")

	d := r.Document()
	var paths []string
	for _, op := range d.Operations {
		paths = append(paths, op.Path)
	}
	if !slices.Equal(paths, []string{"/a", "/c"}) || d.Dropped.Operations != 1 {
		t.Errorf("operations %q, dropped %d; want [/a /c], 1", paths, d.Dropped.Operations)
	}
	var texts []string
	for _, e := range findOp(t, d, "GET", "/c").Errors {
		texts = append(texts, e.Text)
	}
	if !slices.Equal(texts, []string{"one", "three"}) || d.Dropped.Errors != 1 {
		t.Errorf("errors %q, dropped %d; want [one three], 1", texts, d.Dropped.Errors)
	}
}

// TestNoRetention reuses the buffers an exchange pointed to after Add,
// which must change nothing recorded.
func TestNoRetention(t *testing.T) {
	r := New(Options{})
	body := []byte(`{"status":"open","n":12}`)
	resp := []byte(`{"error":"bad status"}`)
	vars := map[string]string{"id": "T-1"}
	r.Add(&Exchange{Caller: 1, Route: "r", Template: "/t/{id}", Vars: vars, Method: "POST", Path: "/t/T-1",
		Body: body, Status: 422, Response: resp})
	r.Add(&Exchange{Method: "GET", Path: "/u/U-1", Body: body, Status: 200})
	before, _ := json.Marshal(r.Document())
	for i := range body {
		body[i] = 'x'
	}
	for i := range resp {
		resp[i] = 'y'
	}
	vars["id"] = "changed"
	after, _ := json.Marshal(r.Document())
	if string(before) != string(after) {
		t.Errorf("document changed with the caller's buffers:\n%s\n%s", before, after)
	}
}

// TestReset forgets everything and starts Since anew.
func TestReset(t *testing.T) {
	c := newClock()
	r := New(Options{Operations: 1, Now: c.now})
	r.Add(&Exchange{Method: "GET", Path: "/a", Status: 200})
	r.Add(&Exchange{Method: "GET", Path: "/b", Status: 500})
	c.advance(time.Hour)
	r.Reset()
	d := r.Document()
	if len(d.Operations) != 0 || d.Dropped != (Dropped{}) || !d.Since.Equal(c.now()) {
		t.Errorf("after Reset: %+v; want empty, since %v", d, c.now())
	}
	if d.Version != DocumentVersion || d.RecoveryWindow != "10m0s" {
		t.Errorf("version %d window %q; want %d, 10m0s", d.Version, d.RecoveryWindow, DocumentVersion)
	}
	r.Add(&Exchange{Method: "GET", Path: "/a", Status: 200})
	if d := r.Document(); len(d.Operations) != 1 {
		t.Errorf("after Reset and Add: %d operations; want 1", len(d.Operations))
	}
}

// TestConcurrent adds from several goroutines while another reads the
// document; run with -race.
func TestConcurrent(t *testing.T) {
	r := New(Options{Operations: 8, Errors: 4, Callers: 16})
	var wg sync.WaitGroup
	const workers, each = 4, 500
	for w := range workers {
		wg.Go(func() {
			x := &Exchange{Method: "PATCH", Body: make([]byte, 0, 64)}
			for i := range each {
				x.Caller = uint64(w*10 + i%3)
				x.Path = fmt.Sprintf("/tickets/T-%d", i%20)
				if i%5 == 0 {
					x.Path = fmt.Sprintf("/op%d/%d", i%11, i)
				}
				x.Body = fmt.Appendf(x.Body[:0], `{"status":"s%d"}`, i%7)
				x.Status, x.Response = 200, nil
				if i%2 == 0 {
					x.Status, x.Response = 422, fmt.Appendf(nil, `{"error":"e%d"}`, i%9)
				}
				r.Add(x)
			}
		})
	}
	done := make(chan struct{})
	var reads int
	go func() {
		defer close(done)
		for reads = 0; reads < 50; reads++ {
			if _, err := json.Marshal(r.Document()); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	<-done
	var requests int64
	d := r.Document()
	for _, op := range d.Operations {
		requests += op.Requests
	}
	if len(d.Operations) > 8 || requests > workers*each {
		t.Errorf("%d operations, %d requests; want at most 8 and %d", len(d.Operations), requests, workers*each)
	}
}
