package rulefile

import (
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// tricky are strings YAML would read as something else, or not at all,
// if written plain; and strings that read fine plain.
var tricky = []string{
	"open", "T-8841", "1", "3.5", "1.2.3", "0x1f", "017", "1_000", "1:20", "0b101", ".inf", ".", "2026-03-11",
	"2026-03-11 10:00:00", "true", "yes", "No", "on", "OFF", "Y", "null", "NULL", "~", "", "<<", "=",
	" lead", "trail ", "a: b", "a:b", "a #b", "#x", "- x", "-", "[x]", "{x}", "a, b", "a,b", "it's", "it's: here",
	`say "hi"`, "/tickets/{ticket_id}", "^T-[0-9]+$", `a\.b`, "line\nbreak", "tab\there", "nul\x00", "bad\xbf", "\u2028", "\ufeff",
	"é ü", "*ref", "&anchor", "!tag", "%x", "@x", "`x", "|", ">", "?", ":", "What? Yes!", "x #y",
	"assign_ticket(ticket_id, assignee)", "The pet's id", "Lists pets. Newest first, then by name", "(deprecated) x",
}

// Whatever a renderer writes reads back as the same string, in every
// context it is meant for.
func TestScalarsReadBack(t *testing.T) {
	for _, s := range tricky {
		if utf8.ValidString(s) {
			checkReadsBack(t, s)
		} else {
			checkValidUTF8(t, s)
		}
	}
}

func FuzzScalar(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			checkValidUTF8(t, s)
			return
		}
		checkReadsBack(t, s)
	})
}

// checkValidUTF8: a string that is not UTF-8 is still written as UTF-8
// that YAML reads, though not as the same bytes.
func checkValidUTF8(t *testing.T, s string) {
	t.Helper()
	for _, out := range []string{Scalar(s), BlockScalar(s), Quoted(s)} {
		var v any
		if !utf8.ValidString(out) || yaml.Unmarshal([]byte("k: "+out), &v) != nil {
			t.Errorf("%q renders as %q, which YAML does not read", s, out)
		}
	}
}

func checkReadsBack(t *testing.T, s string) {
	t.Helper()
	for _, tc := range []struct {
		name, out string
		flow      bool
	}{
		{"Scalar", Scalar(s), true},
		{"BlockScalar", BlockScalar(s), false},
		{"Quoted", Quoted(s), true},
	} {
		if strings.ContainsAny(tc.out, "\n\r") {
			t.Errorf("%s(%q) = %s spans lines", tc.name, s, tc.out)
		}
		docs := []string{"k: " + tc.out}
		if tc.flow {
			docs = append(docs, "{k: "+tc.out+"}", "[x, "+tc.out+"]")
		}
		for _, doc := range docs {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Errorf("%s(%q) = %s: YAML does not read %q: %v", tc.name, s, tc.out, doc, err)
				continue
			}
			var got any
			switch v := v.(type) {
			case map[string]any:
				got = v["k"]
			case []any:
				got = v[1]
			}
			if got != s {
				t.Errorf("%s(%q) = %s: YAML reads %q as %#v", tc.name, s, tc.out, doc, got)
			}
		}
	}
}

// What YAML 1.1 tools read as another type is quoted, though yaml.v3
// reads it as a string; what reads the same everywhere stays plain.
func TestScalarQuotesYAML11(t *testing.T) {
	for _, tc := range []struct {
		in, scalar, block string
	}{
		{"open", "open", "open"},
		{"T-8841", "T-8841", "T-8841"},
		{"yes", "'yes'", "'yes'"},
		{"Off", "'Off'", "'Off'"},
		{"y", "'y'", "'y'"},
		{"~", "'~'", "'~'"},
		{"1_000", "'1_000'", "'1_000'"},
		{"1:20", "'1:20'", "'1:20'"},
		{"0b101", "'0b101'", "'0b101'"},
		{"017", "'017'", "'017'"},
		{"1.2.3", "'1.2.3'", "'1.2.3'"},
		{"2026-03-11", "'2026-03-11'", "'2026-03-11'"},
		{"<<", "'<<'", "'<<'"},
		{"=", "'='", "'='"},
		{"The pet's id", "The pet's id", "The pet's id"},
		{"/tickets/{ticket_id}", "'/tickets/{ticket_id}'", "/tickets/{ticket_id}"},
		{"Newest first, then by name", "'Newest first, then by name'", "Newest first, then by name"},
		{"it's: here", "'it''s: here'", "'it''s: here'"},
		{"line\nbreak", `"line\nbreak"`, `"line\nbreak"`},
	} {
		if got := Scalar(tc.in); got != tc.scalar {
			t.Errorf("Scalar(%q) = %s, want %s", tc.in, got, tc.scalar)
		}
		if got := BlockScalar(tc.in); got != tc.block {
			t.Errorf("BlockScalar(%q) = %s, want %s", tc.in, got, tc.block)
		}
	}
}

func TestFlows(t *testing.T) {
	if got, want := FlowList([]string{"open", "yes", "a, b"}), "[open, 'yes', 'a, b']"; got != want {
		t.Errorf("FlowList = %s, want %s", got, want)
	}
	if got, want := FlowMap(Pair("status", "400"), Pair("json", Scalar("error.code"))), "{status: 400, json: error.code}"; got != want {
		t.Errorf("FlowMap = %s, want %s", got, want)
	}
}
