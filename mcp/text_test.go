package mcp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/mcp"
	"github.com/signpost-proxy/signpost/rules"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the expected text of testdata/text/*.txt instead of comparing with it")

// separator parts a fixture's body from the text it renders to.
const separator = "\n----------\n"

// TestTextGolden renders each testdata/text/*.txt body, the part before the
// ---------- line, and compares the text with the part after it.
func TestTextGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/text/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/text/*.txt fixtures (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			body, want := readFixture(t, file)
			got, ok := mcp.Text(body)
			if !ok {
				t.Fatalf("Text says %s is not a signpost body", body)
			}
			if *update {
				if err := os.WriteFile(file, []byte(string(body)+separator+got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("Text:\n%s\nwant (go test -run TestTextGolden -update to accept):\n%s", got, want)
			}
		})
	}
}

func readFixture(t *testing.T, file string) (body []byte, text string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, text, ok := strings.Cut(string(data), separator)
	if !ok {
		t.Fatalf("%s has no ---------- line between the body and its text", file)
	}
	return []byte(b), strings.TrimSuffix(text, "\n")
}

// TestTextRefusesOtherBodies checks that a body signpost did not write,
// such as one a passthrough route hands on, is not dressed up as one.
func TestTextRefusesOtherBodies(t *testing.T) {
	for _, body := range []string{
		``,
		`<html><body>Bad Request</body></html>`,
		`{"error":"Invalid status"}`,
		`{"error":"invalid_status","message":"allowed values: open"}`,
		`{"error":"invalid_status","message":"allowed values: open","retryable":"no"}`,
		`{"error":400,"message":"bad","retryable":false}`,
		`["error","message","retryable"]`,
		`{"error":"invalid_status","message":"allowed values: open","retryable":false`,
	} {
		if text, ok := mcp.Text([]byte(body)); ok {
			t.Errorf("Text(%s) = %q, true; want false", body, text)
		}
	}
}

// textBudget is the most tokens (o200k_base) the text of one of the
// example rule files' errors may cost: the 60 a rule's message may cost
// before check warns, and 20 for the code, the field, the value sent and
// the retry advice around it.
const textBudget = rules.DefaultMessageTokens + 20

// TestTextTokenBudget renders every error body the project pins: those of
// the fixtures here, and each full body the example rule files' unit tests
// (configs/tests) expect. Every text costs fewer tokens than its body,
// since a client that shows the model both sends both, and each example
// error's text stays within textBudget.
func TestTextTokenBudget(t *testing.T) {
	type body struct {
		json    []byte
		example bool
	}
	bodies := map[string]body{}
	fixtures, _ := filepath.Glob("testdata/text/*.txt")
	for _, file := range fixtures {
		b, _ := readFixture(t, file)
		bodies[file] = body{json: b}
	}
	tests, _ := filepath.Glob("../configs/tests/*.yaml")
	if len(tests) == 0 {
		t.Fatal("no ../configs/tests/*.yaml")
	}
	examples := 0
	for _, file := range tests {
		for name, b := range expectedBodies(t, file) {
			bodies[file+": "+name] = body{json: b, example: true}
		}
	}
	for name, b := range bodies {
		text, ok := mcp.Text(b.json)
		if !ok {
			continue // a success, or a body passed through
		}
		textCost, bodyCost := rules.Tokens(text), rules.Tokens(string(b.json))
		t.Logf("%3d tokens as text, %3d as JSON: %s", textCost, bodyCost, name)
		if textCost >= bodyCost {
			t.Errorf("%s: the text costs %d tokens, no fewer than the body's %d:\n%s", name, textCost, bodyCost, text)
		}
		if b.example {
			examples++
			if textCost > textBudget {
				t.Errorf("%s: the text costs %d tokens, over %d:\n%s", name, textCost, textBudget, text)
			}
		}
	}
	if examples < len(tests) {
		t.Errorf("%d error bodies in %d files of configs/tests; the budget means little without one per file", examples, len(tests))
	}
}

// expectedBodies reads the full bodies a rule test file expects, by case
// name, as compact JSON.
func expectedBodies(t *testing.T, file string) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests []struct {
			Name   string
			Expect struct{ Body any }
		}
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string][]byte{}
	for _, tc := range doc.Tests {
		if tc.Expect.Body == nil {
			continue
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tc.Expect.Body); err != nil {
			t.Fatalf("%s: %s: %v", file, tc.Name, err)
		}
		out[tc.Name] = bytes.TrimSpace(b.Bytes())
	}
	return out
}
