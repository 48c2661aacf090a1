package draft

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/observe"
)

// masked marks a value the recorder hid, as the logs do.
const masked = "[masked]"

// cutBytes is the shortest a value the recorder cut can be: it keeps 64
// bytes, less at most 3 to end on a whole character.
const cutBytes = 61

// strongFormats are the formats that, when every successful value parses
// as one, say more than any closed set of them: a date field seen with
// three dates is a date field, not an enum of three.
var strongFormats = []string{"rfc3339-utc", "rfc3339", "date", "uuid", "email"}

// fieldDraft is what the draft says of one field of a route.
type fieldDraft struct {
	obs  *observe.Field
	name string // the key under fields:
	key  string // written as key: when the value lives under another name
	in   string // written as in: when it is not the default location

	credential bool
	// The constraint: kind is "enum", "const", "format", "pattern" or ""
	// for none.
	kind     string
	enum     []string
	constant string
	format   string
	pattern  string
	example  string
	active   bool   // the constraint is written, not commented out
	why      string // why it is commented out
	evidence string
	aliases  []aliasDraft
	// used is set when an error rule or a call names the field, which
	// declares it even when its constraint is commented out.
	used bool
}

// declared reports whether the field is written under fields:.
func (f *fieldDraft) declared() bool {
	return !f.credential && (f.active && f.kind != "" || f.used)
}

// aliasDraft is one other name callers sent for a permitted value.
type aliasDraft struct {
	from, to string
	count    int64
	active   bool
	why      string
}

