package rules_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// formatFields declares one optional field of each string format.
const formatFields = `routes:
  r:
    method: POST
    path: /r
    fields:
      rfc3339-utc: {format: rfc3339-utc}
      rfc3339: {format: rfc3339}
      date: {format: date}
      uuid: {format: uuid}
      email: {format: email}
`

// formatCorpus holds, for each string format, values on both sides of
// its check: the tricky ones are lower-case t and z, leap days and leap
// seconds, offsets past 23:59, upper-case UUIDs, and addresses with a plus,
// subdomains, quotes, comments, display names and domain literals.
var formatCorpus = map[string][]string{
	"rfc3339-utc": {
		"2026-11-30T17:00:00Z", "2026-03-11T09:14:02.250Z", "2026-03-11T09:14:02.123456789012Z",
		"2024-02-29T00:00:00Z", "2000-02-29T23:59:59Z", "1600-02-29T12:00:00Z", "0000-01-01T00:00:00Z",
		"9999-12-31T23:59:59.999Z", "2026-04-30T00:00:00Z", "2026-12-31T23:59:59Z",
		"1900-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2026-02-30T09:14:02Z", "2026-04-31T09:14:02Z",
		"2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-03-00T00:00:00Z", "2026-03-32T00:00:00Z",
		"2026-03-11t09:14:02z", "2026-03-11T09:14:02z", "2026-03-11t09:14:02Z", "2026-03-11T09:14:02+00:00",
		"2026-03-11T09:14:02+01:00", "2026-03-11T09:14:02", "2026-03-11 09:14:02Z", "2026-03-11T9:14:02Z",
		"2026-03-11T09:14:02,5Z", "2026-03-11T09:14:02.Z", "2026-03-11T24:00:00Z", "2026-03-11T23:60:00Z",
		"2026-03-11T23:59:60Z", "2016-12-31T23:59:60Z", "+2026-03-11T09:14:02Z", "20260311T091402Z",
		"2026-03-11T09:14Z", "2026-03-11", "", " 2026-03-11T09:14:02Z", "2026-03-11T09:14:02Z\n",
		"２０２６-03-11T09:14:02Z", "2026-03-11T09:14:02.5e3Z", "2026-3-11T09:14:02Z",
	},
	"rfc3339": {
		"2026-03-11T10:14:02+01:00", "2026-03-11T09:14:02Z", "2026-03-11t09:14:02z", "2026-03-11T09:14:02z",
		"2026-03-11t09:14:02+05:30", "2026-03-11T04:14:02.250-05:00", "2026-03-11T09:14:02-00:00",
		"2026-03-11T09:14:02+23:59", "2026-03-11T09:14:02.123456789123+01:00", "2024-02-29T12:00:00+01:00",
		"2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5z", "2016-12-31T23:59:60+00:00", "2016-12-31T23:59:60-00:00",
		"2016-12-31T15:59:60-08:00", "2017-01-01T00:59:60+01:00",
		"2026-03-11T09:14:02+24:00", "2026-03-11T09:14:02+01:60", "2026-03-11T09:14:02+0100",
		"2026-03-11T09:14:02+01", "2026-03-11T09:14:02+1:00", "2026-03-11T09:14:02", "2026-03-11T12:59:60Z",
		"2026-03-11T23:58:60Z", "2026-03-11T23:59:61Z", "2016-12-31T23:59:60+01:00", "2023-02-29T12:00:00+01:00",
		"2026-13-01T00:00:00Z", "2026-03-11 09:14:02Z", "2026-03-11T09:14:02,5+01:00", "2026-03-11T9:14:02+01:00",
		"2026-03-11T09:14:02+01:00Z", "2026-03-11T09:14:02Zz", "2026-03-11T09:14:02Z ", "2026-03-11T09:14:02.+01:00",
		"2026-03-11T09:14:02 +01:00", "2026-03-11T09:14:02\u221201:00", "2026-03-11", "",
	},
	"date": {
		"2026-03-11", "2024-02-29", "2000-02-29", "1600-02-29", "0000-02-29", "0004-02-29", "2026-02-28",
		"2026-04-30", "2026-12-31", "2026-01-31", "9999-12-31", "0000-01-01",
		"1900-02-29", "2100-02-29", "2023-02-29", "0100-02-29", "2026-02-30", "2026-04-31", "2026-06-31",
		"2026-09-31", "2026-11-31", "2024-13-01", "2024-00-01", "2024-01-00", "2024-01-32", "2026-3-11",
		"2026-03-1", "26-03-11", "20260311", "2026/03/11", "2026-03-11T00:00:00Z", "2026-03-11 ", " 2026-03-11",
		"+2026-03-11", "-2026-03-11", "12026-03-11", "2026-03-11\n", "2026-W11-3", "", "2026-O3-11",
		"\u0662\u0660\u0662\u0666-03-11",
	},
	"uuid": {
		"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b", "3F2B8C1E-6D4A-4E2B-9F7A-1C2D3E4F5A6B",
		"3f2B8c1E-6d4A-4e2B-9F7a-1C2d3E4f5A6b", "00000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff", "3f2b8c1e-6d4a-0e2b-0f7a-1c2d3e4f5a6b",
		"01890a5d-ac96-774b-bcce-b302099a8057", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "123e4567-e89b-12d3-a456-426614174000",
		"3f2b8c1e6d4a4e2b9f7a1c2d3e4f5a6b", "{3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b}",
		"urn:uuid:3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b", "3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6",
		"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b0", "3g2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b",
		"3f2b8c1e_6d4a_4e2b_9f7a_1c2d3e4f5a6b", "3f2b8c1e-6d4a4-e2b-9f7a-1c2d3e4f5a6b",
		" 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b", "3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b ",
		"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b\n", "", "\uff13f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6",
		"3f2b8c1e--6d4a-4e2b-9f7a-1c2d3e4f5a6", "3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6z",
		"3f2b8c1e-6d4a-4e2b-9f7a1c2d3e4f5a6b-", "0x3f2b8c1-6d4a-4e2b-9f7a-1c2d3e4f5a6b", "not-a-uuid",
		"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6\u00e9", "3f2b8c1e-6d4a-4e2b-9f7a-1c2d-3e4f5a6b",
	},
	"email": {
		"ada@example.com", "ada+tickets@example.com", "ada.lovelace@mail.example.co.uk", "ADA@EXAMPLE.COM",
		"a@b", "ada@localhost", "ada_l-ovelace@ex-ample.com", "!#$%&'*+/=?^_`{|}~-@example.com",
		"jos\u00e9@example.com", "ada@b\u00fccher.de", "ada@[192.0.2.1]", "ada@[0.0.0.0]", "ada@[255.255.255.255]",
		"ada@ex\u00a0ample.com", "ada@-example-.com", "1234@5678", "ada@[::1]", "ada@[::ffff:192.0.2.1]",
		"ada@[IPv6:::1]", "ada@[300.0.0.1]", "ada@[192.0.2.01]", "ada@[192.0.2.1", "ada@[1.2.3]",
		"ada@[ 192.0.2.1]", "ada@[192.0.2.1%eth0]", "ada@[192.0.2.1]x", "Ada <ada@example.com>",
		"<ada@example.com>", "ada@example.com (Ada)", `"ada"@example.com`, `"ada lovelace"@example.com`,
		"ada@", "@example.com", "ada", "ada@@example.com", "ada@exa mple.com", " ada@example.com",
		"ada@example.com ", "ada.@example.com", ".ada@example.com", "a..da@example.com", "ada@example..com",
		"ada@.example.com", "ada@example.com.", "ada@example,com", "ada@exa(mple).com", `ada\@example.com`,
		"ada@example.com\n", "ada@ex\x7fample.com", "ada@ex\tample.com", "ada,grace@example.com",
		"ada@example.com, grace@example.com", "group: ada@example.com;", "ada@example.com>", "ada;@example.com",
		"", "@", "ada@example.com\x00",
	},
}

