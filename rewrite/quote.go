package rewrite

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// appendQuoted appends s, signpost's own text, as a JSON string, cut to max
// characters with a visible marker (max < 0: never cut). Quotes,
// backslashes and every invisible code point are escaped (see escaped) and
// invalid UTF-8 becomes U+FFFD, so that no byte of s reaches the caller raw:
// the value can end a string only where this function ends it.
func appendQuoted(dst []byte, s string, max int) []byte { return quote(dst, s, max, false) }

// appendEcho is appendQuoted for a value signpost did not write: a request's
// value or text captured from the upstream. It also escapes < and >, so an
// echoed value can never close or open a tag (</tool_result>) in the text a
// model reads.
func appendEcho(dst []byte, s string, max int) []byte { return quote(dst, s, max, true) }

func quote(dst []byte, s string, max int, markup bool) []byte {
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
		if plain[s[i]] && !(markup && (s[i] == '<' || s[i] == '>')) {
			// A run of printable ASCII needing no escape is copied whole.
			j := i + 1
			for j < len(s) && plain[s[j]] && !(markup && (s[j] == '<' || s[j] == '>')) && (max < 0 || n+j-i < max) {
				j++
			}
			dst = append(dst, s[i:j]...)
			n += j - i
			i = j
			continue
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
		case markup && (r == '<' || r == '>'):
			dst = appendEscape(dst, r)
		case r < 0x20 || r == 0x7f:
			dst = appendEscape(dst, r)
		case r < utf8.RuneSelf:
			dst = append(dst, byte(r))
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case escaped(r):
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				dst = appendEscape(appendEscape(dst, r1), r2)
			} else {
				dst = appendEscape(dst, r)
			}
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// escaped reports whether a non-ASCII code point is written as a \u escape
// rather than raw: C1 controls, line and paragraph separators, format
// characters (bidi overrides and isolates, zero-width spaces and joiners,
// the BOM, tag characters), variation selectors, other default-ignorable
// code points and noncharacters. Each renders as nothing, or reorders or
// ends the text around it, so a reader of the raw body would not see what
// a value holds; escaped, the value is kept and every code point shows.
func escaped(r rune) bool {
	return r <= 0x9f || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Cf, unicode.Variation_Selector,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point)
}

func appendEscape(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

const hex = "0123456789abcdef"

// plain marks the bytes quote copies as they are: printable ASCII other
// than the quote and the backslash.
var plain = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// appendValue appends a request value as JSON, keeping its JSON type: a
// string stays a string (cut to max characters), a number a number. A
// number, object or array whose text is longer than max is echoed as a cut
// string of that text instead, so an echo never grows with the request. The
// strings inside an echoed object or array are escaped as appendEcho
// escapes any value.
func appendValue(dst []byte, v gjson.Result, max int) []byte {
	switch v.Type {
	case gjson.String:
		return appendEcho(dst, v.Str, max)
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
		return appendJSON(dst, gjson.Parse(raw))
	}
	return appendEcho(dst, raw, max)
}

// appendJSON writes a valid JSON value again, its strings and keys through
// appendEcho: the raw text of a short object could otherwise carry an
// invisible code point or a tag into the body.
func appendJSON(dst []byte, v gjson.Result) []byte {
	switch {
	case v.Type == gjson.String:
		return appendEcho(dst, v.Str, -1)
	case v.IsObject():
		dst = append(dst, '{')
		first := true
		v.ForEach(func(k, m gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(appendEcho(dst, k.Str, -1), ':')
			dst = appendJSON(dst, m)
			return true
		})
		return append(dst, '}')
	case v.IsArray():
		dst = append(dst, '[')
		first := true
		v.ForEach(func(_, m gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendJSON(dst, m)
			return true
		})
		return append(dst, ']')
	}
	return append(dst, v.Raw...)
}

// echo renders field f's value v for a body as appendValue does, but never
// a credential: the value of a field named like one (Authorization,
// Cookie, X-Api-Key, password) is masked whole, keeping its scheme
// ("Bearer [masked]"), and a secret of a known shape (a bearer token, a
// cloud or service key, a JSON web token) is masked in any other, as the
// logs mask them. The mask is applied before the cut, so no part of a
// secret shows. Checks still see the value as sent.
func echo(f *rules.Field, v gjson.Result, max int) []byte {
	switch {
	case f != nil && (redact.CredentialName(f.Key) || redact.CredentialName(f.Name)) && v.Type != gjson.Null:
		return appendEcho(nil, redact.Credential(v.String()), max)
	case v.Type == gjson.String:
		if m := mask(v.Str, max); m != v.Str {
			v = rules.Text(m)
		}
	case (v.IsObject() || v.IsArray()) && len(v.Raw) > maskedHead(max):
		v = rules.Text(mask(v.Raw, max)) // echoed as its cut text in any case
	case v.IsObject() || v.IsArray():
		if m := redact.String(v.Raw); m != v.Raw && gjson.Valid(m) {
			v = gjson.Parse(m)
		}
	}
	return appendValue(nil, v, max)
}

// maskedHead is how many bytes of a value echo masks when the value is cut
// to max characters: every byte that can show, and a window past them, so
// that a secret across the cut is masked whole. The rest is never shown,
// and masking it would cost time in proportion to a request's size.
func maskedHead(max int) int { return 4*max + 512 }

// mask masks the secrets in the part of s an echo cut to max characters
// can show; the rest follows unmasked, to be counted and not shown. A
// value past the head and mostly secrets is cut to its masked head.
func mask(s string, max int) string {
	head := maskedHead(max)
	if max < 0 || len(s) <= head {
		return redact.String(s)
	}
	for !utf8.RuneStart(s[head]) {
		head--
	}
	m := redact.String(s[:head])
	if utf8.RuneCountInString(m) <= max {
		// Masking shrank the head so that the rest would show: the
		// rest, a secret's tail perhaps, is left out.
		return m
	}
	return m + s[head:]
}