// inferField drafts the constraint one field of op's successful values support.
func inferField(op *observe.Operation, obs *observe.Field, o Options) *fieldDraft {
	method, path := op.Method, op.Path
	f := &fieldDraft{obs: obs, name: obs.Name}
	if obs.Long == 0 {
		// A document from before the record counted long values: any
		// value as long as the record keeps one may have been cut.
		for _, v := range obs.Good {
			if len(v.Value) >= cutBytes {
				obs.Long += v.Count
			}
		}
	}
	if n := fieldName(obs.Name); n != obs.Name {
		f.name, f.key = n, obs.Name
		if obs.In == "body" {
			f.key = gjsonEscape(obs.Name)
		}
	}
	if obs.In != defaultIn(method, path, obs.Name) {
		f.in = obs.In
	}
	if obs.Credential || redact.CredentialName(obs.Name) {
		f.credential = true
		f.evidence = fmt.Sprintf("%s: a credential, sent in %s; its values are never recorded, so nothing is drafted for it", obs.Name, count(obs.Seen, "request"))
		return f
	}
	good := obs.Succeeded
	few := func(what string) {
		if good < int64(o.MinEvidence) {
			f.active, f.why = false, fmt.Sprintf("fewer than %d successful requests; confirm %s", o.MinEvidence, what)
		}
	}
	switch {
	case good == 0:
		f.evidence = fmt.Sprintf("%s: sent in %s, none successful; nothing to infer from", obs.Name, count(obs.Seen, "request"))
		return f
	case obs.Kind == "mixed":
		f.evidence = fmt.Sprintf("%s: %s carried values of several JSON types; no constraint drafted", obs.Name, count(good, "successful request"))
		return f
	case obs.Kind == "boolean":
		f.kind, f.format, f.active = "format", "boolean", true
		f.evidence = fmt.Sprintf("%s: all %d successful values are true or false", obs.Name, good)
		few("the format")
		return f
	case obs.Kind == "number":
		f.kind, f.format, f.active = "format", "number", true
		if obs.Formats["integer"] == good {
			f.format = "integer"
		}
		f.evidence = fmt.Sprintf("%s: all %d successful values are JSON numbers%s", obs.Name, good, exampleNote(obs.Good))
		if f.format == "integer" {
			f.evidence = fmt.Sprintf("%s: all %d successful values are whole numbers%s", obs.Name, good, exampleNote(obs.Good))
		}
		few("the format")
		return f
	}
	for _, name := range strongFormats {
		if obs.Formats[name] == good {
			f.kind, f.format, f.active = "format", name, true
			f.evidence = fmt.Sprintf("%s: all %d successful values are %s (format %s)%s", obs.Name, good, formatNoun(name), name, exampleNote(obs.Good))
			few("the format")
			return f
		}
	}
	if obs.In != "body" && obs.Formats["integer"] == good {
		// Query and path values are text: integer means text that parses
		// as one. In a JSON body it would refuse the string "5".
		f.kind, f.format, f.active = "format", "integer", true
		f.evidence = fmt.Sprintf("%s: all %d successful values are whole numbers%s", obs.Name, good, exampleNote(obs.Good))
		few("the format")
		if kind := otherKind(op, obs); kind != "" && f.active {
			// Unix seconds may be all callers sent of a time the API also
			// takes as text.
			f.active, f.why = false, fmt.Sprintf("the API's errors call it a %s, which it may take in other forms than a number; confirm it", kind)
		} else if unixTimes(obs) && f.active {
			f.active, f.why = false, "its values read as Unix times, and an API that takes those often takes RFC 3339 too; confirm it"
		}
		return f
	}
	enum, ok := closedSet(obs, o)
	recurs := ok && len(enum) > 1 && good >= enumRecurrence*int64(len(enum))
	digits := len(obs.Shapes) == 1 && strings.Contains(obs.Shapes[0].Value, "0")
	if ok && recurs && digits && (sharedValues(obs.Good)*2 < len(enum) || !refused(op, obs, enum)) {
		// A set short of the evidence of one, of one shape with digits
		// (eng-3, eng-7): the shape says more.
		ok = false
	}
	if ok && (recurs || !digits) {
		f.kind, f.enum, f.active = "enum", enum, true
		f.evidence = fmt.Sprintf("%s: %s sent %s: %s", obs.Name, count(good, "successful request"), count(int64(len(enum)), "value"), valueList(obs.Good, 6))
		if len(enum) > 1 && len(obs.Shapes) == 1 && strings.Contains(obs.Shapes[0].Value, "0") {
			f.evidence += fmt.Sprintf("; all of the shape %s: if more may come, write pattern: '%s'", obs.Shapes[0].Value, shapePattern(obs.Shapes[0].Value))
		}
		shared := sharedValues(obs.Good)
		switch {
		case good < int64(o.MinEnumSupport):
			f.active, f.why = false, fmt.Sprintf("fewer than %d successful requests to call the set closed; confirm it", o.MinEnumSupport)
		case len(enum) == 1:
			f.active, f.why = false, "one value alone says nothing of the others; confirm the set"
		case !recurs:
			f.active, f.why = false, fmt.Sprintf("each value seen fewer than %d times on average: they may be names, not a set; confirm it", enumRecurrence)
		case shared*2 < len(enum):
			f.active, f.why = false, fmt.Sprintf("%d of %s sent by more than one caller: they may be each caller's own, not a set; confirm it", shared, count(int64(len(enum)), "value"))
		case !refused(op, obs, enum):
			f.active, f.why = false, "no call was refused for a value outside the set: the API may take others; confirm it"
		}
		few("the set")
		return f
	}
	shapes := obs.Shapes
	switch {
	case obs.Long > 0:
		// A value kept cut has no shape: a pattern would rest on part of it.
		f.evidence = fmt.Sprintf("%s: %s, %d of them too long to keep whole; no pattern drafted", obs.Name, count(good, "successful value"), obs.Long)
		return f
	case len(shapes) == 0 || !strings.Contains(shapes[0].Value, "0"):
		f.evidence = fmt.Sprintf("%s: %s, no closed set, format or shape with digits in common%s", obs.Name, count(good, "successful value"), exampleNote(obs.Good))
		return f
	case len(shapes) > 1 || shapes[0].Count != good:
		// A pattern drafted from one shape refuses the others, which the
		// API took: none is drafted, even commented out.
		f.evidence = fmt.Sprintf("%s: %d successful values in %s, no format or pattern takes them all: %s", obs.Name, good, count(int64(len(shapes)), "shape"), valueList(shapes, 4))
		return f
	}
	f.kind, f.pattern = "pattern", shapePattern(shapes[0].Value)
	f.example = patternExample(f.pattern, shapes[0].Value, obs.Good)
	f.active = true
	f.evidence = fmt.Sprintf("%s: all %d successful values have the shape %s, e.g. %s", obs.Name, good, shapes[0].Value, commentValue(f.example))
	if distinct := len(obs.Good); distinct < minPatternValues {
		// One value sent six times says nothing of the forms others take
		// (15s, but also 1m and 30): a pattern from it would refuse them.
		f.active, f.why = false, "one value alone says little of the form others take; confirm it"
	}
	few("the pattern")
	return f
}

