// Package o200k counts tokens as the o200k_base byte-pair encoding of
// current OpenAI models does: what a text costs in a model's context.
//
// The vocabulary is embedded in compact form, the tokens and a hash index
// over them (4.3 MB of read-only data, written by go generate), rather than
// as a map of 200,000 strings, which would cost a proxy several times that
// in heap for as long as it runs. Nothing is built at run time: the data is
// mapped from the binary and paged in as lookups touch it, and the kernel
// may drop those pages again under pressure, as it may not heap. go
// generate rebuilds the data from github.com/tiktoken-go/tokenizer, which
// the tests also count against.
package o200k

//go:generate go run ./internal/gen -o o200k.bin

import (
	_ "embed"
	"encoding/binary"
	"sync"

	"github.com/dlclark/regexp2/v2"
	"github.com/signpost-proxy/signpost/internal/o200k/internal/index"
)

//go:embed o200k.bin
var table string

// split is o200k_base's pre-tokenizer: byte-pair merging happens within
// the pieces it cuts a text into, never across them.
const split = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// vocabulary finds a token's rank by hashing its bytes into an
// open-addressed table of rank+1 (0 marks an empty slot), all of it read
// in place from the embedded data.
type vocabulary struct {
	n     int    // ranks
	off   string // n+1 little-endian uint32 offsets into data
	slots string // the index's little-endian uint32 slots
	mask  uint32
	data  string
	split *regexp2.Regexp
}

var vocab = sync.OnceValue(func() *vocabulary {
	const header = 6 + 4 + 4
	if len(table) < header || table[:6] != "o200k\x01" {
		panic("o200k: the embedded vocabulary is damaged or of an older layout; run go generate in internal/o200k")
	}
	n := int(binary.LittleEndian.Uint32([]byte(table[6:10])))
	size := int(binary.LittleEndian.Uint32([]byte(table[10:14])))
	if size != int(index.Size(n)) || len(table) < header+4*(n+1)+4*size {
		panic("o200k: the embedded vocabulary's index does not fit its tokens; run go generate in internal/o200k")
	}
	off := header + 4*(n+1)
	return &vocabulary{n: n, off: table[header:off], slots: table[off : off+4*size], mask: uint32(size - 1),
		data: table[off+4*size:], split: regexp2.MustCompile(split, regexp2.None)}
})

// u32 reads the little-endian uint32 at i of s.
func u32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func (v *vocabulary) offset(r int) int { return int(u32(v.off, 4*r)) }

func (v *vocabulary) token(r int) string { return v.data[v.offset(r):v.offset(r+1)] }

// rank returns the rank of the token spelled s, or -1 when s is no token.
func (v *vocabulary) rank(s string) int {
	for i := index.Hash(s) & v.mask; ; i = (i + 1) & v.mask {
		r := u32(v.slots, 4*int(i))
		if r == 0 {
			return -1
		}
		if v.token(int(r-1)) == s {
			return int(r - 1)
		}
	}
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