// patternStricter names what a format's pattern deliberately leaves out
// of what the format's check accepts, for value v, or returns "".
func patternStricter(format, v string) string {
	switch {
	case format == "rfc3339" && len(v) > 19 && v[17:19] == "60" && !strings.HasSuffix(v, "Z") &&
		!strings.HasSuffix(v, "z") && !strings.HasSuffix(v, "+00:00") && !strings.HasSuffix(v, "-00:00"):
		return "a leap second at an offset other than zero"
	case format == "email" && strings.Contains(v, "@[") && strings.Contains(v, ":"):
		return "an IPv6 domain literal"
	}
	return ""
}

// engines compile a pattern as Go's regexp does and as ECMA-262 does,
// without and with the u flag, so that a pattern outside their common
// subset shows as a disagreement.
type engines struct {
	re2  *regexp.Regexp
	ecma map[regexp2.RegexOptions]*regexp2.Regexp
}

func compileEngines(t *testing.T, pattern string) engines {
	t.Helper()
	if err := commonSubset(pattern); err != nil {
		t.Fatalf("pattern %s: %v", pattern, err)
	}
	e := engines{re2: regexp.MustCompile(pattern), ecma: map[regexp2.RegexOptions]*regexp2.Regexp{}}
	for _, opt := range []regexp2.RegexOptions{regexp2.ECMAScript, regexp2.ECMAScript | regexp2.Unicode} {
		re, err := regexp2.Compile(pattern, opt)
		if err != nil {
			t.Fatalf("pattern %s is not ECMA-262 (options %#x): %v", pattern, opt, err)
		}
		e.ecma[opt] = re
	}
	return e
}

