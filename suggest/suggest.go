// Package suggest proposes the permitted values closest to one that was
// rejected: the "did you mean" of an error body or of a rule-file problem.
//
// Suggestions are pure and deterministic. A value that matches an alias
// comes first, then a value that differs only in case, then values within a
// small edit distance, ranked by distance and then by declared order. When
// nothing is close, there is no suggestion: a wrong hint costs the caller more
// than none.
//
// A Set is built for the hot path of a proxy: AppendSuggestions makes no
// allocation for a received value of up to 64 runes, and visits only the
// permitted values whose length is within the edit bound of it.
package suggest

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Max is the most suggestions Suggest returns.
const Max = 3

const (
	// maxRunes is the longest received value, in runes, that
	// AppendSuggestions folds and compares in stack buffers. A longer one
	// gets the same answer, from buffers on the heap.
	maxRunes = 64
	// maxBound is the largest Bound.
	maxBound = 3
	// stackRows is enough distance-table cells for Distance between
	// values of up to maxRunes runes.
	stackRows = 3 * (maxRunes + 1)
)

// Set is a permitted-value set prepared for suggestions. It is never
// modified after NewSet, and each call keeps its scratch space to itself,
// so any number of goroutines may use it at once.
type Set struct {
	declared   int                 // values as declared, repeats included
	values     []string            // distinct, in declared order
	exact      map[string]struct{} // values
	folded     map[string]int32    // case-folded value -> first index in values
	sameFold   []int32             // index -> next index of the same folded value, or -1
	aliases    map[string]string   // case-folded alias -> permitted value
	aliasRunes int                 // the longest alias, in runes

	// entries holds every value's folded runes and rune counts, ordered by
	// rune length and then by declared order; entries[start[n]:start[n+1]]
	// are the values of n runes.
	entries []entry
	present []uint64 // entries[i].count[0], alone for a fast first pass
	start   []int32
	runes   []rune // the folded runes of all values, end to end
}

type entry struct {
	index int32  // into values
	off   int32  // into runes
	n     int32  // runes
	count counts // of the folded runes
}

// counts is a multiset of runes in brief: each rune falls in one of 64
// buckets (see bucket), and count[t] has the bit of every bucket that holds
// more than t runes. Each edit adds at most one rune and removes at most
// one, so the runes one side has in excess over the other are a lower bound
// on the distance between them, one that costs a few instructions. Merged
// buckets and runes beyond the third of a kind go uncounted, which weakens
// the bound but never breaks it.
type counts [3]uint64

// add counts r.
func (c *counts) add(r rune) {
	bit := uint64(1) << bucket(r)
	for t := range c {
		if c[t]&bit == 0 {
			c[t] |= bit
			return
		}
	}
}

// NewSet prepares values, in declared order, and an alias table mapping
// other names callers send (matched without regard to case) to the permitted
// value they stand for. It copies what it keeps: changing values or aliases
// afterwards does not change the Set. A value listed twice counts once, at
// its first place, so that no suggestion repeats. When two aliases differ
// only in case, the one that sorts first wins.
func NewSet(values []string, aliases map[string]string) *Set {
	s := &Set{
		declared: len(values),
		values:   distinct(values),
		exact:    make(map[string]struct{}, len(values)),
		folded:   make(map[string]int32, len(values)),
	}
	values = s.values
	maxLen := 0
	folded := make([][]rune, len(values))
	s.sameFold = make([]int32, len(values))
	lastFold := make(map[string]int32, len(values))
	for i, v := range values {
		s.exact[v] = struct{}{}
		f := strings.ToLower(v)
		s.sameFold[i] = -1
		if j, ok := lastFold[f]; ok {
			s.sameFold[j] = int32(i)
		} else {
			s.folded[f] = int32(i)
		}
		lastFold[f] = int32(i)
		folded[i] = []rune(f)
		maxLen = max(maxLen, len(folded[i]))
	}

	// A counting sort by rune length keeps declared order within a length.
	s.start = make([]int32, maxLen+2)
	for _, f := range folded {
		s.start[len(f)+1]++
	}
	for n := 1; n < len(s.start); n++ {
		s.start[n] += s.start[n-1]
	}
	s.entries = make([]entry, len(values))
	s.present = make([]uint64, len(values))
	next := slices.Clone(s.start)
	for i, f := range folded {
		e := entry{index: int32(i), off: int32(len(s.runes)), n: int32(len(f))}
		for _, r := range f {
			e.count.add(r)
		}
		s.runes = append(s.runes, f...)
		s.entries[next[len(f)]] = e
		s.present[next[len(f)]] = e.count[0]
		next[len(f)]++
	}

	if len(aliases) > 0 {
		s.aliases = make(map[string]string, len(aliases))
		keys := make([]string, 0, len(aliases))
		for alias := range aliases {
			keys = append(keys, alias)
		}
		sort.Strings(keys)
		for _, alias := range keys {
			f := strings.ToLower(alias)
			if _, ok := s.aliases[f]; !ok {
				s.aliases[f] = aliases[alias]
				s.aliasRunes = max(s.aliasRunes, utf8.RuneCountInString(f))
			}
		}
	}
	return s
}

