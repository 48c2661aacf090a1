package index

import (
	"fmt"
	"testing"
)

func TestBuild(t *testing.T) {
	tokens := []string{"a", "", "ab", "abc", "b", "ba"}
	slots := Build(len(tokens), func(r int) string { return tokens[r] })
	if len(slots) != int(Size(len(tokens))) || len(slots) != 16 {
		t.Fatalf("%d slots for %d tokens, want 16", len(slots), len(tokens))
	}
	mask := uint32(len(slots) - 1)
	for r, tok := range tokens {
		found := -1
		for i := Hash(tok) & mask; slots[i] != 0; i = (i + 1) & mask {
			if tokens[slots[i]-1] == tok {
				found = int(slots[i] - 1)
				break
			}
		}
		want := r
		if tok == "" {
			want = -1 // an unused rank is not placed
		}
		if found != want {
			t.Errorf("token %q: found rank %d, want %d", tok, found, want)
		}
	}
}

func TestHashIsFNV1a(t *testing.T) {
	// FNV-1a's published values: the index written into the vocabulary
	// depends on them staying what they are.
	for s, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		if got := Hash(s); got != want {
			t.Errorf("Hash(%q) = %s, want %#x", s, fmt.Sprintf("%#x", got), want)
		}
	}
}
