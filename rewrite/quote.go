package rewrite

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// appendQuoted appends s as a JSON string, cut to max characters with a
// visible marker. Control characters, U+2028, U+2029 and DEL are escaped and
// invalid UTF-8 becomes U+FFFD, so that no echoed byte reaches the caller
// raw: the value can end a string only where this function ends it.
func appendQuoted(dst []byte, s string, max int) []byte {
	dst = append(dst, '"')
	n := 0
	for i := 0; i < len(s); {
		if n == max {
			rest := utf8.RuneCountInString(s[i:])
			dst = append(dst, "…[+"...)
			dst = strconv.AppendInt(dst, int64(rest), 10)
			dst = append(dst, " chars]"...)
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

const hex = "0123456789abcdef"

// appendValue appends a request value as JSON, keeping its JSON type: a
// string stays a string (cut to max characters), a number a number. A
// number, object or array whose text is longer than max is echoed as a cut
// string of that text instead, so an echo never grows with the request.
func appendValue(dst []byte, v gjson.Result, max int) []byte {
	switch v.Type {
	case gjson.String:
		return appendQuoted(dst, v.Str, max)
	case gjson.True, gjson.False, gjson.Null:
		return append(dst, v.Raw...)
	}
	raw := v.Raw
	if v.IsObject() || v.IsArray() {
		var b bytes.Buffer
		if json.Compact(&b, []byte(raw)) == nil {
			raw = b.String()
		}
	}
	if utf8.RuneCountInString(raw) <= max && gjson.Valid(raw) {
		return append(dst, raw...)
	}
	return appendQuoted(dst, raw, max)
}
