package redact

import (
	"strings"
	"testing"
)

// BenchmarkClip measures masking an upstream error body for the log: one
// with no trigger of a secret pattern, the usual case; one with a trigger
// and no secret; one quoting the request's JSON body, with its secrets;
// and a text body with a secret, which the patterns mask.
func BenchmarkClip(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"plain", `{"error":"Invalid status","detail":"status must be one of open, pending, closed"}`},
		{"trigger", `{"error":"Invalid token","detail":"the session expired at 12:03:11; sign in again"}`},
		{"embedded", `{"error":"bad request","request":"{\"user\":\"ada\",\"password\":\"hunter2\",\"token\":\"abc\"}"}`},
		{"text", "upstream refused: password=hunter2 for user ada at db-7.internal"},
		{"long", `{"error":"bad request","request":"{\"note\":\"` + strings.Repeat("x", 4000) + `\",\"password\":\"hunter2\"}"}`},
	} {
		body := []byte(bc.body)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Clip(body)
			}
		})
	}
}
