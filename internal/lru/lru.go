// Package lru is a bounded map whose entries are ordered by recency of
// use: past its bound, adding an entry forgets the least recently used,
// after telling its owner. Entries live in chunks of slots that are reused,
// linked by index, so that once the bound is reached a new entry costs no
// allocation: what a proxy learns of many callers turns over all the time.
// An LRU is not safe for concurrent use; its owner holds a lock.
package lru

// LRU is the bounded map.
type LRU[K comparable, V any] struct {
	max        int
	byKey      map[K]int32
	chunks     [][]entry[K, V] // slots, by index; a chunk never moves
	used       int32           // slots handed out so far
	free       []int32         // slots given back by Sweep
	head, tail int32           // most and least recently used; none when empty
	forgotten  func(k K, v *V)
}

// entry is a slot: a key, its value, and its neighbours by recency.
type entry[K comparable, V any] struct {
	key        K
	v          V
	prev, next int32 // toward the most and the least recently used
}

const (
	none      = -1
	chunkBits = 8 // 256 slots a chunk
	chunkSize = 1 << chunkBits
)

// New returns an LRU of at most max entries, which calls forgotten, when
// not nil, with each entry it forgets to make room for another.
func New[K comparable, V any](max int, forgotten func(k K, v *V)) *LRU[K, V] {
	return &LRU[K, V]{max: max, byKey: map[K]int32{}, head: none, tail: none, forgotten: forgotten}
}

func (l *LRU[K, V]) at(i int32) *entry[K, V] { return &l.chunks[i>>chunkBits][i&(chunkSize-1)] }

// Touch returns the value of k made the most recently used: a zero value
// (see Reuser) for a key not there, the least recently used entry
// forgotten past the bound. k is kept: it must own its memory. The pointer
// stays valid until the entry is forgotten.
func (l *LRU[K, V]) Touch(k K) *V {
	if i, ok := l.byKey[k]; ok {
		return l.use(i)
	}
	return l.add(k)
}

// Get returns the value of k made the most recently used, if k is there.
// A lookup keeps nothing of k.
func (l *LRU[K, V]) Get(k K) (*V, bool) {
	i, ok := l.byKey[k]
	if !ok {
		return nil, false
	}
	return l.use(i), true
}

// GetBytes is Get for an LRU keyed by strings, with the key as bytes: the
// lookup copies nothing.
func GetBytes[V any](l *LRU[string, V], k []byte) (*V, bool) {
	i, ok := l.byKey[string(k)]
	if !ok {
		return nil, false
	}
	return l.use(i), true
}

// Peek returns the value of k without making it the most recently used.
func (l *LRU[K, V]) Peek(k K) (*V, bool) {
	i, ok := l.byKey[k]
	if !ok {
		return nil, false
	}
	return &l.at(i).v, true
}

// Add is Touch for a key known not to be there.
func (l *LRU[K, V]) Add(k K) *V { return l.add(k) }

func (l *LRU[K, V]) use(i int32) *V {
	if i != l.head {
		l.unlink(i)
		l.pushFront(i)
	}
	return &l.at(i).v
}

func (l *LRU[K, V]) add(k K) *V {
	var i int32
	switch {
	case len(l.byKey) >= l.max && l.tail != none:
		i = l.tail
		old := l.at(i)
		if l.forgotten != nil {
			l.forgotten(old.key, &old.v)
		}
		delete(l.byKey, old.key)
		l.unlink(i)
	case len(l.free) > 0:
		i = l.free[len(l.free)-1]
		l.free = l.free[:len(l.free)-1]
	default:
		i = l.used
		l.used++
		if int(i>>chunkBits) == len(l.chunks) {
			l.chunks = append(l.chunks, make([]entry[K, V], chunkSize))
		}
	}
	e := l.at(i)
	e.key = k
	empty(&e.v)
	l.byKey[k] = i
	l.pushFront(i)
	return &e.v
}

// Sweep calls keep for each entry, least recently used first, and forgets
// those for which it reports false, without calling forgotten.
func (l *LRU[K, V]) Sweep(keep func(k K, v *V) bool) {
	for i := l.tail; i != none; {
		e := l.at(i)
		prev := e.prev
		if !keep(e.key, &e.v) {
			delete(l.byKey, e.key)
			l.unlink(i)
			var zero K
			e.key = zero
			empty(&e.v)
			l.free = append(l.free, i)
		}
		i = prev
	}
}

// Each calls f for every entry, most recently used first.
func (l *LRU[K, V]) Each(f func(k K, v *V)) {
	for i := l.head; i != none; i = l.at(i).next {
		e := l.at(i)
		f(e.key, &e.v)
	}
}

// Len is the number of entries.
func (l *LRU[K, V]) Len() int { return len(l.byKey) }

// Reuser is a value that empties itself for the next entry of its slot,
// keeping the memory it holds, so that a new entry allocates nothing.
// Values that are not Reusers are zeroed.
type Reuser interface{ Reuse() }

// empty makes v a zero value for a new entry: by its Reuse method when it
// has one, else by zeroing it.
func empty[V any](v *V) {
	if r, ok := any(v).(Reuser); ok {
		r.Reuse()
		return
	}
	var zero V
	*v = zero
}

func (l *LRU[K, V]) unlink(i int32) {
	e := l.at(i)
	if e.prev != none {
		l.at(e.prev).next = e.next
	} else {
		l.head = e.next
	}
	if e.next != none {
		l.at(e.next).prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = none, none
}

func (l *LRU[K, V]) pushFront(i int32) {
	e := l.at(i)
	e.prev, e.next = none, l.head
	if l.head != none {
		l.at(l.head).prev = i
	}
	l.head = i
	if l.tail == none {
		l.tail = i
	}
}
