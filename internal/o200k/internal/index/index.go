// Package index is the open-addressed hash index over o200k_base's tokens
// that go generate writes into the embedded vocabulary and package o200k
// probes: both sides hash and place tokens by this one definition.
package index

// Hash is FNV-1a: fast on the short strings tokens are.
func Hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Size is the number of slots for n tokens: the power of two at least
// twice n, so that probes for the many strings that are no token end
// soon.
func Size(n int) uint32 {
	size := uint32(1)
	for size < uint32(2*n) {
		size <<= 1
	}
	return size
}

// Build places each of the n ranks whose token is not empty at its hash,
// probing linearly: a slot holds rank+1, and 0 marks it empty.
func Build(n int, token func(rank int) string) []uint32 {
	size := Size(n)
	slots, mask := make([]uint32, size), size-1
	for r := range n {
		tok := token(r)
		if tok == "" {
			continue
		}
		i := Hash(tok) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = uint32(r) + 1
	}
	return slots
}
