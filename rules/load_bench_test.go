package rules

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/signpost-proxy/signpost/test/bench/rulegen"
)

// BenchmarkParseLargeFile loads generated rule files of 10 and 1,000 routes
// with 10 error rules each: parsing, validation and compilation.
func BenchmarkParseLargeFile(b *testing.B) {
	for _, n := range []int{10, 1000} {
		var buf bytes.Buffer
		if err := rulegen.Write(&buf, n, 10); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				cfg, err := Parse("generated.yaml", buf.Bytes())
				if err != nil {
					b.Fatal(err)
				}
				if len(cfg.Routes) != n {
					b.Fatalf("%d routes; want %d", len(cfg.Routes), n)
				}
			}
		})
	}
}