// minPatternValues is how many distinct successful values a pattern is
// drafted live from: one value, however often sent, is not a form.
const minPatternValues = 2

// closedSet returns the successful values of a field as an enum, when
// they look like a closed set: not outgrown the record's bound, at most
// MaxEnum of them, each a short identifier (free text, numbers,
// timestamps, durations and expressions never are), and not each seen
// only once. Path variables name things, and are never a set.
func closedSet(obs *observe.Field, o Options) ([]string, bool) {
	if obs.Open || obs.Long > 0 || obs.In == "path" || obs.Kind != "string" && obs.Kind != "" || len(obs.Good) == 0 || len(obs.Good) > o.MaxEnum {
		return nil, false
	}
	once := true
	var out []string
	for _, v := range obs.Good {
		if !enumWord.MatchString(v.Value) {
			return nil, false
		}
		if v.Count > 1 {
			once = false
		}
		out = append(out, v.Value)
	}
	if once && len(out) > 1 {
		return nil, false
	}
	return out, true
}

// otherKind returns the kind of value an error naming the field says it
// wants, when that kind is one whole numbers are only one form of: a
// timestamp, a time, a date or a duration; else "".
func otherKind(op *observe.Operation, obs *observe.Field) string {
	for _, e := range op.Errors {
		if !namesField(e.Text, obs.Name) {
			continue
		}
		if m := timeWords.FindString(strings.ToLower(e.Text)); m != "" {
			return m
		}
	}
	return ""
}

var timeWords = regexp.MustCompile(`\b(timestamp|duration|date|time)\b`)

// unixTimes reports whether every successful value kept of a field is a
// Unix time in seconds or milliseconds of the years 2001 to 2286 (ten or
// thirteen digits): a time, whatever the field is called.
func unixTimes(obs *observe.Field) bool {
	for _, v := range obs.Good {
		if !unixTime.MatchString(v.Value) {
			return false
		}
	}
	return len(obs.Good) > 0
}

var unixTime = regexp.MustCompile(`^[1-9][0-9]{9}(?:[0-9]{3})?$`)

// enumWord is what an enum's value looks like: a short identifier that
// starts with a letter, such as open, p1, in_progress or v2-beta. A value
// with a space, a quote or an operator is text or an expression; one that
// starts with a digit a number, a timestamp or a duration.
var enumWord = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,31}$`)

// sharedValues counts the values more than one caller sent.
func sharedValues(vs []observe.Value) int {
	n := 0
	for _, v := range vs {
		if v.Callers > 1 {
			n++
		}
	}
	return n
}

// refused reports whether the API was seen refusing a value of the field
// outside enum: a recovery changed it from such a value to one in the set,
// or an error that names the field met such a value.
func refused(op *observe.Operation, obs *observe.Field, enum []string) bool {
	for _, e := range op.Errors {
		for _, b := range e.Blamed {
			if b.Field != obs.Name || b.In != obs.In {
				continue
			}
			for _, c := range b.Changes {
				if c.From != "" && !slices.Contains(enum, c.From) && slices.Contains(enum, c.To) {
					return true
				}
			}
		}
	}
	named := false
	for _, e := range op.Errors {
		named = named || namesField(e.Text, obs.Name)
	}
	if named {
		for _, v := range obs.Bad {
			if !slices.Contains(enum, v.Value) {
				return true
			}
		}
	}
	return false
}

// namesField reports whether an error's text names a field: its name as a
// word of its own, e.g. createdBy in "createdBy in body is required" or
// step in `invalid parameter "step"`.
func namesField(text, name string) bool { return nameIndex(text, name) >= 0 }

// nameIndex is where text first names a field as a word of its own, or -1.
func nameIndex(text, name string) int {
	if name == "" {
		return -1
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return -1
		}
		j += i
		end := j + len(name)
		if (j == 0 || !wordByte(text[j-1])) && (end == len(text) || !wordByte(text[end])) {
			return j
		}
		i = j + 1
	}
}

func wordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// enumRecurrence is how often, on average, each value of a closed set must
// have been seen for the draft to declare it: a set recurs, where titles
// and names grow with each request. With fewer, a shape with digits is
// drafted as a pattern instead, and any other set is left commented out.
const enumRecurrence = 3

// shapePattern is the regex of a shape: each 0 a run of digits, the rest
// literal, e.g. T-0 is ^T-[0-9]+$ and v0.0 is ^v[0-9]+\.[0-9]+$.
func shapePattern(shape string) string {
	var b strings.Builder
	b.WriteString("^")
	for i, part := range strings.Split(shape, "0") {
		if i > 0 {
			b.WriteString("[0-9]+")
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	b.WriteString("$")
	return b.String()
}

// patternExample is the most frequent successful value the pattern takes,
// else the shape with each 0 read as 1.
func patternExample(pattern, shape string, good []observe.Value) string {
	re := regexp.MustCompile(pattern)
	for _, v := range good {
		if !strings.Contains(v.Value, masked) && re.MatchString(v.Value) {
			return v.Value
		}
	}
	return strings.ReplaceAll(shape, "0", "1")
}

// fieldName is a field's name in the rule file: its own when plain,
// else spelt in snake_case.
func fieldName(s string) string {
	if plainField.MatchString(s) {
		return s
	}
	if n := snake(s); n != "" {
		return n
	}
	return "field"
}

var plainField = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// gjsonEscape escapes the characters a gjson path reads as syntax.
func gjsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`.*?|#@\!=<>%"`+"`", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// defaultIn is where the loader places a field that does not say.
func defaultIn(method, path, name string) string {
	for _, s := range segments(path) {
		if s.isVar && s.text == name {
			return "path"
		}
	}
	if method == "POST" || method == "PUT" || method == "PATCH" {
		return "body"
	}
	return "query"
}

