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
