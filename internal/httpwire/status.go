package httpwire

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// BodyAllowed reports whether an answer with status may carry a body: not
// a 1xx, 204 or 304 (RFC 9110, section 6.4.1).
func BodyAllowed(status int) bool {
	return (status < 100 || status > 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// WriteStatus writes the status line of code, with its reason phrase where
// it has one, as net/http writes it.
func WriteStatus(bw *bufio.Writer, code int) {
	if code < len(statusLines) && statusLines[code] != "" {
		bw.WriteString(statusLines[code])
		return
	}
	fmt.Fprintf(bw, "HTTP/1.1 %03d status code %d\r\n", code, code)
}

// statusLines holds the status line of every code with a reason phrase.
var statusLines = func() (lines [600]string) {
	for code := range lines {
		if text := http.StatusText(code); text != "" {
			lines[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n"
		}
	}
	return lines
}()

// dateCache holds the Date header value of the current second.
var dateCache atomic.Pointer[cachedDate]

type cachedDate struct {
	sec int64
	b   []byte
}

// Date returns the Date header value for now, formatted once a second.
func Date() []byte {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.b
	}
	d := &cachedDate{sec: now.Unix(), b: now.UTC().AppendFormat(make([]byte, 0, 29), http.TimeFormat)}
	dateCache.Store(d)
	return d.b
}