// match reports whether the pattern matches s, failing the test when the
// engines disagree.
func (e engines) match(t *testing.T, s string) bool {
	t.Helper()
	got := e.re2.MatchString(s)
	for opt, re := range e.ecma {
		ok, err := re.MatchString(s)
		if err != nil || ok != got {
			t.Errorf("%q: Go's regexp says %t, ECMA-262 (options %#x) %t %v", s, got, opt, ok, err)
		}
	}
	return got
}

// commonSubset reports a regex outside the part of RE2 and ECMA-262 that
// both read alike: literals, classes of literals and \xHH, groups with no
// flag or name ((?: included), alternation, greedy repeats, and ^ and $
// at the ends. It refuses \d, \s, \w, \b, ., (?flags), [[:class:]], \p,
// and escapes of anything but a syntax character, where the two differ or
// one has none.
func commonSubset(pattern string) error {
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			if i+1 == len(pattern) {
				return fmt.Errorf("a trailing backslash")
			}
			i++
			switch d := pattern[i]; {
			case strings.IndexByte(`^$\.*+?()[]{}|/`, d) >= 0:
			case d == 'x' && i+2 < len(pattern) && isHex(pattern[i+1]) && isHex(pattern[i+2]):
				i += 2
			default:
				return fmt.Errorf("escape \\%c at byte %d", d, i-1)
			}
		case c == '(' && strings.HasPrefix(pattern[i:], "(?") && !strings.HasPrefix(pattern[i:], "(?:"):
			return fmt.Errorf("group flags or name at byte %d", i)
		case c == '[' && strings.HasPrefix(pattern[i:], "[[:"):
			return fmt.Errorf("a POSIX class at byte %d", i)
		}
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return err
	}
	return commonOps(re)
}

func commonOps(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpConcat, syntax.OpAlternate, syntax.OpCapture,
		syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpEmptyMatch:
	default:
		return fmt.Errorf("%s: operator %v", re, re.Op)
	}
	// FoldCase is left alone: the parser folds [Tt] into a literal T, and
	// a flag in the text is refused above.
	if re.Flags&syntax.NonGreedy != 0 {
		return fmt.Errorf("%s: a non-greedy repeat", re)
	}
	for _, sub := range re.Sub {
		if err := commonOps(sub); err != nil {
			return err
		}
	}
	return nil
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// formatValues are the values each format's pattern is tried on: the
// corpus; each value the check accepts changed at every position by
// deletion, insertion and substitution; every 29 February from 0000 to
// 9999; and every month and day from 00 to 32 over years the leap rule
// tells apart.
func formatValues(format string) []string {
	values := append([]string(nil), formatCorpus[format]...)
	f := rules.FormatNamed(format)
	const alphabet = "0123456789-:.+ TtZzaAfFgG@[]\"<>(),;\\\u00e9\n"
	for _, v := range formatCorpus[format] {
		if !f.Accepts(v) {
			continue
		}
		for i := 0; i <= len(v); i++ {
			if i < len(v) {
				values = append(values, v[:i]+v[i+1:])
			}
			for _, c := range alphabet {
				values = append(values, v[:i]+string(c)+v[i:])
				if i < len(v) {
					values = append(values, v[:i]+string(c)+v[i+1:])
				}
			}
		}
	}
	suffix := map[string]string{"rfc3339-utc": "T12:00:00Z", "rfc3339": "t12:00:00+01:00", "date": ""}
	if s, ok := suffix[format]; ok {
		for y := 0; y <= 9999; y++ {
			values = append(values, fmt.Sprintf("%04d-02-29%s", y, s))
		}
		for _, y := range []int{0, 1, 4, 100, 400, 1600, 1700, 1900, 2000, 2023, 2024, 2100, 2400, 9996, 9999} {
			for m := 0; m <= 13; m++ {
				for d := 0; d <= 32; d++ {
					values = append(values, fmt.Sprintf("%04d-%02d-%02d%s", y, m, d, s))
				}
			}
		}
	}
	return values
}

