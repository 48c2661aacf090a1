package observe

// lru is a map whose entries are ordered by recency of use: past max
// entries, adding one forgets the least recently used, after telling
// forgot. It is not safe for concurrent use; the Record's lock guards it.
type lru[K comparable, V any] struct {
	max        int
	m          map[K]*lruNode[K, V]
	head, tail *lruNode[K, V] // most and least recently used
	forgot     func(k K, v *V)
}

// lruNode is one entry, linked to its neighbours by recency.
type lruNode[K comparable, V any] struct {
	key        K
	val        V
	prev, next *lruNode[K, V] // toward the most and the least recently used
}

func newLRU[K comparable, V any](max int, forgot func(K, *V)) lru[K, V] {
	return lru[K, V]{max: max, m: make(map[K]*lruNode[K, V]), forgot: forgot}
}

// get returns the entry of k made the most recently used; the pointer
// stays valid until the entry is forgotten. A lookup never stores k, so k
// may alias memory the caller reuses.
func (l *lru[K, V]) get(k K) (*V, bool) {
	n, ok := l.m[k]
	if !ok {
		return nil, false
	}
	return l.use(n), true
}

// use makes n the most recently used entry and returns its value. It lets
// a caller look a []byte key up as m[string(b)], which copies nothing.
func (l *lru[K, V]) use(n *lruNode[K, V]) *V {
	if n != l.head {
		l.unlink(n)
		l.pushFront(n)
	}
	return &n.val
}

// peek returns the entry of k without touching its recency.
func (l *lru[K, V]) peek(k K) (*V, bool) {
	if n, ok := l.m[k]; ok {
		return &n.val, true
	}
	return nil, false
}

// add makes a zero entry for k, which must not be in l, as the most
// recently used, forgetting the least recently used one past the bound.
// k is stored: it must own its memory.
func (l *lru[K, V]) add(k K) *V {
	var n *lruNode[K, V]
	if len(l.m) >= l.max && l.tail != nil {
		n = l.tail // reuse the forgotten entry's node
		if l.forgot != nil {
			l.forgot(n.key, &n.val)
		}
		delete(l.m, n.key)
		l.unlink(n)
		*n = lruNode[K, V]{}
	} else {
		n = new(lruNode[K, V])
	}
	n.key = k
	l.m[k] = n
	l.pushFront(n)
	return &n.val
}

func (l *lru[K, V]) len() int { return len(l.m) }

// each calls f on every entry, most recently used first.
func (l *lru[K, V]) each(f func(k K, v *V)) {
	for n := l.head; n != nil; n = n.next {
		f(n.key, &n.val)
	}
}

func (l *lru[K, V]) unlink(n *lruNode[K, V]) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (l *lru[K, V]) pushFront(n *lruNode[K, V]) {
	n.next = l.head
	if l.head != nil {
		l.head.prev = n
	}
	l.head = n
	if l.tail == nil {
		l.tail = n
	}
}
