package rules_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarnings loads every testdata/*.warn.yaml, which must load, and
// compares its warnings with the "# warn: line:col: path: message" lines
// at its top.
func TestWarnings(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.warn.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/*.warn.yaml fixtures")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# warn: "); ok {
					want = append(want, w)
				}
			}
			var got []string
			for _, w := range mustLoad(t, file).Warnings() {
				if !w.Warning {
					t.Errorf("not marked as a warning: %v", w)
				}
				got = append(got, strings.Replace(strings.TrimPrefix(w.String(), file+":"), "warning: ", "", 1))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("warnings differ\n--- got:\n# warn: %s\n--- want:\n# warn: %s", strings.Join(got, "\n# warn: "), strings.Join(want, "\n# warn: "))
			}
		})
	}
}

// TestShippedConfigsHaveNoWarnings keeps the examples clean.
func TestShippedConfigsHaveNoWarnings(t *testing.T) {
	files, _ := filepath.Glob("../configs/*.yaml")
	for _, file := range files {
		if ws := mustLoad(t, file).Warnings(); len(ws) > 0 {
			t.Errorf("%s: %v", file, ws)
		}
	}
}