func formatNoun(name string) string {
	switch name {
	case "rfc3339-utc":
		return "RFC 3339 timestamps in UTC"
	case "rfc3339":
		return "RFC 3339 timestamps"
	case "date":
		return "dates"
	case "uuid":
		return "UUIDs"
	case "email":
		return "email addresses"
	}
	return name
}

// aliasesFor gathers the changes recoveries made to an enum field: a value
// not permitted followed by a permitted one. A value that differs from a
// permitted one only in case is left out: signpost matches aliases in any
// case and suggests by case already, and the loader refuses it.
func aliasesFor(f *fieldDraft, errs []observe.Error, o Options) (aliases []aliasDraft, caseOnly []string) {
	permitted := map[string]bool{}
	folded := map[string]bool{}
	for _, v := range f.enum {
		permitted[v] = true
		folded[strings.ToLower(v)] = true
	}
	type key struct{ from, to string }
	counts := map[key]int64{}
	var order []key
	cases := map[string]int64{}
	var caseOrder []string
	for _, e := range errs {
		for _, b := range e.Blamed {
			if b.Field != f.obs.Name || b.In != f.obs.In {
				continue
			}
			for _, c := range b.Changes {
				if !permitted[c.To] || permitted[c.From] || c.From == "" || strings.Contains(c.From, masked) {
					continue
				}
				if folded[strings.ToLower(c.From)] {
					k := c.From + " → " + c.To
					if _, seen := cases[k]; !seen {
						caseOrder = append(caseOrder, k)
					}
					cases[k] += c.Count
					continue
				}
				k := key{strings.ToLower(c.From), c.To}
				if _, seen := counts[k]; !seen {
					order = append(order, k)
				}
				counts[k] += c.Count
			}
		}
	}
	for _, k := range caseOrder {
		caseOnly = append(caseOnly, fmt.Sprintf("%s (%s)", k, count(cases[k], "recovery")))
	}
	// One alias per value sent: the most frequent target wins; a tie is
	// left for the reviewer.
	best := map[string]key{}
	tied := map[string]bool{}
	for _, k := range order {
		b, ok := best[k.from]
		switch {
		case !ok || counts[k] > counts[b]:
			best[k.from], tied[k.from] = k, false
		case counts[k] == counts[b]:
			tied[k.from] = true
		}
	}
	for _, k := range order {
		if best[k.from] != k {
			continue
		}
		a := aliasDraft{from: k.from, to: k.to, count: counts[k], active: f.active}
		switch {
		case tied[k.from]:
			a.active, a.why = false, "recoveries sent more than one value after it, as often; choose one"
		case counts[k] < int64(o.MinEvidence):
			a.active, a.why = false, fmt.Sprintf("fewer than %d recoveries; confirm it", o.MinEvidence)
		case !f.active:
			a.why = "the enum itself awaits confirmation"
		}
		aliases = append(aliases, a)
	}
	sortAliases(aliases)
	return aliases, caseOnly
}
