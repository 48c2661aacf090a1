package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What a request line carries as it is (RFC 3986, section 3.3 and 3.4):
// in the path, the unreserved characters, the sub-delimiters, ":", "@"
// and "/"; in the query, "?" too. Anything else is percent-encoded.
const pathChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/"

var (
	inPath  = charSet(pathChars)
	inQuery = charSet(pathChars + "?")
)

func charSet(s string) (set [256]bool) {
	for i := 0; i < len(s); i++ {
		set[s[i]] = true
	}
	return set
}

// CharFault is a character that a request line cannot carry as it is.
type CharFault struct {
	// At is its position, counted in characters from 1.
	At int
	// What names it for a message: "a space", "\"#\"", "\"é\" (U+00E9)".
	What string
	// Why says what it does there, when more than being unfit: "which
	// starts a fragment, never sent in a request".
	Why string
	// Fixed is the whole text with every such character percent-encoded;
	// "" when encoding does not mend the fault.
	Fixed string

	off       int // its byte offset
	unfixable bool
}

// Error reads "a space at character 15, which a request line cannot carry
// as it is".
func (f *CharFault) Error() string {
	why := f.Why
	if why == "" {
		why = "which a request line cannot carry as it is"
	}
	return fmt.Sprintf("%s at character %d, %s", f.What, f.At, why)
}

// TargetFault returns the first character of a request target (a path,
// with a query after "?") that a request line cannot carry as it is, with
// the target percent-encoded where it must be; nil when there is none.
// "/label/foo bar/values" has a space at character 11, and is fixed as
// "/label/foo%20bar/values".
func TargetFault(target string) *CharFault {
	return charFault(target, false)
}

// templateFault is TargetFault for the text of a path template outside its
// {variables}, whose patterns match the decoded path and may hold anything.
// A template has no query: "?" is a fault too.
func templateFault(tpl string) *CharFault {
	return charFault(tpl, true)
}

func charFault(s string, template bool) *CharFault {
	var first *CharFault
	var fixed strings.Builder
	depth, query, at := 0, false, 0
	for i := 0; i < len(s); {
		c := s[i]
		r, w := utf8.DecodeRuneInString(s[i:])
		at++
		var f *CharFault
		switch {
		case template && c == '{':
			depth++
		case template && c == '}':
			depth--
		case template && depth > 0:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			n := 3
			if template {
				f, n = decodedFault(s[i:])
			}
			// An encoding stays as written: encoding it again mends nothing.
			fixed.WriteString(s[i : i+n])
			if f != nil && first == nil {
				f.At, f.off = at, i
				first = f
			}
			i += n
			at += n - 1
			continue
		case c == '%':
			f = &CharFault{What: `"%"`, Why: "which must begin a percent-encoding of two hex digits, such as %20 (a percent sign itself is %25)"}
		case c == '?' && template:
			f = &CharFault{What: `"?"`, Why: "which starts a query; the template is the path alone, and query parameters are fields with in: query (a literal ? is %3F)"}
		case c == '?' && !query:
			query = true
		case c == '#':
			f = &CharFault{What: `"#"`, Why: "which starts a fragment, never sent in a request (a literal # is %23)"}
		case c < utf8.RuneSelf && (query && inQuery[c] || !query && inPath[c]):
		default:
			f = &CharFault{What: describeChar(r, w, c)}
		}
		if f == nil {
			fixed.WriteString(s[i : i+w])
			i += w
			continue
		}
		if first == nil {
			f.At, f.off = at, i
			first = f
		}
		for _, b := range []byte(s[i : i+w]) {
			fmt.Fprintf(&fixed, "%%%02X", b)
		}
		i += w
	}
	if first != nil && !first.unfixable {
		first.Fixed = fixed.String()
	}
	return first
}

// decodedFault is what is wrong with the text the percent-encodings at the
// start of s decode to, or nil, with how many bytes of s they take: one
// encoding, or as many as spell one UTF-8 character. Requests are matched
// by their decoded path, so the template is matched decoded too.
func decodedFault(s string) (*CharFault, int) {
	var raw []byte
	for j := 0; j+2 < len(s) && s[j] == '%' && isHex(s[j+1]) && isHex(s[j+2]) && len(raw) < utf8.UTFMax; j += 3 {
		v, _ := strconv.ParseUint(s[j+1:j+3], 16, 8)
		raw = append(raw, byte(v))
	}
	switch b := raw[0]; {
	case b == '{' || b == '}':
		return &CharFault{What: strconv.Quote(s[:3]), Why: fmt.Sprintf("which decodes to %q: a path template cannot match a brace as text; match that segment with a variable such as {name}", string(rune(b))), unfixable: true}, 3
	case b < utf8.RuneSelf:
		return nil, 3
	}
	r, w := utf8.DecodeRune(raw)
	if r == utf8.RuneError && w <= 1 {
		return &CharFault{What: strconv.Quote(s[:3]), Why: "which decodes to a byte that is not UTF-8 text; percent-encode whole characters, each byte of its UTF-8, e.g. é as %C3%A9", unfixable: true}, 3
	}
	return nil, 3 * w
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// describeChar names a character for a message: a space, a control
// character, or the character quoted with its code point.
func describeChar(r rune, w int, c byte) string {
	switch {
	case c == ' ':
		return "a space"
	case c == '\t':
		return "a tab"
	case c == '\n':
		return "a line feed"
	case c == '\r':
		return "a carriage return"
	case c < ' ' || c == 0x7f:
		return fmt.Sprintf("the control character U+%04X", c)
	case c < utf8.RuneSelf:
		return strconv.Quote(string(c))
	case r == utf8.RuneError && w == 1:
		return fmt.Sprintf("the byte 0x%02X (not UTF-8 text)", c)
	}
	return fmt.Sprintf("%q (U+%04X)", string(r), r)
}

// decodeTemplate decodes the percent-encodings of a template's text
// outside its variables, as a request's URL.Path is decoded: the form a
// request's path is matched in. The template is one templateFault passes.
func decodeTemplate(tpl string) string {
	if !strings.Contains(tpl, "%") {
		return tpl
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(tpl); i++ {
		c := tpl[i]
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '%' && depth == 0 && i+2 < len(tpl) && isHex(tpl[i+1]) && isHex(tpl[i+2]):
			v, _ := strconv.ParseUint(tpl[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
