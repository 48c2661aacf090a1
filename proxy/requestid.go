package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// RequestIDHeader carries the id that ties a caller's request to signpost's
// log line and to the upstream's own logs.
const RequestIDHeader = "X-Request-Id"

// idPrefix makes generated ids unique across processes; idCounter within one.
var (
	idPrefix  = func() string { b := make([]byte, 6); rand.Read(b); return hex.EncodeToString(b) }()
	idCounter atomic.Uint64
)

// requestID returns the caller's id when it is a sane token, else a new one.
// A caller's id is kept so that traces stitch across services; one that is
// empty, long or holds characters outside a token is replaced, since it is
// logged and echoed.
func requestID(given string) string {
	if validRequestID(given) {
		return given
	}
	return idPrefix + "-" + strconv.FormatUint(idCounter.Add(1), 36)
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
