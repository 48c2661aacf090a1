package rules

import (
	"encoding/json"
	"math"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Format is a named value format a field can require.
type Format struct {
	Name string
	// Noun describes a conforming value, e.g. "an RFC 3339 timestamp in UTC".
	Noun string
	// Example is a conforming value, used when the field gives none.
	Example string
	// Kind is the JSON type a body value must have: String, Number or True
	// (for booleans).
	Kind  gjson.Type
	valid func(string) bool
}

// Formats are the named formats, in the order the reference lists them.
var Formats = []*Format{
	{Name: "rfc3339-utc", Noun: "an RFC 3339 timestamp in UTC", Example: "2026-11-30T17:00:00Z", Kind: gjson.String, valid: isRFC3339UTC},
	{Name: "date", Noun: "a calendar date as YYYY-MM-DD", Example: "2026-03-11", Kind: gjson.String, valid: isDate},
	{Name: "uuid", Noun: "a UUID in 8-4-4-4-12 hex form", Example: "3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b", Kind: gjson.String, valid: isUUID},
	{Name: "email", Noun: "an email address", Example: "ada@example.com", Kind: gjson.String, valid: isEmail},
	{Name: "integer", Noun: "an integer", Example: "42", Kind: gjson.Number, valid: isInteger},
	{Name: "number", Noun: "a number", Example: "3.5", Kind: gjson.Number, valid: isNumber},
	{Name: "boolean", Noun: "true or false", Example: "true", Kind: gjson.True, valid: isBoolean},
	{Name: "rfc3339", Noun: "an RFC 3339 timestamp with its offset", Example: "2026-03-11T10:14:02+01:00", Kind: gjson.String, valid: isRFC3339},
}

// FormatNamed returns the format called name, or nil.
func FormatNamed(name string) *Format {
	for _, f := range Formats {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func formatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	return names
}

func (f *Format) numeric() bool { return f.Kind == gjson.Number }

// Accepts reports whether s conforms to f: a string value as sent, or a
// number's JSON text. It is the check a field of this format applies.
func (f *Format) Accepts(s string) bool { return f.valid(s) }

func isRFC3339UTC(s string) bool {
	// time.Parse also takes a comma before fractional seconds, and an hour
	// of one digit; RFC 3339 takes neither.
	if !strings.HasSuffix(s, "Z") || strings.Contains(s, ",") || len(s) < len("2006-01-02T15:04:05Z") ||
		s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// isRFC3339 takes an RFC 3339 date-time (section 5.6) with any offset, as
// OpenAPI's and JSON Schema's date-time do: T and Z in either case, and a
// leap second where the minute ends at 23:59 UTC.
func isRFC3339(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || strings.Contains(s, ",") || s[10] != 'T' && s[10] != 't' ||
		s[13] != ':' || s[16] != ':' {
		return false
	}
	b := []byte(s)
	b[10] = 'T'
	if b[len(b)-1] == 'z' {
		b[len(b)-1] = 'Z'
	}
	leap := s[17:19] == "60"
	if leap {
		b[18] = '9' // time.Parse takes no second 60
		b[17] = '5'
	}
	if off := b[len(b)-6:]; b[len(b)-1] != 'Z' && (off[1] > '2' || off[1] == '2' && off[2] > '3' || off[4] > '5') {
		return false // time.Parse takes an offset of up to 24:59
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return false
	}
	t = t.UTC()
	return !leap || t.Hour() == 23 && t.Minute() == 59
}

func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

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
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func isEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// isInteger accepts what JSON Schema's "integer" accepts, so that the
// exported schema and the check agree: 30 and also 30.0 or 3e1, JSON
// having one number model; past 2^53 only digits, which stay exact.
func isInteger(s string) bool {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return true
	}
	if !isNumber(s) {
		return false
	}
	n, _ := strconv.ParseFloat(s, 64)
	return n == math.Trunc(n) && math.Abs(n) <= 1<<53
}

// plainInteger reports whether s is an integer written in digits alone,
// without a fraction or an exponent.
func plainInteger(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func isNumber(s string) bool {
	// ParseFloat also takes hex, underscores, "inf" and "nan".
	if strings.Trim(s, "0123456789.+-eE") != "" {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func isBoolean(s string) bool { return s == "true" || s == "false" }

// Text makes a request value that arrived as text (a query parameter, path
// variable or header) checkable like a JSON one.
func Text(s string) gjson.Result {
	return gjson.Result{Type: gjson.String, Str: s, Raw: quoteText(s)}
}

// quoteText returns s as a JSON string: directly for the usual value,
// printable ASCII with nothing to escape, else through encoding/json
// (strconv.Quote's \x escapes are not JSON).
func quoteText(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return string(b)
		}
	}
	return `"` + s + `"`
}

// Check reports whether v, the field's value as the request carried it,
// satisfies the declared constraint. A value that is absent, or JSON null,
// satisfies it unless the field is required.
func (f *Field) Check(v gjson.Result) bool {
	if !v.Exists() || v.Type == gjson.Null {
		return !f.Required
	}
	// Values outside a JSON body always arrive as text.
	text := f.In != InBody
	if f.Format != nil {
		var s string
		switch {
		case text:
			s = v.Str
		case f.Format.Kind == gjson.True:
			if v.Type != gjson.True && v.Type != gjson.False {
				return false
			}
			s = v.Raw
		case v.Type != f.Format.Kind:
			return false
		case v.Type == gjson.Number:
			s = v.Raw
		default:
			s = v.Str
		}
		if !f.Format.valid(s) {
			return false
		}
		if f.Format.numeric() && (f.Min != nil || f.Max != nil) {
			n, _ := strconv.ParseFloat(s, 64)
			if f.Min != nil && n < *f.Min || f.Max != nil && n > *f.Max {
				return false
			}
		}
		return true
	}
	if f.Enum == nil && f.Pattern == nil && f.MaxLength == 0 && f.MinLength == 0 {
		return true // declared for echoing and presence only
	}
	if v.Type != gjson.String {
		return false
	}
	if f.Enum != nil && !f.Permits(v.Str) {
		return false
	}
	if f.Pattern != nil && !f.matchesPattern(v.Str) {
		return false
	}
	if f.MinLength > 0 && utf8.RuneCountInString(v.Str) < f.MinLength {
		return false
	}
	return f.MaxLength == 0 || utf8.RuneCountInString(v.Str) <= f.MaxLength
}

// matchesPattern reports whether s matches f.Pattern, in one pass when the
// loader found the pattern simple enough.
func (f *Field) matchesPattern(s string) bool {
	if p := f.simple; p != nil && p.re == f.Pattern {
		return p.MatchString(s)
	}
	return f.Pattern.MatchString(s)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ruleText states the field's constraint for the caller: the permitted set
// when it is enumerable, else the rule and one concrete example.
func (f *Field) ruleText() string {
	if f.Lookup != nil {
		return f.constraintText() + "; " + lookupHint(f)
	}
	return f.constraintText()
}

// constraintText states the declared constraint alone.
func (f *Field) constraintText() string {
	var b strings.Builder
	switch {
	case f.Const != "" && f.RuleText != "":
		return f.RuleText
	case f.Enum != nil && !f.Listed && f.RuleText != "":
		return f.RuleText
	case f.Enum != nil:
		return listing(f.Enum)
	case f.Format != nil && f.Format.Kind == gjson.True:
		return "must be true or false"
	case f.Format != nil:
		b.WriteString("must be ")
		b.WriteString(f.Format.Noun)
		switch {
		case f.Min != nil && f.Max != nil:
			b.WriteString(" from " + num(*f.Min) + " to " + num(*f.Max))
		case f.Min != nil:
			b.WriteString(" of at least " + num(*f.Min))
		case f.Max != nil:
			b.WriteString(" of at most " + num(*f.Max))
		}
	case f.Pattern != nil && f.RuleText != "":
		return f.patternRule()
	case f.Pattern != nil:
		b.WriteString("must match the pattern ")
		b.WriteString(f.Pattern.String())
		b.WriteString(lengthIn(f.MinLength, f.MaxLength))
	case f.MaxLength > 0 || f.MinLength > 0:
		return "must be " + stringRule(f.MinLength, f.MaxLength, "")
	case f.Required:
		return "is required"
	default:
		return "was rejected by the upstream"
	}
	if f.Example != "" {
		b.WriteString(", e.g. ")
		b.WriteString(f.Example)
	}
	return b.String()
}

// patternRule states a pattern field's constraint in the author's words,
// which agents read in place of the regex: then the length limit, and the
// example unless the words name it already.
func (f *Field) patternRule() string {
	s := f.RuleText
	if f.MaxLength > 0 {
		s += " in at most " + strconv.Itoa(f.MaxLength) + " characters"
	}
	if f.Example != "" && !strings.Contains(f.RuleText, f.Example) {
		s += ", e.g. " + f.Example
	}
	return s
}

// defaultExample is the example a field shows when it gives none: its
// format's, moved into the field's bounds, or "" for free text.
func (f *Field) defaultExample() string {
	switch {
	case f.Format == nil:
		return ""
	case f.Format.numeric() && f.Min != nil:
		if f.Format.Name == "integer" {
			return num(math.Ceil(*f.Min))
		}
		return num(*f.Min)
	case f.Format.numeric() && f.Max != nil && *f.Max < 42:
		if f.Format.Name == "integer" {
			return num(math.Floor(*f.Max))
		}
		return num(*f.Max)
	}
	return f.Format.Example
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// stringRule states a free-text length rule: "a string of at most 200
// characters", "a non-empty string" for a least length of one. adj, as
// "non-blank ", qualifies the string.
func stringRule(min, max int, adj string) string {
	if min == 1 && adj == "" {
		adj = "non-empty "
	}
	s := "a " + adj + "string"
	switch {
	case min > 1 && max > 0:
		s += " of " + strconv.Itoa(min) + " to " + strconv.Itoa(max) + " characters"
	case min > 1:
		s += " of at least " + strconv.Itoa(min) + " characters"
	case max > 0:
		s += " of at most " + strconv.Itoa(max) + " characters"
	}
	return s
}

// lengthIn states a pattern field's length bounds: " in at most 20
// characters", or "" when there are none.
func lengthIn(min, max int) string {
	switch {
	case min > 0 && max > 0:
		return " in " + strconv.Itoa(min) + " to " + strconv.Itoa(max) + " characters"
	case min == 1:
		return " in at least 1 character"
	case min > 1:
		return " in at least " + strconv.Itoa(min) + " characters"
	case max > 0:
		return " in at most " + strconv.Itoa(max) + " characters"
	}
	return ""
}

// Fault states what is wrong with v, the field's value as the request
// carried it, when the field is reported at fault: the field's rule,
// preceded or replaced by what the rule alone would not say, so that no
// body states a rule the value already meets. That is: missing (and where
// a renamed body value lives), empty or blank, of the wrong JSON type, a
// timestamp's offset other than Z, an integer written with a fraction.
func (f *Field) Fault(v gjson.Result) string {
	if !v.Exists() {
		if !f.Required {
			return f.Rule
		}
		where := ""
		if f.In == InBody && f.Key != f.Name {
			where = " at " + f.Key
		}
		if f.Rule == "is required" {
			return "is required" + where
		}
		return "is required" + where + "; " + f.Rule
	}
	if v.Type == gjson.Null {
		return f.Rule
	}
	if f.wrongType(v) {
		return "must be a JSON " + f.jsonType() + ", not " + article(jsonKind(v)) + "; " + f.Rule
	}
	if s := f.blankFault(v); s != "" {
		return s
	}
	s := v.Str
	if v.Type != gjson.String {
		s = v.Raw
	}
	switch {
	case f.Format == nil:
	case strings.HasPrefix(f.Format.Name, "rfc3339") && strings.ContainsAny(s, "tz") && f.Format.valid(strings.ToUpper(s)):
		// RFC 3339 allows t and z; the checks, as most parsers, take
		// the upper case the examples write.
		return "must be " + f.Format.Noun + ", with T and Z written in upper case, e.g. " + f.Example
	case f.Format.Name == "rfc3339-utc" && withOffset(s):
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			if _, off := t.Zone(); off == 0 {
				return "must be " + f.Format.Noun + ", with the offset written Z, e.g. " + f.Example
			}
			return "must be " + f.Format.Noun + ": convert the time to UTC and write the offset Z, e.g. " + f.Example
		}
	case f.Format.Name == "integer":
		if f.Check(v) && !plainInteger(s) {
			return "must be written without a fraction or exponent; " + f.Rule
		}
	}
	return f.Rule
}

// wrongType reports whether body value v has a JSON type the field does
// not take, where the rule alone would not say so: always for a number or
// boolean (a string "30" seems to meet "an integer from 1 to 120"); for a
// pattern or a format of text, which a number corrected to meet it would
// break again as a number (1042 for ^C-[0-9]+$); and for any string field
// when the value's text would pass (1 for an enum of "1", "2"). "must be
// one of: p1, p2, p3" says enough for 7.
func (f *Field) wrongType(v gjson.Result) bool {
	want := f.jsonType()
	if want == "" || f.In != InBody || want == jsonKind(v) {
		return false
	}
	if want != "string" || f.Pattern != nil || f.Format != nil {
		return true
	}
	return f.MaxLength == 0 && f.MinLength == 0 && f.Check(Text(v.Raw))
}

// jsonType is the JSON type a body value of the field must have, or ""
// when any will do.
func (f *Field) jsonType() string {
	switch {
	case f.Format != nil && f.Format.Kind == gjson.True:
		return "boolean"
	case f.Format != nil && f.Format.Kind == gjson.Number:
		return "number"
	case f.Format != nil, f.Enum != nil, f.Pattern != nil, f.MaxLength > 0, f.MinLength > 0:
		return "string"
	}
	return ""
}

// withOffset reports whether s ends as a timestamp with a numeric offset,
// such as +01:00, before it is parsed (a failed parse allocates).
func withOffset(s string) bool {
	n := len(s)
	return n >= len("2006-01-02T15:04:05+00:00") && (s[n-6] == '+' || s[n-6] == '-') && s[n-3] == ':'
}

// jsonKind names v's JSON type: string, number, boolean, object, array or
// null.
func jsonKind(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return "string"
	case v.Type == gjson.Number:
		return "number"
	case v.Type == gjson.True || v.Type == gjson.False:
		return "boolean"
	case v.IsArray():
		return "array"
	case v.IsObject():
		return "object"
	}
	return "null"
}

// article puts "a" or "an" before a JSON type's name.
func article(kind string) string {
	if kind == "array" || kind == "object" {
		return "an " + kind
	}
	return "a " + kind
}

// blankFault reports a string that is empty or only white space, for a
// free-text field whose rule it would otherwise seem to meet: "is empty;"
// then the rule with a least length of one. It is "" for any other value,
// and for a field whose enum, format or pattern the value breaks, which
// the rule says already.
func (f *Field) blankFault(v gjson.Result) string {
	if v.Type != gjson.String || strings.TrimSpace(v.Str) != "" || f.Enum != nil || f.Format != nil ||
		f.Pattern != nil && !f.matchesPattern(v.Str) {
		return ""
	}
	what, adj := "is empty; ", ""
	if v.Str != "" {
		what, adj = "is blank; ", "non-blank "
	}
	var rule string
	if f.Pattern != nil {
		probe := *f
		probe.MinLength = max(1, f.MinLength)
		rule = probe.constraintText()
	} else {
		rule = "must be " + stringRule(max(1, f.MinLength), f.MaxLength, adj)
	}
	if f.Lookup != nil {
		rule += "; " + lookupHint(f)
	}
	return what + rule
}

// Permits reports whether s is one of an enum field's values, hidden ones
// included.
func (f *Field) Permits(s string) bool {
	if f.members != nil {
		return f.members[s]
	}
	return contains(f.Enum, s) || contains(f.Hidden, s)
}

// AliasFor returns the permitted value an alias stands for, matched
// without regard to case.
func (f *Field) AliasFor(s string) (string, bool) {
	if len(f.aliasesFolded) == 0 {
		return "", false
	}
	var buf [64]byte
	if lower, ok := asciiLower(buf[:0], s); ok {
		v, ok := f.aliasesFolded[string(lower)] // looked up without a copy
		return v, ok
	}
	v, ok := f.aliasesFolded[strings.ToLower(s)]
	return v, ok
}

// asciiLower appends s in lower case to dst when s is ASCII and fits in
// dst's capacity, so that the usual short value is folded on the stack.
func asciiLower(dst []byte, s string) ([]byte, bool) {
	if len(s) > cap(dst) {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}
