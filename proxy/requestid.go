package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"unsafe"
)

// RequestIDHeader carries the id that ties a caller's request to signpost's
// log line and to the upstream's own logs.
const RequestIDHeader = "X-Request-Id"

// idPrefix makes generated ids unique across processes; idCounter within one.
var (
	idPrefix  = func() string { b := make([]byte, 6); rand.Read(b); return hex.EncodeToString(b) }()
	idCounter atomic.Uint64
)

// requestID returns the caller's id when it is a sane token, else a new one,
// as a header value: a slice of that one string. A caller's id is kept so
// that traces stitch across services; one that is empty, long or holds
// characters outside a token is replaced, since it is logged and echoed.
func requestID(given string) []string {
	if validRequestID(given) {
		return []string{given}
	}
	return newRequestID()
}

// newRequestID returns a new id, as a header value. The value and the
// id's bytes are one allocation: the string points into the cell the slice
// is part of, written once before the string is made and never after.
func newRequestID() []string {
	c := new(idCell)
	b := append(c.bytes[:0], idPrefix...)
	b = append(b, '-')
	b = strconv.AppendUint(b, idCounter.Add(1), 36)
	c.value[0] = unsafe.String(&c.bytes[0], len(b))
	return c.value[:]
}

// idCell holds a new id's bytes beside the header value naming them: the
// prefix's 12 hex digits, a dash and a counter of at most 13 base-36 digits.
type idCell struct {
	value [1]string
	bytes [32]byte
}

func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=') {
			return false
		}
	}
	return true
}
