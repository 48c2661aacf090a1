package observe

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/internal/redact"
)

// field is what the record keeps of one Field.
type field struct {
	name, in   string
	kind       string
	seen, succ int64
	credential bool
	good, bad  counts
	shapes     counts
	open       bool
	formats    [len(formatNames)]int64
}

// newField makes the field name in in, judging once whether the name says
// it holds a credential. name must own its memory.
func newField(name, in string) *field {
	return &field{name: name, in: in, credential: redact.CredentialName(name)}
}

// counts holds distinct values and how often each was seen, up to a
// bound. Lookups store nothing, so they may use memory the caller reuses;
// a value is cloned when kept.
type counts struct {
	idx  map[string]int32 // index in list
	list []Value
}

// add counts one more v and reports whether it is counted: false when v
// is new and max values are kept already.
func (c *counts) add(v string, max int) bool {
	if i, ok := c.idx[v]; ok {
		c.list[i].Count++
		return true
	}
	if len(c.list) >= max {
		return false
	}
	if c.idx == nil {
		c.idx = make(map[string]int32)
	}
	v = strings.Clone(v)
	c.idx[v] = int32(len(c.list))
	c.list = append(c.list, Value{Value: v, Count: 1})
	return true
}

// sorted returns a copy of the values, most frequent first, then by value.
func (c *counts) sorted() []Value {
	if len(c.list) == 0 {
		return nil
	}
	out := append([]Value(nil), c.list...)
	sortValues(out)
	return out
}

// The kinds of Field.Kind.
const (
	kindString  = "string"
	kindNumber  = "number"
	kindBoolean = "boolean"
	kindObject  = "object"
	kindArray   = "array"
	kindMixed   = "mixed"
)

// mergeKind returns the kind of a field of kind was that now saw kind k.
func mergeKind(was, k string) string {
	if was == "" || was == k {
		return k
	}
	return kindMixed
}

// keepable reports whether values of kind k are kept: an object's or an
// array's are not, only their kind.
func keepable(k string) bool { return k != kindObject && k != kindArray }

// maskValue returns v as the record keeps it: masked as the logs mask it,
// then cut to valueBytes. It may return v itself.
func maskValue(v string) string {
	return cut(redact.String(cut(v, maskWindow)), valueBytes)
}

// cut returns s cut to at most n bytes on a UTF-8 boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// appendShape appends v with each run of ASCII digits read as one 0:
// T-1041 is T-0.
func appendShape(dst []byte, v string) []byte {
	digits := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if '0' <= c && c <= '9' {
			if !digits {
				dst = append(dst, '0')
			}
			digits = true
			continue
		}
		digits = false
		dst = append(dst, c)
	}
	return dst
}

// formatNames are the formats of the rule file a string value is tried
// against, and formatChecks their tests, in the same order.
var (
	formatNames  = [...]string{"date", "rfc3339-utc", "uuid", "email", "integer"}
	formatChecks = [len(formatNames)]func(string) bool{isDate, isRFC3339UTC, isUUID, isEmail, isInteger}
)

// isDate reports whether s is a real date written YYYY-MM-DD.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, ok1 := digitsAt(s, 0, 4)
	m, ok2 := digitsAt(s, 5, 2)
	d, ok3 := digitsAt(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t.Day() == d // February 30 normalizes into March
}

// digitsAt reads the n digits of s at i as a number.
func digitsAt(s string, i, n int) (int, bool) {
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// isRFC3339UTC reports whether s is an RFC 3339 time in UTC, ending in Z.
func isRFC3339UTC(s string) bool {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[10] != 'T' || !isDate(s[:10]) {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// isUUID reports whether s is a UUID in its canonical 8-4-4-4-12 form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
				return false
			}
		}
	}
	return true
}

// isEmail reports whether s looks like an address: one @ with text before
// it, and a domain with an inner dot after it, no spaces.
func isEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || strings.IndexByte(s[at+1:], '@') >= 0 || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	d := s[at+1:]
	dot := strings.LastIndexByte(d, '.')
	return dot > 0 && dot < len(d)-1
}

// isInteger reports whether s is digits with an optional sign.
func isInteger(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
