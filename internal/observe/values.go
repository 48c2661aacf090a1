package observe

import (
	"strings"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/rules"
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

// formatNames are the formats of the rule file a successful string value
// is tried against, and formatChecks the rule file's own checks of them,
// in the same order: a format the draft declares takes every value that
// counted for it.
var (
	formatNames  = [...]string{"date", "rfc3339-utc", "uuid", "email", "integer"}
	formatChecks = func() (checks [len(formatNames)]func(string) bool) {
		for i, name := range formatNames {
			checks[i] = rules.FormatNamed(name).Accepts
		}
		return checks
	}()
)

// isUUID reports whether s is a UUID in its canonical 8-4-4-4-12 form.
var isUUID = rules.FormatNamed("uuid").Accepts
