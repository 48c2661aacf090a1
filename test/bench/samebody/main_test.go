package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) body {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := read(name, path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ref := file("signpost", `{"error":"invalid_status","received":"a<b","n":42,"retryable":false}`)
	for _, tc := range []struct {
		name, text string
		problems   []string
	}{
		{"same", `{"retryable":false,"n":42.0,"received":"a\u003cb","error":"invalid_status"}`, nil},
		{"short", `{"error":"invalid_status","received":"a<b","n":42}`,
			[]string{`short does not write "retryable"`}},
		{"more", `{"error":"invalid_status","received":"a<b","n":42,"retryable":false,"did_you_mean":["open"]}`,
			[]string{`more writes "did_you_mean", which signpost does not`}},
		{"other", `{"error":"invalid_status","received":"a","n":42,"retryable":false}`,
			[]string{`other writes "received" as`}},
	} {
		table, problems := compare([]body{ref, file(tc.name, tc.text)}, []string{"did_you_mean"})
		if len(problems) != len(tc.problems) {
			t.Errorf("%s: problems %q, want %d", tc.name, problems, len(tc.problems))
			continue
		}
		for i, p := range problems {
			if !strings.HasPrefix(p, tc.problems[i]) {
				t.Errorf("%s: problem %q, want it to start %q", tc.name, p, tc.problems[i])
			}
		}
		if !strings.Contains(table, "| `did_you_mean` |") {
			t.Errorf("%s: no row for did_you_mean:\n%s", tc.name, table)
		}
	}
	dir2 := t.TempDir()
	path := filepath.Join(dir2, "x")
	os.WriteFile(path, []byte(`{"a":1,"a":2}`), 0o644)
	if _, err := read("x", path); err == nil {
		t.Error("a member written twice was taken")
	}
}
