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
	long       int64 // successful values longer than valueBytes
	formats    [len(formatNames)]int64
	// lastValue and lastFormats remember the formats of the last
	// successful value checked: a field's values recur, and the checks
	// of some formats (email) parse and allocate.
	lastValue   string
	lastFormats uint8
}

// formatsOf returns the formats raw conforms to, as a bit per formatNames
// entry, checking only a value other than the field's last.
func (f *field) formatsOf(raw string) uint8 {
	if len(raw) > wholeBytes {
		return 0 // not read whole: no format rests on it
	}
	if f.lastValue != "" && raw == f.lastValue {
		return f.lastFormats
	}
	var m uint8
	for j, check := range formatChecks {
		if check(raw) {
			m |= 1 << j
		}
	}
	if len(raw) <= valueBytes {
		f.lastValue, f.lastFormats = strings.Clone(raw), m
	}
	return m
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
	who  []valueCallers // per value in list, when added by addBy
}

// valueCallers counts the distinct callers that sent one value, up to
// maxValueCallers: a set that many callers send is an API's vocabulary,
// where a value one caller sends may be its own name.
type valueCallers struct {
	ids [maxValueCallers - 1]uint64
	n   uint8
}

// maxValueCallers is how far distinct callers of a value are counted.
const maxValueCallers = 3

func (w *valueCallers) add(caller uint64) {
	if caller == 0 || int(w.n) >= maxValueCallers {
		return
	}
	for _, id := range w.ids[:min(int(w.n), len(w.ids))] {
		if id == caller {
			return
		}
	}
	if int(w.n) < len(w.ids) {
		w.ids[w.n] = caller
	}
	w.n++
}

// add counts one more v and reports whether it is counted: false when v
// is new and max values are kept already.
func (c *counts) add(v string, max int) bool {
	_, ok := c.index(v, max)
	return ok
}

// addBy is add that also counts caller among v's distinct callers; 0 is
// no known caller.
func (c *counts) addBy(v string, max int, caller uint64) bool {
	i, ok := c.index(v, max)
	if ok {
		for len(c.who) <= i {
			c.who = append(c.who, valueCallers{})
		}
		c.who[i].add(caller)
	}
	return ok
}

// index counts one more v and returns its index in list; false when v is
// new and max values are kept already.
func (c *counts) index(v string, max int) (int, bool) {
	if i, ok := c.idx[v]; ok {
		c.list[i].Count++
		return int(i), true
	}
	if len(c.list) >= max {
		return 0, false
	}
	if c.idx == nil {
		c.idx = make(map[string]int32)
	}
	v = strings.Clone(v)
	c.idx[v] = int32(len(c.list))
	c.list = append(c.list, Value{Value: v, Count: 1})
	return len(c.list) - 1, true
}

// sorted returns a copy of the values, most frequent first, then by value.
func (c *counts) sorted() []Value {
	if len(c.list) == 0 {
		return nil
	}
	out := append([]Value(nil), c.list...)
	for i := range c.who {
		out[i].Callers = int64(c.who[i].n)
	}
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
// Each check first looks at the value's shape, which costs nothing, so that
// the common value that is none of them (a status, a title) never reaches
// the parsers on the request path.
var (
	formatNames  = [...]string{"date", "rfc3339-utc", "uuid", "email", "integer", "rfc3339"}
	formatShapes = [len(formatNames)]func(string) bool{
		func(s string) bool { return len(s) == 10 && s[4] == '-' && s[7] == '-' },
		func(s string) bool { return len(s) >= 20 && s[4] == '-' && (s[len(s)-1] == 'Z' || s[len(s)-1] == 'z') },
		func(s string) bool { return len(s) == 36 && s[8] == '-' && s[13] == '-' },
		func(s string) bool { return strings.IndexByte(s, '@') > 0 },
		func(s string) bool { return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '+') },
		func(s string) bool { return len(s) >= 20 && s[4] == '-' && s[10]|0x20 == 't' },
	}
	formatChecks = func() (checks [len(formatNames)]func(string) bool) {
		for i, name := range formatNames {
			shape, accepts := formatShapes[i], rules.FormatNamed(name).Accepts
			checks[i] = func(s string) bool { return shape(s) && accepts(s) }
		}
		return checks
	}()
)

// isUUID reports whether s is a UUID in its canonical 8-4-4-4-12 form.
var isUUID = formatChecks[2]
