package observe

import (
	"runtime"
	"strconv"
	"testing"
)

// TestMemoryBound feeds a million distinct errors no rule explains to a
// few operations: each keeps its bound of errors, the rest are counted as
// dropped, and the live heap stays flat.
func TestMemoryBound(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 200_000
	}
	const ops = 4
	r := New(Options{})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	x := &Exchange{Method: "POST", Status: 500, ResponseType: "application/json"}
	body := make([]byte, 0, 128)
	resp := make([]byte, 0, 128)
	paths := [ops]string{"/a/1", "/b/2", "/c/3", "/d/4"}
	feed := func(from, to int) {
		for i := from; i < to; i++ {
			x.Caller = uint64(i % 1000)
			x.Path = paths[i%ops]
			body = append(append(append(body[:0], `{"n":`...), strconv.Itoa(i)...), `,"kind":"a"}`...)
			resp = append(append(append(resp[:0], `{"error":"failure number `...), strconv.Itoa(i)...), `"}`...)
			x.Body, x.Response = body, resp
			r.Add(x)
		}
	}
	feed(0, 10_000) // reach the bounds before the baseline
	base := heap()
	feed(10_000, n)
	grown := int64(heap()) - int64(base)

	d := r.Document()
	if len(d.Operations) != ops {
		t.Fatalf("operations = %d; want %d", len(d.Operations), ops)
	}
	for _, op := range d.Operations {
		if len(op.Errors) != defaultErrors {
			t.Errorf("%s errors = %d; want %d", op.Path, len(op.Errors), defaultErrors)
		}
	}
	if want := int64(n - ops*defaultErrors); d.Dropped.Errors != want {
		t.Errorf("dropped errors = %d; want %d", d.Dropped.Errors, want)
	}
	if grown > 16<<20 {
		t.Errorf("live heap grew %d bytes over %d errors; want under 16 MiB", grown, n)
	}
	t.Logf("%d errors: live heap %d bytes at the bounds, grew %d bytes", n, base, grown)
}

// TestCallersMemoryBound fills the table of callers at its worst: every
// caller with errors pending on as many operations as it may, each with
// as many values held as a pending error keeps. Callers past the bound are
// forgotten, and the heap the record holds stays under a bar a sidecar can
// carry.
func TestCallersMemoryBound(t *testing.T) {
	callers := defaultCallers
	if raceEnabled || testing.Short() {
		callers = 2_000
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap() // before the record: its tables are counted too
	r := New(Options{Callers: callers})
	// A body of values as long as a value is kept, more than are held.
	body := []byte("{")
	for i := range maxHeld + 8 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `"field_`+strconv.Itoa(i)+`":"`...)
		for range valueBytes {
			body = append(body, 'v')
		}
		body = append(body, '"')
	}
	body = append(body, '}')
	x := &Exchange{Method: "POST", Status: 400, ResponseType: "application/json", Response: []byte(`{"error":"Invalid"}`), Body: body}
	for c := range 2 * callers {
		x.Caller = uint64(c + 1)
		for op := range maxPending + 1 {
			x.Path = "/op" + strconv.Itoa(op)
			r.Add(x)
		}
	}
	grown := int64(heap()) - int64(base)
	runtime.KeepAlive(r)
	perCaller := grown / int64(callers)
	// maxPending errors of maxHeldBytes of values each, and what holds them.
	if bar := int64(maxPending*maxHeldBytes) * 3; perCaller > bar {
		t.Errorf("%d bytes a caller at worst, want under %d", perCaller, bar)
	}
	if d := r.Document(); d.Dropped.Callers == 0 {
		t.Errorf("no caller forgotten with a recovery pending, after %d callers over a bound of %d", 2*callers, callers)
	}
	t.Logf("%d callers at their worst: the record grew %d bytes, %d a caller", callers, grown, perCaller)
}
