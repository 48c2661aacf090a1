package rules_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// absent stands for a value the request does not carry.
const absent = "<absent>"

func ptr(f float64) *float64 { return &f }

// fld builds a field in the given location with optional constraints.
func fld(in rules.Location, format string, opts ...func(*rules.Field)) *rules.Field {
	f := &rules.Field{Name: "f", Key: "f", In: in}
	if format != "" {
		f.Format = rules.FormatNamed(format)
		if f.Format == nil {
			panic("no format " + format)
		}
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

func required(f *rules.Field) { f.Required = true }
func bounds(lo, hi *float64) func(*rules.Field) {
	return func(f *rules.Field) { f.Min, f.Max = lo, hi }
}
func enum(vs ...string) func(*rules.Field) { return func(f *rules.Field) { f.Enum = vs } }
func pattern(re string) func(*rules.Field) {
	return func(f *rules.Field) { f.Pattern = mustCompile(re) }
}
func maxLength(n int) func(*rules.Field) { return func(f *rules.Field) { f.MaxLength = n } }

// value makes v the request value of a field: JSON for a body field, text
// for any other.
func value(f *rules.Field, v string) gjson.Result {
	switch {
	case v == absent:
		return gjson.Result{}
	case f.In == rules.InBody:
		if !gjson.Valid(v) {
			panic("not JSON: " + v)
		}
		return gjson.Parse(v)
	}
	return rules.Text(v)
}

func TestFieldCheck(t *testing.T) {
	body, query := rules.InBody, rules.InQuery
	tests := []struct {
		field *rules.Field
		value string // JSON for body fields, text otherwise
		want  bool
	}{
		// rfc3339-utc: a Z suffix, fractional seconds allowed, offsets not.
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02Z"`, true},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02.5Z"`, true},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02.123456789Z"`, true},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02+00:00"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11T10:14:02+01:00"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02-00:00"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14:02,5Z"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11 09:14:02Z"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11T09:14Z"`, false},
		{fld(body, "rfc3339-utc"), `"2026-02-30T09:14:02Z"`, false},
		{fld(body, "rfc3339-utc"), `"2026-03-11"`, false},
		{fld(body, "rfc3339-utc"), `"next Friday"`, false},
		{fld(body, "rfc3339-utc"), `1773220442`, false},
		{fld(query, "rfc3339-utc"), `2026-03-11T09:14:02Z`, true},
		{fld(query, "rfc3339-utc"), `2026-03-11T09:14:02 00:00`, false}, // a + decoded from a query

		// date
		{fld(body, "date"), `"2026-03-11"`, true},
		{fld(body, "date"), `"2028-02-29"`, true},
		{fld(body, "date"), `"2026-02-29"`, false},
		{fld(body, "date"), `"2026-3-11"`, false},
		{fld(body, "date"), `"11/03/2026"`, false},
		{fld(body, "date"), `"2026-03-11T00:00:00Z"`, false},
		{fld(body, "date"), `20260311`, false},
		{fld(query, "date"), `2026-03-11`, true},

		// uuid: 8-4-4-4-12 hex digits, either case.
		{fld(body, "uuid"), `"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b"`, true},
		{fld(body, "uuid"), `"3F2B8C1E-6D4A-4E2B-9F7A-1C2D3E4F5A6B"`, true},
		{fld(body, "uuid"), `"3f2b8c1e6d4a4e2b9f7a1c2d3e4f5a6b"`, false},
		{fld(body, "uuid"), `"{3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b}"`, false},
		{fld(body, "uuid"), `"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6"`, false},
		{fld(body, "uuid"), `"3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6g"`, false},
		{fld(body, "uuid"), `"3f2b8c1e-6d4a-4e2b-9f7a_1c2d3e4f5a6b"`, false},
		{fld(path(), "uuid"), `3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b`, true},

		// email: a bare address, not a display name.
		{fld(body, "email"), `"ada@example.com"`, true},
		{fld(body, "email"), `"ada.lovelace+tickets@mail.example.co.uk"`, true},
		{fld(body, "email"), `"Ada <ada@example.com>"`, false},
		{fld(body, "email"), `"<ada@example.com>"`, false},
		{fld(body, "email"), `"ada"`, false},
		{fld(body, "email"), `"ada@"`, false},
		{fld(body, "email"), `" ada@example.com"`, false},
		{fld(query, "email"), `ada@example.com`, true},

		// integer: a body needs a JSON number; text is parsed.
		{fld(body, "integer"), `5`, true},
		{fld(body, "integer"), `-5`, true},
		{fld(body, "integer"), `0`, true},
		// JSON Schema's integer: 5.0 and 1e3 are integers too.
		{fld(body, "integer"), `5.0`, true},
		{fld(body, "integer"), `1e3`, true},
		{fld(body, "integer"), `5.5`, false},
		{fld(body, "integer"), `1e300`, false},
		{fld(body, "integer"), `9223372036854775808`, false},
		{fld(body, "integer"), `"5"`, false},
		{fld(body, "integer"), `true`, false},
		{fld(body, "integer"), `[5]`, false},
		{fld(query, "integer"), `5`, true},
		{fld(query, "integer"), `-5`, true},
		{fld(query, "integer"), `5.0`, true},
		{fld(query, "integer"), `5.5`, false},
		{fld(query, "integer"), `five`, false},
		{fld(query, "integer"), ``, false},
		{fld(query, "integer"), ` 5`, false},
		{fld(rules.InHeader, "integer"), `42`, true},

		// number
		{fld(body, "number"), `3.5`, true},
		{fld(body, "number"), `-0.5`, true},
		{fld(body, "number"), `1e3`, true},
		{fld(body, "number"), `7`, true},
		{fld(body, "number"), `"3.5"`, false},
		{fld(body, "number"), `null`, true}, // null is absence, and the field is optional
		{fld(query, "number"), `3.5`, true},
		{fld(query, "number"), `1e-3`, true},
		{fld(query, "number"), `0x1p4`, false},
		{fld(query, "number"), `NaN`, false},
		{fld(query, "number"), `Inf`, false},
		{fld(query, "number"), `infinity`, false},
		{fld(query, "number"), `1_000`, false},
		{fld(query, "number"), `1e400`, false},
		{fld(query, "number"), `three`, false},

		// boolean: JSON true or false in a body; the words in text.
		{fld(body, "boolean"), `true`, true},
		{fld(body, "boolean"), `false`, true},
		{fld(body, "boolean"), `"true"`, false},
		{fld(body, "boolean"), `1`, false},
		{fld(query, "boolean"), `true`, true},
		{fld(query, "boolean"), `false`, true},
		{fld(query, "boolean"), `True`, false},
		{fld(query, "boolean"), `1`, false},
		{fld(query, "boolean"), `yes`, false},

		// min and max, inclusive, in a body and in text.
		{fld(body, "integer", bounds(ptr(1), ptr(10))), `1`, true},
		{fld(body, "integer", bounds(ptr(1), ptr(10))), `10`, true},
		{fld(body, "integer", bounds(ptr(1), ptr(10))), `0`, false},
		{fld(body, "integer", bounds(ptr(1), ptr(10))), `11`, false},
		{fld(query, "integer", bounds(ptr(1), ptr(10))), `10`, true},
		{fld(query, "integer", bounds(ptr(1), ptr(10))), `11`, false},
		{fld(body, "number", bounds(ptr(0.5), nil)), `0.5`, true},
		{fld(body, "number", bounds(ptr(0.5), nil)), `0.49`, false},
		{fld(body, "number", bounds(nil, ptr(-1))), `-1.5`, true},
		{fld(body, "number", bounds(nil, ptr(-1))), `-0.5`, false},

		// enum: exact, case-sensitive text.
		{fld(body, "", enum("open", "pending", "closed")), `"open"`, true},
		{fld(body, "", enum("open", "pending", "closed")), `"Open"`, false},
		{fld(body, "", enum("open", "pending", "closed")), `"open "`, false},
		{fld(body, "", enum("1", "2")), `1`, false}, // a number is not the text "1"
		{fld(body, "", enum("open", "pending", "closed")), `["open"]`, false},
		{fld(query, "", enum("open", "pending", "closed")), `open`, true},
		{fld(query, "", enum("open", "pending", "closed")), `OPEN`, false},
		{fld(query, "", enum("1", "2")), `1`, true},

		// pattern, unanchored unless the pattern anchors itself.
		{fld(body, "", pattern(`^T-[0-9]+$`)), `"T-8841"`, true},
		{fld(body, "", pattern(`^T-[0-9]+$`)), `"T-"`, false},
		{fld(body, "", pattern(`^T-[0-9]+$`)), `"t-8841"`, false},
		{fld(body, "", pattern(`[0-9]`)), `"abc1"`, true},
		{fld(body, "", pattern(`[0-9]`)), `1`, false},
		{fld(path(), "", pattern(`^T-[0-9]+$`)), `T-8841`, true},

		// max_length counts characters, not bytes.
		{fld(body, "", maxLength(5)), `"hello"`, true},
		{fld(body, "", maxLength(5)), `"hello!"`, false},
		{fld(body, "", maxLength(5)), `"héllo"`, true},
		{fld(body, "", maxLength(5)), `"日本語テキ"`, true},
		{fld(body, "", maxLength(5)), `"日本語テキス"`, false},
		{fld(body, "", maxLength(5)), `"👍👍👍👍👍"`, true},
		{fld(body, "", maxLength(5)), `""`, true},
		{fld(body, "", maxLength(5)), `12345`, false},
		{fld(body, "", maxLength(3), pattern(`^[A-Z]+$`)), `"ABC"`, true},
		{fld(body, "", maxLength(3), pattern(`^[A-Z]+$`)), `"ABCD"`, false},
		{fld(query, "", maxLength(5)), `héllo`, true},

		// required, absent and null.
		{fld(body, ""), absent, true},
		{fld(body, "", required), absent, false},
		{fld(body, ""), `null`, true},
		{fld(body, "", required), `null`, false},
		{fld(body, "", required), `""`, true},
		{fld(body, "", required), `{"any": "thing"}`, true},
		{fld(body, "integer"), absent, true},
		{fld(body, "integer", required), absent, false},
		{fld(body, "", enum("open")), absent, true},
		{fld(body, "", enum("open"), required), absent, false},
		{fld(query, "", required), absent, false},
		{fld(query, "", required), ``, true},
		{fld(body, ""), `[1, 2]`, true}, // declared for echoing only
	}
	for _, tt := range tests {
		f := tt.field
		name := fmt.Sprintf("%s/%s/%s", f.In, describeField(f), tt.value)
		t.Run(name, func(t *testing.T) {
			if got := f.Check(value(f, tt.value)); got != tt.want {
				t.Errorf("Check(%s) = %t, want %t", tt.value, got, tt.want)
			}
		})
	}
}

func path() rules.Location { return rules.InPath }

func describeField(f *rules.Field) string {
	s := "free"
	switch {
	case f.Format != nil:
		s = f.Format.Name
	case f.Enum != nil:
		s = "enum"
	case f.Pattern != nil:
		s = "pattern"
	case f.MaxLength > 0:
		s = "max_length"
	}
	if f.Required {
		s += "+required"
	}
	return s
}

func TestFormats(t *testing.T) {
	for _, f := range rules.Formats {
		if rules.FormatNamed(f.Name) != f {
			t.Errorf("FormatNamed(%q) does not return the format", f.Name)
		}
		field := &rules.Field{In: rules.InQuery, Format: f, Required: true}
		if !field.Check(rules.Text(f.Example)) {
			t.Errorf("format %s: its own example %q fails", f.Name, f.Example)
		}
		if f.Noun == "" {
			t.Errorf("format %s has no noun", f.Name)
		}
	}
	if f := rules.FormatNamed("datetime"); f != nil {
		t.Errorf("FormatNamed(datetime) = %v, want nil", f)
	}
}

func TestText(t *testing.T) {
	for _, s := range []string{"", "open", "T-8841 ~ok", `a"b`, `a\b`, "日本", "\n", "\x01", "\x7f", "<b>"} {
		v := rules.Text(s)
		if v.Type != gjson.String || v.Str != s || v.String() != s || !gjson.Valid(v.Raw) || gjson.Parse(v.Raw).Str != s {
			t.Errorf("Text(%q) = %+v", s, v)
		}
	}
	// Bytes that are not UTF-8 keep their text; the JSON stays valid.
	if v := rules.Text("a\xffb"); v.Str != "a\xffb" || !gjson.Valid(v.Raw) {
		t.Errorf("Text(%q) = %+v", "a\xffb", v)
	}
}

// TestAliasFor looks aliases up without regard to case, on the short ASCII
// values folded in place and on the rest.
func TestAliasFor(t *testing.T) {
	long := strings.Repeat("x", 70)
	cfg, err := rules.Parse("aliases.yaml", []byte(`upstream: http://127.0.0.1:9
routes:
  paint:
    method: POST
    path: /paint
    fields:
      colour:
        enum: [red, green, blue]
        aliases: {Rouge: red, grün: green, `+long+`: blue}
`))
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Routes[0].Field("colour")
	for _, tc := range []struct{ in, want string }{
		{"rouge", "red"},
		{"ROUGE", "red"},
		{"GRÜN", "green"},
		{strings.ToUpper(long), "blue"},
		{"red", ""},
		{"roug", ""},
		{"", ""},
	} {
		got, ok := f.AliasFor(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("AliasFor(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}
