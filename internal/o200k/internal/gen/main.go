// Command gen writes o200k.bin, the compact vocabulary package o200k
// embeds, from the o200k_base vocabulary of github.com/tiktoken-go/tokenizer.
//
// The file holds, little-endian: the magic "o200k\x01", the number of ranks
// n and the number of index slots m as uint32s, n+1 uint32 offsets, the m
// uint32 slots of the index (internal/index), and the tokens' bytes in rank
// order; token r is bytes[offset[r]:offset[r+1]], empty for an unused rank.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"

	"github.com/signpost-proxy/signpost/internal/o200k/internal/index"
	"github.com/tiktoken-go/tokenizer/codec"
)

// ranks is one past the highest ordinary rank of o200k_base; its special
// tokens start at 199999 and are not part of byte-pair merging.
const ranks = 199998

func main() {
	out := flag.String("o", "o200k.bin", "output `file`")
	flag.Parse()
	c := codec.NewO200kBase()
	var data bytes.Buffer
	offsets := make([]uint32, 0, ranks+1)
	missing := 0
	for r := range ranks {
		offsets = append(offsets, uint32(data.Len()))
		tok, err := c.Decode([]uint{uint(r)})
		if err != nil || tok == "" {
			missing++
			continue
		}
		data.WriteString(tok)
	}
	offsets = append(offsets, uint32(data.Len()))
	tokens := data.Bytes()
	slots := index.Build(ranks, func(r int) string { return string(tokens[offsets[r]:offsets[r+1]]) })
	var b bytes.Buffer
	b.WriteString("o200k\x01")
	binary.Write(&b, binary.LittleEndian, uint32(ranks))
	binary.Write(&b, binary.LittleEndian, uint32(len(slots)))
	binary.Write(&b, binary.LittleEndian, offsets)
	binary.Write(&b, binary.LittleEndian, slots)
	b.Write(tokens)
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d ranks (%d unused), %d bytes\n", *out, ranks, missing, b.Len())
}
