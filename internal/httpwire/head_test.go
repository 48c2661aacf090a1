package httpwire

import "testing"

func TestHeadEnd(t *testing.T) {
	tests := []struct {
		in   string
		end  int
		crlf bool
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27, true},
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody", 27, true},
		{"GET / HTTP/1.1\r\nHost: a\r\n", 0, false},
		{"GET / HTTP/1.1\nHost: a\n\n", 24, false},
		{"GET / HTTP/1.1\r\nHost: a\n\r\n", 26, false},
		{"\r\n", 2, true},
		{"", 0, false},
	}
	for _, tt := range tests {
		end, crlf := HeadEnd([]byte(tt.in))
		if end != tt.end || end > 0 && crlf != tt.crlf {
			t.Errorf("HeadEnd(%q) = %d, %v; want %d, %v", tt.in, end, crlf, tt.end, tt.crlf)
		}
	}
}
