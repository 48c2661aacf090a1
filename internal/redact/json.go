package redact

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting a JSON text is walked to: arrays, objects
// and strings that hold JSON alike. A deeper text is masked by the
// patterns, as a text that is not JSON.
const maxDepth = 512

// credentialKey finds a JSON key named like a credential, as the patterns
// find one before a colon: password, db_password, X-Api-Key, tokens.
var credentialKey = regexp.MustCompile(`(?i)` + credentialWord + `[A-Za-z0-9_-]*$`)

// maskJSON masks the secrets in s when s is one JSON value, and reports
// whether it was. It walks the text in one pass and replaces only what it
// masks, so that the result is JSON too, and a text with nothing to mask
// comes back as it was.
//
// The value of a key named like a credential is masked whole: each string
// and number in it becomes the string "[masked]", a string keeping its
// authentication scheme ("Bearer [masked]"); null, true and false stay,
// as they hold no secret and tell the operator what was sent. Any other
// string, key or value, is masked as String masks a text, its escapes
// decoded, so that a JSON text quoted in it is walked in turn.
func maskJSON(s string, depth int) (string, bool) {
	w := walker{s: s, depth: depth}
	w.space()
	if w.i == len(s) || (s[w.i] != '{' && s[w.i] != '[' && s[w.i] != '"') {
		return "", false
	}
	if !w.value(false) {
		return "", false
	}
	if w.space(); w.i != len(s) {
		return "", false
	}
	if w.out == nil {
		return s, true
	}
	return string(append(w.out, s[w.done:]...)), true
}

// walker walks a JSON text, copying it into out from the first change on.
type walker struct {
	s     string
	i     int    // the next byte to read
	out   []byte // s[:done] as masked; nil while nothing is
	done  int
	depth int
}

// replace puts with in the place of s[from:to].
func (w *walker) replace(from, to int, with string) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.s)+len(with))
	}
	w.out = append(w.out, w.s[w.done:from]...)
	w.out = append(w.out, with...)
	w.done = to
}

func (w *walker) space() {
	for w.i < len(w.s) && (w.s[w.i] == ' ' || w.s[w.i] == '\t' || w.s[w.i] == '\n' || w.s[w.i] == '\r') {
		w.i++
	}
}

// value walks the value at w.i; credential says that it is a credential's,
// to be masked whole.
func (w *walker) value(credential bool) bool {
	w.space()
	if w.i == len(w.s) {
		return false
	}
	switch c := w.s[w.i]; {
	case c == '{':
		return w.object(credential)
	case c == '[':
		return w.array(credential)
	case c == '"':
		from := w.i
		raw, escaped, ok := w.str()
		if !ok {
			return false
		}
		if !credential {
			w.maskString(from, raw, escaped)
		} else if m := Credential(decoded(raw, escaped)); m != "" {
			w.replace(from, w.i, `"`+m+`"`)
		}
		return true
	case c == '-' || c >= '0' && c <= '9':
		from := w.i
		if !w.number() {
			return false
		}
		if credential {
			w.replace(from, w.i, `"`+masked+`"`)
		}
		return true
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(w.s[w.i:], lit) {
				w.i += len(lit)
				return true
			}
		}
		return false
	}
}

// maskString masks the string s[from:w.i], written raw between its
// quotes.
func (w *walker) maskString(from int, raw string, escaped bool) {
	if !mayHold(raw) {
		return
	}
	t := decoded(raw, escaped)
	if !anyTrigger(t) {
		return
	}
	var m string
	if w.depth < maxDepth {
		m = mask(t, w.depth+1)
	} else {
		m = patterns(t)
	}
	if m != t {
		w.replace(from, w.i, quote(m))
	}
}

// object walks an object; each member of a credential's is masked whole
// as well.
func (w *walker) object(credential bool) bool {
	if w.depth++; w.depth > maxDepth {
		return false
	}
	w.i++ // {
	w.space()
	if w.i < len(w.s) && w.s[w.i] == '}' {
		w.i++
		w.depth--
		return true
	}
	for {
		w.space()
		if w.i == len(w.s) || w.s[w.i] != '"' {
			return false
		}
		from := w.i
		raw, escaped, ok := w.str()
		if !ok {
			return false
		}
		named := false
		if mayHold(raw) {
			key := decoded(raw, escaped)
			named = anyTrigger(key) && credentialKey.MatchString(key)
		}
		w.maskString(from, raw, escaped)
		w.space()
		if w.i == len(w.s) || w.s[w.i] != ':' {
			return false
		}
		w.i++
		if !w.value(credential || named) {
			return false
		}
		w.space()
		if w.i == len(w.s) {
			return false
		}
		switch w.s[w.i] {
		case ',':
			w.i++
		case '}':
			w.i++
			w.depth--
			return true
		default:
			return false
		}
	}
}

// array walks an array; the elements of a credential's are masked as its
// value would be.
func (w *walker) array(credential bool) bool {
	if w.depth++; w.depth > maxDepth {
		return false
	}
	w.i++ // [
	w.space()
	if w.i < len(w.s) && w.s[w.i] == ']' {
		w.i++
		w.depth--
		return true
	}
	for {
		if !w.value(credential) {
			return false
		}
		w.space()
		if w.i == len(w.s) {
			return false
		}
		switch w.s[w.i] {
		case ',':
			w.i++
		case ']':
			w.i++
			w.depth--
			return true
		default:
			return false
		}
	}
}

// str reads the string at w.i and returns it raw, between its quotes, and
// whether it holds an escape.
func (w *walker) str() (raw string, escaped, ok bool) {
	start := w.i + 1
	for j := start; j < len(w.s); j++ {
		switch c := w.s[j]; {
		case c == '"':
			w.i = j + 1
			return w.s[start:j], escaped, true
		case c == '\\':
			escaped = true
			if j+1 == len(w.s) {
				return "", false, false
			}
			switch w.s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+6 > len(w.s) || !isHex(w.s[j+2:j+6]) {
					return "", false, false
				}
				j += 5
			default:
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		}
	}
	return "", false, false
}

// mayHold reports whether a string, raw, may hold a trigger of a pattern:
// it holds one, or an escape that may hide one (\u0070assword).
func mayHold(raw string) bool {
	return anyTrigger(raw) || strings.Contains(raw, `\u`)
}

// decoded is the text a string str read holds.
func decoded(raw string, escaped bool) string {
	if !escaped {
		return raw
	}
	return unescape(raw)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
}

// number reads the number at w.i, as JSON writes one.
func (w *walker) number() bool {
	s, i := w.s, w.i
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	w.i = i
	return true
}

// unescape decodes the escapes of a JSON string's text, which str has
// checked. A lone surrogate becomes U+FFFD, as encoding/json decodes it.
func unescape(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2 = hex4(s[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default: // " \ /
			b = append(b, s[i])
		}
	}
	return string(b)
}

func hex4(s string) rune {
	n, _ := strconv.ParseUint(s[:4], 16, 32)
	return rune(n)
}

// quote writes s as a JSON string, escaping only what JSON requires.
func quote(s string) string {
	b := make([]byte, 0, len(s)+8)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
