// Package o200k counts tokens as the o200k_base byte-pair encoding of
// current OpenAI models does: what a text costs in a model's context.
//
// The vocabulary is embedded in compact form (2.2 MB of read-only data and
// a 2 MiB index built on first use) rather than as a map of 200,000
// strings, which would cost a proxy several times that in heap for as long
// as it runs. go generate rebuilds the data from
// github.com/tiktoken-go/tokenizer, which the tests also count against.
package o200k

//go:generate go run ./internal/gen -o o200k.bin

import (
	_ "embed"
	"encoding/binary"
	"sync"

	"github.com/dlclark/regexp2/v2"
)

//go:embed o200k.bin
var table string

// split is o200k_base's pre-tokenizer: byte-pair merging happens within
// the pieces it cuts a text into, never across them.
const split = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// vocabulary finds a token's rank by hashing its bytes into an
// open-addressed table of rank+1 (0 marks an empty slot).
type vocabulary struct {
	n     int    // ranks
	off   string // n+1 little-endian uint32 offsets into data
	data  string
	slots []uint32
	mask  uint32
	split *regexp2.Regexp
}

var vocab = sync.OnceValue(func() *vocabulary {
	const header = 6 + 4
	if len(table) < header || table[:6] != "o200k\x00" {
		panic("o200k: the embedded vocabulary is damaged; run go generate in rules/o200k")
	}
	n := int(binary.LittleEndian.Uint32([]byte(table[6:10])))
	v := &vocabulary{n: n, off: table[header : header+4*(n+1)], data: table[header+4*(n+1):]}
	size := uint32(1)
	for size < uint32(2*n) {
		size <<= 1
	}
	v.slots, v.mask = make([]uint32, size), size-1
	for r := range n {
		tok := v.token(r)
		if tok == "" {
			continue
		}
		i := hash(tok) & v.mask
		for v.slots[i] != 0 {
			i = (i + 1) & v.mask
		}
		v.slots[i] = uint32(r) + 1
	}
	v.split = regexp2.MustCompile(split, regexp2.None)
	return v
})

func (v *vocabulary) offset(r int) int {
	o := v.off[4*r : 4*r+4]
	return int(uint32(o[0]) | uint32(o[1])<<8 | uint32(o[2])<<16 | uint32(o[3])<<24)
}

func (v *vocabulary) token(r int) string { return v.data[v.offset(r):v.offset(r+1)] }

// rank returns the rank of the token spelled s, or -1 when s is no token.
func (v *vocabulary) rank(s string) int {
	for i := hash(s) & v.mask; ; i = (i + 1) & v.mask {
		r := v.slots[i]
		if r == 0 {
			return -1
		}
		if v.token(int(r-1)) == s {
			return int(r - 1)
		}
	}
}

// hash is FNV-1a: fast on the short strings tokens are.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Count returns the number of o200k_base tokens in s, or -1 when s cannot
// be split into pieces. Special tokens such as <|endoftext|> are counted as
// the text they are spelled with.
func Count(s string) int {
	v := vocab()
	n := 0
	m, err := v.split.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = v.split.FindNextMatch(m) {
		piece := m.String()
		if v.rank(piece) >= 0 {
			n++
		} else {
			n += v.merges(piece)
		}
	}
	if err != nil {
		return -1
	}
	return n
}
