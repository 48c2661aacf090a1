package o200k

import "container/heap"

// noRank marks a pair that is no token.
const noRank = int32(1<<31 - 1)

// node is one part of a piece being merged: it starts at its index and
// runs to the start of next; rank is that of the pair it begins.
type node struct {
	prev, next int32
	rank       int32
}

// candidate is a pair that could merge, as it was when queued.
type candidate struct{ rank, at int32 }

// candidates orders merges by rank, then leftmost first, as byte-pair
// encoding applies them.
type candidates []candidate

func (h candidates) Len() int { return len(h) }
func (h candidates) Less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].at < h[b].at
}
func (h candidates) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *candidates) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candidates) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// merges returns how many tokens piece, which is no token itself, becomes:
// starting from single bytes, the adjacent pair of lowest rank merges until
// no pair is a token.
func (v *vocabulary) merges(piece string) int {
	n := int32(len(piece))
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int32) int32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if r := v.rank(piece[i:k]); r >= 0 {
			return int32(r)
		}
		return noRank
	}
	queue := make(candidates, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			queue = append(queue, candidate{r, i})
		}
	}
	heap.Init(&queue)
	tokens := int(n)
	for queue.Len() > 0 {
		top := heap.Pop(&queue).(candidate)
		i := top.at
		if nodes[i].rank != top.rank {
			continue // stale: the pair changed since it was queued
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		tokens--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				heap.Push(&queue, candidate{nodes[b].rank, b})
			}
		}
	}
	return tokens
}
