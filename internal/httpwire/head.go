package httpwire

import "bytes"

// LeadingCRorLF counts the CR and LF bytes buf starts with.
func LeadingCRorLF(buf []byte) int {
	n := 0
	for n < len(buf) && (buf[n] == '\r' || buf[n] == '\n') {
		n++
	}
	return n
}

// HeadEnd returns the length of the head in buf through the empty line that
// ends it, or 0 when buf does not hold all of it; crlf reports whether every
// line of it ends in CRLF.
func HeadEnd(buf []byte) (end int, crlf bool) {
	crlf = true
	for i := 0; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return 0, false
		}
		line := buf[i : i+j]
		if len(line) == 0 || line[len(line)-1] != '\r' {
			crlf = false
		}
		i += j + 1
		if len(line) == 0 || len(line) == 1 && line[0] == '\r' {
			return i, crlf
		}
	}
}

// ValidHost reports whether a Host header holds only the bytes net/http's
// server accepts there.
func ValidHost(h string) bool {
	for i := 0; i < len(h); i++ {
		b := h[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case bytes.IndexByte([]byte("!$%&'()*+,-.:;=[]_~"), b) >= 0:
		default:
			return false
		}
	}
	return true
}
