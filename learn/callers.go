package learn

import "slices"

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
