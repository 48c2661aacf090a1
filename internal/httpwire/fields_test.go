package httpwire

import (
	"strings"
	"testing"
)

func TestValidFieldName(t *testing.T) {
	for b := 0; b < 256; b++ {
		want := strings.IndexByte(tokenChars, byte(b)) >= 0
		k := "X-" + string([]byte{byte(b)}) + "z"
		if got := ValidFieldName(k); got != want {
			t.Errorf("ValidFieldName(%q) = %v, want %v", k, got, want)
		}
	}
	for _, k := range []string{"", " X", "X Y", "X:", "Content-Type", "x_y"} {
		want := k != "" && strings.Trim(k, tokenChars) == ""
		if got := ValidFieldName(k); got != want {
			t.Errorf("ValidFieldName(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestAppendField(t *testing.T) {
	for _, tc := range []struct{ v, want string }{
		{"text/plain", "K: text/plain\r\n"},
		{"  padded\t", "K: padded\r\n"},
		{"a\r\nb", "K: a  b\r\n"},
		{"a\nb\rc", "K: a b c\r\n"},
		{"\r\n", "K: \r\n"},
		{"", "K: \r\n"},
	} {
		if got := string(AppendField(nil, "K", tc.v)); got != tc.want {
			t.Errorf("AppendField(K, %q) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
