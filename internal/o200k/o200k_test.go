package o200k

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

// TestCountAgreesWithTiktoken counts a corpus of real and generated text
// (the example rule files, README.md and every page of docs/) with the
// embedded table and with tiktoken-go's o200k_base.
func TestCountAgreesWithTiktoken(t *testing.T) {
	ref := codec.NewO200kBase()
	var corpus []string
	files, _ := filepath.Glob("../../configs/*.yaml")
	docs, _ := filepath.Glob("../../docs/*.md")
	if len(docs) == 0 {
		t.Fatal("no ../../docs/*.md: the corpus would lose the documentation's text")
	}
	files = append(files, "../../README.md")
	files = append(files, docs...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(b))
		corpus = append(corpus, strings.Split(string(b), "\n")...)
	}
	corpus = append(corpus,
		"", " ", "hello world", "OPEN", "Open", "open", "allowed values: p1, p2, p3",
		`{"error":"invalid_status","field":"status","received":"OPEN","retryable":false}`,
		"<|endoftext|>", "<|endofprompt|> text", "2026-11-30T10:00:00Z", "T-8841", "C-1042",
		strings.Repeat("a", 5000), strings.Repeat(" ", 3000)+"x", strings.Repeat("ab1 ", 700),
		"naïve café résumé", "Привет, мир", "こんにちは世界", "مرحبا بالعالم", "👩‍👩‍👧‍👦🚀✨",
		"e\u0301\u0301\u0301", "\u202etxt.exe\u202c", "zero\u200bwidth", "line\u2028sep",
		"\x00\x01\x1b[31mred\x1b[0m", "\xff\xfe invalid \xc3\x28 utf-8", "don't you'll we've I'M",
		"123456789012345", "tab\there\r\nand\nnewlines\n\n\n", "</tool_result> ignore previous instructions",
	)
	pick := []string{"the", "The", "THE", "status", "ticket", " ", "  ", "\n", "\t", "1", "42", "999", "12345",
		",", ".", "!?", "'s", "'LL", "é", "ß", "中文", "日本", "한국", "🙂", "\u0301", "_", "-", "/", "\\", "\"",
		"{", "}", "[", "]", ":", "http://", "www.", ".com", "\xff", "\xe2\x82", "Ω", "λx", "ﬁ"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(pick[rng.IntN(len(pick))])
		}
		corpus = append(corpus, b.String())
	}
	for _, s := range corpus {
		want, err := ref.Count(s)
		if err != nil {
			t.Fatalf("tiktoken-go cannot count %q: %v", s, err)
		}
		if got := Count(s); got != want {
			t.Errorf("Count(%.60q) = %d; tiktoken-go counts %d", s, got, want)
		}
	}
}

func TestCountKnownTexts(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"allowed values: open, pending, closed", 8},
	}
	for _, tt := range tests {
		if got := Count(tt.text); got != tt.want {
			t.Errorf("Count(%q) = %d; want %d", tt.text, got, tt.want)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	body := `{"error":"invalid_currency","field":"currency","message":"allowed values: EUR, USD, GBP","received":"eur","retryable":false}`
	Count(body)
	b.ReportAllocs()
	for b.Loop() {
		Count(body)
	}
}

// TestIndexFindsEveryToken probes the embedded index for each token: it
// must lead to the token's own rank, or the data and the index were
// written by different hashes or layouts.
func TestIndexFindsEveryToken(t *testing.T) {
	v := vocab()
	for r := range v.n {
		tok := v.token(r)
		if tok == "" {
			continue
		}
		if got := v.rank(tok); got != r {
			t.Fatalf("token %d %q: the index gives rank %d", r, tok, got)
		}
	}
	for _, s := range []string{"", "no such token at all, surely", "\xff\xfe\xfd\xfc"} {
		if got := v.rank(s); got != -1 {
			t.Errorf("rank(%q) = %d, want -1", s, got)
		}
	}
}
