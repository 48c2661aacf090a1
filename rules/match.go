package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// statusSet is a set of statuses a rule may match: the errors, 400 to
// 599, and the successes, 200 to 299, that may carry an error.
type statusSet [7]uint64

const minStatus, maxStatus = 200, 599

func (s *statusSet) add(status int) { i := status - minStatus; s[i/64] |= 1 << (i % 64) }

func (s *statusSet) has(status int) bool {
	if status < minStatus || status > maxStatus {
		return false
	}
	i := status - minStatus
	return s[i/64]&(1<<(i%64)) != 0
}

// anySuccess reports whether the set holds a 2xx status.
func (s *statusSet) anySuccess() bool { return s[0] != 0 || s[1]&(1<<36-1) != 0 }

func (s *statusSet) union(o statusSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

// String lists the set compactly, using classes where whole: "4xx, 503".
func (s statusSet) String() string {
	var parts []string
	for class := minStatus; class <= maxStatus; class += 100 {
		if class == 300 {
			continue // redirects are never matched
		}
		whole := true
		for st := class; st < class+100; st++ {
			if !s.has(st) {
				whole = false
				break
			}
		}
		if whole {
			parts = append(parts, strconv.Itoa(class/100)+"xx")
			continue
		}
		for st := class; st < class+100; st++ {
			if s.has(st) {
				parts = append(parts, strconv.Itoa(st))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// Body is an upstream error body under examination, parsed at most once.
type Body struct {
	Raw     []byte
	checked bool
	valid   bool
	// The last member looked up, for the rules after the first that read
	// the same one (most read "error").
	path  string
	value gjson.Result
}

// get returns the value at a gjson path in the body, which must be JSON.
// The body is walked in place, through a string sharing its bytes, and
// only the value found is copied out: a body may be as large as
// limits.error_body, and its buffer is one the proxy charged to its
// budget and takes back once the error is answered, so no copy of it may
// outlive the lookup, nor go uncharged.
func (b *Body) get(path string) gjson.Result {
	if path != b.path || b.path == "" {
		v := Lookup(unsafe.String(unsafe.SliceData(b.Raw), len(b.Raw)), path, false)
		raw := strings.Clone(v.Raw)
		if n := len(raw); n >= 2 && v.Raw[1:n-1] == v.Str {
			v.Str = raw[1 : n-1] // a string without escapes: one copy serves both
		} else {
			v.Str = strings.Clone(v.Str)
		}
		v.Raw = raw
		b.path, b.value = path, v
	}
	return b.value
}

// IsJSON reports whether the body is JSON (see IsJSON), checked once for
// every rule and reader of it.
func (b *Body) IsJSON() bool { return b.isJSON() }

func (b *Body) isJSON() bool {
	if !b.checked {
		b.valid, b.checked = IsJSON(b.Raw), true
	}
	return b.valid
}

// MatchError returns the first error rule of the route that matches an
// upstream response with this status and body, or nil: an error, or a
// success that carries one.
func (r *Route) MatchError(status int, body *Body) *ErrorRule {
	if !r.concerns.has(status) {
		return nil
	}
	for _, e := range r.Errors {
		if e.Match.matches(status, body) {
			return e
		}
	}
	return nil
}

func (m *Match) matches(status int, body *Body) bool {
	if !m.Status.has(status) {
		return false
	}
	if m.Body != nil && !m.Body.Match(body.Raw) {
		return false
	}
	if m.JSON == "" {
		return true
	}
	if !body.isJSON() {
		return false
	}
	v := body.get(m.JSON)
	if !v.Exists() {
		return false
	}
	switch {
	case m.Equals != nil:
		return v.String() == *m.Equals
	case m.NotEquals != nil:
		return v.String() != *m.NotEquals
	case m.Contains != nil:
		return strings.Contains(v.String(), *m.Contains)
	case m.Regex != nil:
		return m.Regex.MatchString(v.String())
	}
	return true
}

// CaptureGroup is the name of the regex group whose text becomes the
// "received" value of a rewritten error.
const CaptureGroup = "received"

// Captured returns the text the rule's regex captured in its "received"
// group from body, if the rule has such a group and it matched.
func (e *ErrorRule) Captured(body *Body) (string, bool) {
	if re := e.Match.Body; re != nil && re.SubexpIndex(CaptureGroup) >= 0 {
		return capture(re, body.Raw)
	}
	if re := e.Match.Regex; re != nil && re.SubexpIndex(CaptureGroup) >= 0 && body.isJSON() {
		return capture(re, []byte(body.get(e.Match.JSON).String()))
	}
	return "", false
}

// CapturedValue is text captured from an upstream's body as the JSON value
// it stands for, so that an echo keeps the type the request sent: sent,
// the request's own value, when its text is the capture (44 stays 44, "44"
// stays "44"), or an array or object the capture writes another way
// (["GB"] that the upstream printed as [GB]), or the element of one that
// the capture names; else, for a numeric or boolean field, a capture that
// reads as such a JSON value; else the text. A capture that only says
// nothing was there (<nil>, null, None), for a field not sent, is no
// value: nothing was received.
func CapturedValue(f *Field, s string, sent gjson.Result) gjson.Result {
	switch sent.Type {
	case gjson.String:
		if sent.Str == s {
			return sent
		}
	case gjson.Number, gjson.True, gjson.False:
		if sent.Raw == s {
			return sent
		}
	case gjson.JSON:
		if sent.Raw == s || sameWords(s, sent) {
			return sent
		}
		if v, ok := elementNamed(sent, s); ok {
			return v
		}
	}
	if !sent.Exists() && nothing(s) {
		return gjson.Result{}
	}
	if f != nil && f.Format != nil && f.Format.Kind != gjson.String && s == strings.TrimSpace(s) && gjson.Valid(s) {
		if v := gjson.Parse(s); v.Type == f.Format.Kind || f.Format.Kind == gjson.True && v.Type == gjson.False {
			return v
		}
	}
	return Text(s)
}

// nothing reports whether a capture only says no value was there, as
// languages print one.
func nothing(s string) bool {
	switch strings.TrimSpace(s) {
	case "<nil>", "nil", "null", "None", "undefined", "NULL", "":
		return true
	}
	return false
}

// sameWords reports whether s writes the scalars of the array or object v
// in order, however the upstream printed them: [GB US], ["GB", "US"],
// GB,US, map[a:1].
func sameWords(s string, v gjson.Result) bool {
	var want []string
	var walk func(gjson.Result)
	walk = func(r gjson.Result) {
		if r.IsArray() || r.IsObject() {
			r.ForEach(func(k, e gjson.Result) bool {
				if r.IsObject() {
					want = append(want, k.String())
				}
				walk(e)
				return true
			})
			return
		}
		want = append(want, r.String())
	}
	walk(v)
	got := strings.FieldsFunc(s, func(r rune) bool {
		return strings.ContainsRune(` ,;:[]{}()"'`, r)
	})
	if len(got) > 0 && got[0] == "map" && v.IsObject() {
		got = got[1:] // Go's map[a:1]
	}
	if len(got) != len(want) || len(got) == 0 {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// elementNamed returns the element of the array v whose text is s.
func elementNamed(v gjson.Result, s string) (gjson.Result, bool) {
	if !v.IsArray() {
		return gjson.Result{}, false
	}
	var found gjson.Result
	v.ForEach(func(_, e gjson.Result) bool {
		if e.String() == s && (e.Type == gjson.String || e.Raw == s) {
			found = e
			return false
		}
		return true
	})
	return found, found.Exists()
}

func capture(re *regexp.Regexp, b []byte) (string, bool) {
	m := re.FindSubmatchIndex(b)
	i := re.SubexpIndex(CaptureGroup)
	if m == nil || m[2*i] < 0 {
		return "", false
	}
	return string(b[m[2*i]:m[2*i+1]]), true
}

// IsRetryable reports whether repeating the call unchanged may succeed: the
// rule's own say if it has one, else true only for statuses that mean
// "later" (429, 502, 503, 504), and for a 5xx only when the call is
// idempotent: a POST the upstream failed may have taken effect.
func (e *ErrorRule) IsRetryable(status int, idempotent bool) bool {
	if e.Retryable != nil {
		return *e.Retryable
	}
	return TransientStatus(status) && (status < 500 || idempotent)
}

// TransientStatus reports whether an upstream status means the same call
// may succeed later.
func TransientStatus(status int) bool {
	switch status {
	case 429, 502, 503, 504:
		return true
	}
	return false
}

// Why explains why m does not match an upstream response with this status
// and body, in one clause, or returns "" when it matches. It serves
// `signpost explain`, so it says what was found against what was wanted.
func (m *Match) Why(status int, body *Body) string {
	if !m.Status.has(status) {
		return fmt.Sprintf("status %d is not %s", status, m.Status)
	}
	if m.Body != nil && !m.Body.Match(body.Raw) {
		return fmt.Sprintf("the body does not match body %q", m.Body.String())
	}
	if m.JSON == "" {
		return ""
	}
	if !body.isJSON() {
		return "the body is not JSON, and the rule reads json " + strconv.Quote(m.JSON)
	}
	v := body.get(m.JSON)
	if !v.Exists() {
		return fmt.Sprintf("the body has no value at json %q", m.JSON)
	}
	got := v.String()
	switch {
	case m.Equals != nil && got != *m.Equals:
		return fmt.Sprintf("the value at %q is %q, not equal to %q", m.JSON, got, *m.Equals)
	case m.Contains != nil && !strings.Contains(got, *m.Contains):
		return fmt.Sprintf("the value at %q is %q, which does not contain %q", m.JSON, got, *m.Contains)
	case m.Regex != nil && !m.Regex.MatchString(got):
		return fmt.Sprintf("the value at %q is %q, which does not match regex %q", m.JSON, got, m.Regex.String())
	}
	return ""
}