// TestFormatPatterns tries each string format's exported pattern on
// thousands of values against the format's own check: every value the
// check rejects, the pattern must reject, and every value it accepts, the
// pattern must accept, but for what patternStricter names. The pattern is
// read by Go's regexp and by ECMA-262, which JSON Schema names, alike.
func TestFormatPatterns(t *testing.T) {
	route := mustParse(t, formatFields).Routes[0]
	for _, f := range rules.Formats {
		if f.Kind != gjson.String {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			p := propertyNamed(route.InputSchema(), f.Name)
			if p.Pattern == "" || p.Format == "" {
				t.Fatalf("format %q, pattern %q; want both, the pattern stating what validators treating the format as a hint skip", p.Format, p.Pattern)
			}
			re := compileEngines(t, p.Pattern)
			if accepted, rejected := corpusSides(f); accepted < 5 || rejected < 15 || accepted+rejected < 30 {
				t.Errorf("the corpus has %d values the check accepts and %d it rejects; want 5 and 15 at least, 30 in all", accepted, rejected)
			}
			values, stricter := formatValues(f.Name), 0
			for _, v := range values {
				if !utf8.ValidString(v) {
					continue // not a JSON string
				}
				check, pattern := f.Accepts(v), re.match(t, v)
				switch why := patternStricter(f.Name, v); {
				case !check && pattern:
					t.Errorf("%q: the check rejects it, the pattern accepts it", v)
				case check && !pattern && why == "":
					t.Errorf("%q: the check accepts it, the pattern rejects it", v)
				case check && !pattern:
					stricter++
				case check && why != "":
					t.Errorf("%q: the pattern accepts %s, which it leaves out by design; drop the exception", v, why)
				}
			}
			if ex := f.Example; !f.Accepts(ex) || !re.match(t, ex) {
				t.Errorf("the format's example %q fails its check or its pattern", ex)
			}
			t.Logf("%d values, %d rejected by the pattern by design", len(values), stricter)
		})
	}
}

func corpusSides(f *rules.Format) (accepted, rejected int) {
	for _, v := range formatCorpus[f.Name] {
		if f.Accepts(v) {
			accepted++
		} else {
			rejected++
		}
	}
	return accepted, rejected
}

// FuzzFormatPatterns holds each string format's pattern to its check on
// any text: never more lenient, and no stricter than patternStricter says.
func FuzzFormatPatterns(f *testing.F) {
	for _, values := range formatCorpus {
		for _, v := range values {
			f.Add(v)
		}
	}
	route := mustParse(f, formatFields).Routes[0]
	patterns := map[string]*regexp.Regexp{}
	for _, format := range rules.Formats {
		if format.Kind == gjson.String {
			patterns[format.Name] = regexp.MustCompile(propertyNamed(route.InputSchema(), format.Name).Pattern)
		}
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			return
		}
		for name, re := range patterns {
			check, pattern := rules.FormatNamed(name).Accepts(v), re.MatchString(v)
			if check != pattern && (!check || patternStricter(name, v) == "") {
				t.Errorf("%s %q: the check says %t, the pattern %t", name, v, check, pattern)
			}
		}
	})
}

// nullFields declares, required and not, a field of each kind a schema
// states differently, in each place a value lives.
const nullFields = `routes:
  r:
    method: POST
    path: /r/{id}
    fields:
      id: {format: uuid}
      opt_enum: {enum: [a, b]}
      req_enum: {required: true, enum: [a, b]}
      opt_date: {format: date}
      req_date: {required: true, format: date}
      opt_at: {format: rfc3339-utc}
      opt_int: {format: integer, min: 1}
      req_int: {required: true, format: integer}
      opt_num: {format: number}
      opt_bool: {format: boolean}
      opt_pattern: {pattern: '^x+$', example: x}
      req_pattern: {required: true, pattern: '^x+$', example: x}
      opt_text: {max_length: 5}
      req_text: {required: true, min_length: 1}
      opt_any:
      req_any: {required: true}
      nested: {key: meta.nested, format: email}
      opt_query: {in: query}
      opt_query_int: {in: query, format: integer}
      req_query: {in: query, required: true}
      opt_header: {in: header, key: X-Opt, format: boolean}
      req_header: {in: header, key: X-Req, required: true}
`

