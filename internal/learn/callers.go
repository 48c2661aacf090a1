package learn

import "container/list"

// callers is a bounded set of what is known of each caller, by caller id:
// touching a caller makes it the most recently seen, and past the bound
// the least recently seen is forgotten, told to forgotten first. It is not
// safe for concurrent use; its owner holds a lock.
type callers[T any] struct {
	max       int
	byID      map[string]*list.Element // of *known[T]
	order     *list.List               // most recently seen first
	forgotten func(id string, v *T)
}

type known[T any] struct {
	id string
	v  T
}

func newCallers[T any](max int, forgotten func(id string, v *T)) *callers[T] {
	return &callers[T]{max: max, byID: map[string]*list.Element{}, order: list.New(), forgotten: forgotten}
}

// touch returns what is known of caller id, made the most recently seen:
// a zero T for a caller not seen before, forgetting the least recently
// seen one beyond the bound.
func (c *callers[T]) touch(id string) *T {
	if el, ok := c.byID[id]; ok {
		c.order.MoveToFront(el)
		return &el.Value.(*known[T]).v
	}
	k := &known[T]{id: id}
	c.byID[id] = c.order.PushFront(k)
	if c.order.Len() > c.max {
		old := c.order.Back()
		ok := old.Value.(*known[T])
		c.forgotten(ok.id, &ok.v)
		delete(c.byID, ok.id)
		c.order.Remove(old)
	}
	return &k.v
}

// get returns what is known of caller id, without touching it.
func (c *callers[T]) get(id string) (*T, bool) {
	el, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	return &el.Value.(*known[T]).v, true
}

// sweep calls keep for each caller, least recently seen first, and
// forgets those for which it reports false, without telling forgotten.
func (c *callers[T]) sweep(keep func(id string, v *T) bool) {
	for el := c.order.Back(); el != nil; {
		prev := el.Prev()
		k := el.Value.(*known[T])
		if !keep(k.id, &k.v) {
			delete(c.byID, k.id)
			c.order.Remove(el)
		}
		el = prev
	}
}

// len is the number of callers known.
func (c *callers[T]) len() int { return len(c.byID) }
