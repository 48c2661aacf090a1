// Package jsontest compares JSON texts, for tests that check bodies and
// schemas whose members may come in any order.
package jsontest

import (
	"bytes"
	"encoding/json"
)

// Same reports whether a and b are each one JSON value and the same one:
// object members in any order, numbers equal as numbers, insignificant
// space ignored. Text that is not JSON is the same as nothing.
func Same(a, b string) bool {
	x, okA := canonical(a)
	y, okB := canonical(b)
	return okA && okB && bytes.Equal(x, y)
}

// canonical is s re-encoded with object members sorted, as
// encoding/json writes maps.
func canonical(s string) ([]byte, bool) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}
