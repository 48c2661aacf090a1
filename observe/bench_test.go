package observe

import (
	"strconv"
	"testing"
)

// BenchmarkAdd measures Add on the request path: a success on a known
// operation, a known error, and an error never seen before.
func BenchmarkAdd(b *testing.B) {
	body := []byte(`{"status":"open","priority":2,"assignee":"ada@example.com","due":"2024-05-01","tags":["a"]}`)
	for _, bc := range []struct {
		name     string
		status   int
		distinct bool // each error's text differs
	}{
		{"success", 200, false},
		{"error", 422, false},
		{"unmatched-error", 422, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := New(Options{})
			x := &Exchange{Method: "PATCH", RawQuery: "expand=tags&v=2", Body: body, Status: bc.status, ResponseType: "application/json"}
			paths := []string{"/tickets/T-1041", "/tickets/T-88", "/customers/42/orders/7", "/tickets/T-7/assign"}
			resp := make([]byte, 0, 64)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				x.Caller = uint64(i % 64)
				x.Path = paths[i%len(paths)]
				if bc.status >= 400 {
					resp = append(resp[:0], `{"error":"invalid status`...)
					if bc.distinct {
						resp = strconv.AppendInt(append(resp, ' '), int64(i), 10)
					}
					x.Response = append(resp, `"}`...)
				}
				r.Add(x)
				i++
			}
		})
	}
}