// nullArgs are arguments every field of nullFields accepts.
var nullArgs = map[string]string{
	"id": `"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b"`, "opt_enum": `"a"`, "req_enum": `"b"`, "opt_date": `"2024-02-29"`,
	"req_date": `"2026-03-11"`, "opt_at": `"2026-03-11T09:14:02Z"`, "opt_int": `3`, "req_int": `-4`, "opt_num": `2.5`,
	"opt_bool": `true`, "opt_pattern": `"xx"`, "req_pattern": `"x"`, "opt_text": `"hi"`, "req_text": `"t"`,
	"opt_any": `"note"`, "req_any": `5`, "nested": `"ada+x@mail.example.com"`, "opt_query": `"q"`,
	"opt_query_int": `7`, "req_query": `"r"`, "opt_header": `false`, "req_header": `"h"`,
}

// TestToolSchemaNull sends each argument as null, with the others valid,
// to the proxy's checks and to every exported format's input schema: the
// proxy reads null as absent, so that an optional argument takes it and a
// required one does not, and each schema must say the same.
func TestToolSchemaNull(t *testing.T) {
	cfg := mustParse(t, nullFields)
	r := cfg.Routes[0]
	if len(nullArgs) != len(r.Fields) {
		t.Fatalf("nullArgs has %d arguments for %d fields", len(nullArgs), len(r.Fields))
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, format := range rules.ToolFormats {
		out, err := cfg.MarshalTools(format)
		if err != nil {
			t.Fatal(err)
		}
		schemas[format] = compileSchema(t, format, toolSchemas(t, format, out)[0])
	}
	args := func(null string) string {
		var parts []string
		for _, f := range r.Fields {
			v := nullArgs[f.Name]
			if f.Name == null {
				v = "null"
			}
			parts = append(parts, strconv.Quote(f.Name)+":"+v)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	if fault := proxyVerdict(t, r, args("")); fault != "" {
		t.Fatalf("the proxy rejects the valid arguments at %s", fault)
	}
	for _, f := range r.Fields {
		text := args(f.Name)
		fault := proxyVerdict(t, r, text)
		if (fault == "") == f.Required {
			t.Fatalf("%s: the proxy's verdict on null is %q; want it to accept null exactly when the field is optional", f.Name, fault)
		}
		for _, format := range rules.ToolFormats {
			err := schemas[format].Validate(instance(t, text))
			if (err == nil) != (fault == "") {
				t.Errorf("%s: %s null: the proxy accepts it: %t; the %s schema: %v", f.Name, requiredWord(f), fault == "", format, err)
			}
		}
		prop := compileSchema(t, f.Name, propertyNamed(r.InputSchema(), f.Name))
		if err := prop.Validate(instance(t, "null")); (err == nil) == f.Required {
			t.Errorf("%s: %s; its property says of null: %v", f.Name, requiredWord(f), err)
		}
		if err := prop.Validate(instance(t, nullArgs[f.Name])); err != nil {
			t.Errorf("%s: its property refuses %s: %v", f.Name, nullArgs[f.Name], err)
		}
	}
}

func requiredWord(f *rules.Field) string {
	if f.Required {
		return "required"
	}
	return "optional"
}

// TestPropertyMarshal pins how a property states null: a type union and
// null among an enum's values for an optional argument, neither for a
// required one.
func TestPropertyMarshal(t *testing.T) {
	r := mustParse(t, nullFields).Routes[0]
	for name, want := range map[string]string{
		"opt_enum": `{"type":["string","null"],"description":"allowed values: a, b","enum":["a","b",null]}`,
		"req_enum": `{"type":"string","description":"allowed values: a, b","enum":["a","b"]}`,
		"opt_int":  `{"type":["integer","null"],"description":"must be an integer of at least 1, e.g. 1","minimum":1,"examples":[1]}`,
		"opt_any":  `{}`,
		"req_any":  `{"not":{"type":"null"}}`,
		"req_text": `{"type":"string","description":"must be a non-empty string","minLength":1}`,
		"opt_text": `{"type":["string","null"],"description":"must be a string of at most 5 characters","maxLength":5}`,
	} {
		got, err := json.Marshal(propertyNamed(r.InputSchema(), name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
