package learn

import "slices"

// callers is a bounded set of what is known of each caller, by caller id:
// touching a caller makes it the most recently seen, and past the bound
// the least recently seen is forgotten, told to forgotten first. It is not
// safe for concurrent use; its owner holds a lock.
//
// Entries live in chunks of slots that are reused, linked by index, so
// that a new caller, once the bound is reached, costs no allocation: with
// many agents each calling a few times, callers turn over all the time.
type callers[K comparable, T any] struct {
	max        int
	byID       map[K]int32
	chunks     [][]entry[K, T] // slots, by index; a chunk never moves
	used       int32           // slots handed out so far
	free       []int32         // slots given back by sweep
	head, tail int32           // most and least recently seen; none when empty
	forgotten  func(id K, v *T)
}

// entry is a caller's slot: its id, what is known of it, and its
// neighbours by recency.
type entry[K comparable, T any] struct {
	id         K
	v          T
	prev, next int32 // toward the most and the least recently seen
}

const (
	none      = -1
	chunkBits = 8 // 256 slots a chunk
	chunkSize = 1 << chunkBits
)

func newCallers[K comparable, T any](max int, forgotten func(id K, v *T)) *callers[K, T] {
	return &callers[K, T]{max: max, byID: map[K]int32{}, head: none, tail: none, forgotten: forgotten}
}

func (c *callers[K, T]) at(i int32) *entry[K, T] { return &c.chunks[i>>chunkBits][i&(chunkSize-1)] }

// touch returns what is known of caller id, made the most recently seen:
// a zero T for a caller not seen before, forgetting the least recently
// seen one beyond the bound. The pointer stays valid until the caller is
// forgotten.
func (c *callers[K, T]) touch(id K) *T {
	if i, ok := c.byID[id]; ok {
		c.unlink(i)
		c.pushFront(i)
		return &c.at(i).v
	}
	var i int32
	switch {
	case len(c.byID) >= c.max && c.tail != none:
		i = c.tail
		old := c.at(i)
		c.forgotten(old.id, &old.v)
		delete(c.byID, old.id)
		c.unlink(i)
	case len(c.free) > 0:
		i = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	default:
		i = c.used
		c.used++
		if int(i>>chunkBits) == len(c.chunks) {
			c.chunks = append(c.chunks, make([]entry[K, T], chunkSize))
		}
	}
	e := c.at(i)
	e.id = id
	empty(&e.v)
	c.byID[id] = i
	c.pushFront(i)
	return &e.v
}

// get returns what is known of caller id, without touching it.
func (c *callers[K, T]) get(id K) (*T, bool) {
	i, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	return &c.at(i).v, true
}

// sweep calls keep for each caller, least recently seen first, and
// forgets those for which it reports false, without telling forgotten.
func (c *callers[K, T]) sweep(keep func(id K, v *T) bool) {
	for i := c.tail; i != none; {
		e := c.at(i)
		prev := e.prev
		if !keep(e.id, &e.v) {
			delete(c.byID, e.id)
			c.unlink(i)
			var zero K
			e.id = zero
			empty(&e.v)
			c.free = append(c.free, i)
		}
		i = prev
	}
}

// reuser is a value that empties itself for the next caller of its slot,
// keeping the memory it holds, so that a new caller allocates nothing.
type reuser interface{ reuse() }

// empty makes v as a zero value for a new caller: by its reuse method
// when it has one, else by zeroing it.
func empty[T any](v *T) {
	if r, ok := any(v).(reuser); ok {
		r.reuse()
		return
	}
	var zero T
	*v = zero
}

// len is the number of callers known.
func (c *callers[K, T]) len() int { return len(c.byID) }

func (c *callers[K, T]) unlink(i int32) {
	e := c.at(i)
	if e.prev != none {
		c.at(e.prev).next = e.next
	} else {
		c.head = e.next
	}
	if e.next != none {
		c.at(e.next).prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = none, none
}

func (c *callers[K, T]) pushFront(i int32) {
	e := c.at(i)
	e.prev, e.next = none, c.head
	if c.head != none {
		c.at(c.head).prev = i
	}
	c.head = i
	if c.tail == none {
		c.tail = i
	}
}

// byRoute is what is known of one caller, by route name. A caller calls
// few routes, so a short list searched in order costs less than a map,
// which each new caller would allocate.
type byRoute[V any] []routed[V]

type routed[V any] struct {
	route string
	v     V
}

// find returns route's value, or nil. The pointer is good until the next
// add or remove.
func (b byRoute[V]) find(route string) *V {
	for i := range b {
		if b[i].route == route {
			return &b[i].v
		}
	}
	return nil
}

// add appends route, which must not be there, with a zero value, and
// returns it.
func (b *byRoute[V]) add(route string) *V {
	*b = append(*b, routed[V]{route: route})
	return &(*b)[len(*b)-1].v
}

// reuse empties b, keeping its array for the next caller and no
// reference to what it held.
func (b *byRoute[V]) reuse() {
	clear(*b)
	*b = (*b)[:0]
}

// remove deletes route, and returns its value and whether it was there.
func (b *byRoute[V]) remove(route string) (V, bool) {
	for i := range *b {
		if (*b)[i].route == route {
			v := (*b)[i].v
			*b = slices.Delete(*b, i, i+1)
			return v, true
		}
	}
	var zero V
	return zero, false
}