// distinct returns a copy of values without repeats, in first-seen order.
func distinct(values []string) []string {
	out := make([]string, 0, len(values))
	seen := make(map[string]struct{}, len(values))
	for _, v := range values {
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	return out
}

// Len is the number of permitted values, as declared.
func (s *Set) Len() int { return s.declared }

// Has reports whether v is permitted exactly as sent.
func (s *Set) Has(v string) bool {
	_, ok := s.exact[v]
	return ok
}

// Suggest returns at most Max permitted values for received, best first,
// and nil when received is permitted exactly as sent or nothing is close.
// The slice is the caller's own; AppendSuggestions avoids allocating it.
func (s *Set) Suggest(received string) []string {
	var buf [Max]string
	got := s.AppendSuggestions(buf[:0], received)
	if len(got) == 0 {
		return nil
	}
	return slices.Clone(got)
}

// AppendSuggestions appends to dst what Suggest returns for received, and
// returns the extended slice. It allocates nothing when received is at most
// 64 runes long and dst has room for Max more values.
func (s *Set) AppendSuggestions(dst []string, received string) []string {
	if _, ok := s.exact[received]; ok {
		return dst // permitted as sent: nothing to suggest
	}
	n := utf8.RuneCountInString(received)
	bound := Bound(n)
	first, last := s.span(n-bound, n+bound)
	if first == last && n > s.aliasRunes {
		return dst // no alias and no value is that long
	}

	var runeBuf [maxRunes]rune
	var byteBuf [maxRunes * utf8.UTFMax]byte
	folded, key := runeBuf[:], byteBuf[:]
	if n > maxRunes {
		folded, key = make([]rune, n), make([]byte, n*utf8.UTFMax)
	}
	nb, count := fold(received, folded, key)
	folded, key = folded[:n], key[:nb]

	// Looking a map up by string(key) does not allocate.
	if v, ok := s.aliases[string(key)]; ok {
		return append(dst, v)
	}
	if i, ok := s.folded[string(key)]; ok {
		return append(dst, s.values[i])
	}
	if bound == 0 || first == last {
		return dst
	}

	var rank ranking
	var match matcher // built for the first value that needs it
	var rows []int32  // for osa, above maxRunes
	for m := max(n-bound, 0); m <= min(n+bound, len(s.start)-2); m++ {
		if abs(n-m) > rank.bound(bound) {
			continue
		}
		lo, hi := int(s.start[m]), int(s.start[m+1])
		if bound == 1 && m == n-1 && hi-lo > n {
			// One deletion from received, looked up, is cheaper than
			// a pass over this many values.
			s.deletions(&rank, folded)
			continue
		}
		for i := lo; ; i++ {
			k := rank.bound(bound)
			// Most values fail on the runes present at all, so that test
			// runs first, in a tight loop over a dense array.
			if i = sieve(s.present, count[0], k, i, hi); i == hi {
				break
			}
			e := &s.entries[i]
			mine := bits.OnesCount64(count[0]&^e.count[0]) + bits.OnesCount64(count[1]&^e.count[1]) + bits.OnesCount64(count[2]&^e.count[2])
			theirs := bits.OnesCount64(e.count[0]&^count[0]) + bits.OnesCount64(e.count[1]&^count[1]) + bits.OnesCount64(e.count[2]&^count[2])
			if mine > k || theirs > k {
				continue
			}
			value := s.runes[e.off : e.off+e.n]
			var d int
			switch {
			case abs(n-m) == k:
				// At the bound only deletions from the longer side fit.
				if !isSubsequence(value, folded) && !isSubsequence(folded, value) {
					continue
				}
				d = k
			case n <= maxRunes:
				if !match.built {
					match.init(folded)
				}
				d = match.distance(folded, value, k)
			default:
				if rows == nil {
					rows = make([]int32, 3*(n+bound+1))
				}
				d = osa(folded, value, k, rows)
			}
			if d <= k {
				rank.add(e.index, d)
			}
		}
	}
	for _, h := range rank.best[:rank.n] {
		dst = append(dst, s.values[h.index])
	}
	return dst
}

// sieve returns the first index from i up to hi at which present holds
// the runes of a value that in lacks no more than k of, nor has more than
// k the value lacks; or hi.
func sieve(present []uint64, in uint64, k, i, hi int) int {
	for ; i < hi; i++ {
		if bits.OnesCount64(present[i]&^in) <= k && bits.OnesCount64(in&^present[i]) <= k {
			return i
		}
	}
	return hi
}

// deletions ranks the values, folded, that are folded with one rune
// deleted, at distance one. folded is at most 5 runes long.
func (s *Set) deletions(rank *ranking, folded []rune) {
	var buf [5 * utf8.UTFMax]byte
	for p := range folded {
		if p > 0 && folded[p] == folded[p-1] {
			continue // the same string as deleting p-1
		}
		nb := 0
		for q, r := range folded {
			if q != p {
				nb += utf8.EncodeRune(buf[nb:], r)
			}
		}
		if i, ok := s.folded[string(buf[:nb])]; ok {
			for ; i >= 0; i = s.sameFold[i] {
				rank.add(i, 1)
			}
		}
	}
}

// ranking keeps the Max best values seen, by distance and then by declared
// order, whatever order they are seen in.
type ranking struct {
	best [Max]struct{ index, d int32 }
	n    int
}

func (r *ranking) add(index int32, d int) {
	j := r.n
	for j > 0 && (r.best[j-1].d > int32(d) || r.best[j-1].d == int32(d) && r.best[j-1].index > index) {
		j--
	}
	if j >= Max {
		return
	}
	if r.n < Max {
		r.n++
	}
	copy(r.best[j+1:r.n], r.best[j:r.n-1])
	r.best[j].index, r.best[j].d = index, int32(d)
}

// bound is the largest distance that can still enter the ranking: k until
// it is full, then the distance of the last kept, which a value declared
// earlier can still displace.
func (r *ranking) bound(k int) int {
	if r.n < Max {
		return k
	}
	return int(r.best[Max-1].d)
}

// span returns the range of s.entries holding the values of lo to hi runes.
func (s *Set) span(lo, hi int) (first, last int) {
	lo = max(lo, 0)
	hi = min(hi, len(s.start)-2)
	if lo > hi {
		return 0, 0
	}
	return int(s.start[lo]), int(s.start[hi+1])
}

// fold lower-cases received rune by rune, as strings.ToLower does, into
// folded (one rune each) and key (UTF-8, for map lookups). It returns the
// bytes written to key and the counts of the folded runes. folded must have
// room for every rune of received and key for utf8.UTFMax bytes each.
func fold(received string, folded []rune, key []byte) (nb int, count counts) {
	i := 0
	for ; i < len(received); i++ {
		c := received[i]
		if c >= utf8.RuneSelf {
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		folded[i], key[i] = rune(c), c
		count.add(rune(c))
	}
	nb, nr := i, i
	for _, r := range received[i:] {
		r = unicode.ToLower(r)
		folded[nr] = r
		nr++
		nb += utf8.EncodeRune(key[nb:], r)
		count.add(r)
	}
	return nb, count
}

// bucket maps a folded rune to one of 64 buckets: each ASCII letter and
// digit its own, every other rune one of the remaining 28.
func bucket(r rune) uint32 {
	switch {
	case 'a' <= r && r <= 'z':
		return uint32(r - 'a')
	case '0' <= r && r <= '9':
		return uint32(26 + r - '0')
	default:
		return 36 + uint32(r)%28
	}
}

// matcher computes distances from one folded received value of 1 to 64
// runes, with Hyyrö's bit-parallel algorithm ("A bit-vector algorithm for
// computing Levenshtein and Damerau edit distances", 2003): one pass over
// the other value, a few word operations per rune, whatever the bound.
type matcher struct {
	built bool                  // init has run
	ascii [utf8.RuneSelf]uint64 // bit i set: rune i of the value is this one
	// The value's other runes, each once, chained by hash: head[h] and
	// next[j] are 1 + the index in other of the next rune, or 0.
	head  [64]uint8
	next  [maxRunes]uint8
	other [maxRunes]rune
	eq    [maxRunes]uint64 // bits of other[j], as in ascii
	nr    int              // runes in other
}

func (p *matcher) init(a []rune) {
	p.built = true
	for i, r := range a {
		bit := uint64(1) << i
		if r < utf8.RuneSelf {
			p.ascii[r] |= bit
			continue
		}
		j := p.find(r)
		if j < 0 {
			j = p.nr
			p.nr++
			h := runeHash(r)
			p.other[j], p.next[j], p.head[h] = r, p.head[h], uint8(j+1)
		}
		p.eq[j] |= bit
	}
}

func runeHash(r rune) uint32 { return uint32(r) * 0x9e3779b1 >> 26 }

// find returns the index of r in p.other, or -1.
func (p *matcher) find(r rune) int {
	for j := int(p.head[runeHash(r)]) - 1; j >= 0; j = int(p.next[j]) - 1 {
		if p.other[j] == r {
			return j
		}
	}
	return -1
}

// positions returns the bits of the received value's runes equal to r.
func (p *matcher) positions(r rune) uint64 {
	if r < utf8.RuneSelf {
		return p.ascii[r]
	}
	if j := p.find(r); j >= 0 {
		return p.eq[j]
	}
	return 0
}

// distance is the optimal-string-alignment distance from a, the received
// value that init saw, to b, or k+1 once it must exceed k.
//
// A prefix or suffix the two share costs nothing and is left out: no
// transposition pays across its edge. That shortens the pass most for the
// values that get this far, which tend to share most of their runes.
func (p *matcher) distance(a, b []rune, k int) int {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	n := len(a) - pre - suf
	b = b[pre : len(b)-suf]
	if n == 0 || len(b) == 0 {
		return min(n+len(b), k+1)
	}
	// Bits at and above n stand for the shared suffix; nothing flows down
	// from them, so they may hold what they like.
	top := uint(n-1) & 63
	vp, vn, d0, pmPrev := ^uint64(0), uint64(0), uint64(0), uint64(0)
	d := n
	for j, r := range b {
		pm := p.positions(r) >> uint(pre&63)
		tr := (^d0 & pm) << 1 & pmPrev // a transposition ends here
		d0 = ((pm & vp) + vp) ^ vp | pm | vn | tr
		hp := vn | ^(d0 | vp)
		hn := d0 & vp
		d += int(hp>>top&1) - int(hn>>top&1) // the last row, one step on
		// The last row falls by at most one per rune of b still to come.
		if d-(len(b)-j-1) > k {
			return k + 1
		}
		hp = hp<<1 | 1
		hn <<= 1
		vp = hn | ^(d0 | hp)
		vn = hp & d0
		pmPrev = pm
	}
	return min(d, k+1)
}

// isSubsequence reports whether short is long with some runes deleted.
func isSubsequence(short, long []rune) bool {
	if len(short) > len(long) {
		return false
	}
	j := 0
	for _, r := range long {
		if j < len(short) && short[j] == r {
			j++
		}
	}
	return j == len(short)
}

// Closest returns the single best suggestion for received among values, or
// "" when none is close. It serves one-off lookups such as misspelled keys.
func Closest(received string, values []string) string {
	var buf [Max]string
	if got := NewSet(values, nil).AppendSuggestions(buf[:0], received); len(got) > 0 {
		return got[0]
	}
	return ""
}

// Bound is the largest edit distance at which a value of n runes is still
// taken for a slip rather than a different value: none for one or two runes,
// one up to five, two up to eight, three beyond.
func Bound(n int) int {
	switch {
	case n <= 2:
		return 0
	case n <= 5:
		return 1
	case n <= 8:
		return 2
	default:
		return maxBound
	}
}

// Distance is the optimal-string-alignment edit distance between a and b,
// counted in runes, where swapping two adjacent runes costs one. It stops
// early and returns max+1 once the distance must exceed max. It allocates
// nothing when a and b are at most 64 runes long.
func Distance(a, b string, max int) int {
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if abs(na-nb) > max {
		return max + 1
	}
	// No distance exceeds the sum of the lengths; a smaller k narrows the band.
	k := max
	if k > na+nb {
		k = na + nb
	}
	var abuf, bbuf [maxRunes]rune
	ra, rb := abuf[:], bbuf[:]
	if na > maxRunes {
		ra = make([]rune, na)
	}
	if nb > maxRunes {
		rb = make([]rune, nb)
	}
	ra, rb = toRunes(ra, a), toRunes(rb, b)
	var rowBuf [stackRows]int32
	rows := rowBuf[:]
	if need := 3 * (nb + 1); need > len(rows) {
		rows = make([]int32, need)
	}
	return osa(ra, rb, k, rows)
}

// toRunes decodes s into buf, which has room for every rune of s.
func toRunes(buf []rune, s string) []rune {
	n := 0
	for _, r := range s {
		buf[n] = r
		n++
	}
	return buf[:n]
}

// osa is the optimal-string-alignment distance between a and b, or k+1 when
// it exceeds k. rows is scratch space of at least 3*(len(b)+1) cells.
//
// Only the band of cells within k of the diagonal can lead to a distance of
// k or less, so only those are computed; a cell outside the band counts as
// k+1. The table stops at the first row in which no cell, plus the length
// difference still to cover, stays within k. A transposition skips a row,
// but the cell it skips diagonally is no larger, so the stop is sound.
func osa(a, b []rune, k int, rows []int32) int {
	n, m := len(a), len(b)
	if k < 0 || abs(n-m) > k {
		return k + 1
	}
	inf := int32(k + 1)
	w := m + 1
	prev2, prev, cur := rows[:w:w], rows[w:2*w:2*w], rows[2*w:3*w:3*w]
	for j := range min(m, k+1) + 1 {
		prev[j] = int32(j)
	}
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-k), min(m, i+k)
		rowMin := inf
		if lo == 1 {
			cur[0] = int32(i)
			rowMin = min(rowMin, cur[0]+int32(abs(n-i-m)))
		} else {
			cur[lo-1] = inf
		}
		ai := a[i-1]
		for j := lo; j <= hi; j++ {
			d := prev[j-1]
			if ai != b[j-1] {
				d++
			}
			d = min(d, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && ai == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d+int32(abs((n-i)-(m-j))))
		}
		if hi < m {
			cur[hi+1] = inf
		}
		if rowMin > int32(k) {
			return k + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return int(min(prev[m], inf))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
