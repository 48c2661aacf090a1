package rules_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// FuzzParse checks that Parse never panics, and that it returns either a
// usable config or problems that each say something and point inside the
// file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	files = append(files, "../configs/tickets.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{"", "~", "[]", "routes:", "routes: {a: *b}", "a: &a [*a]", "<<: {}", "\xef\xbb\xbfroutes: {}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := rules.Parse("fuzz.yaml", data)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v; want exactly one", cfg != nil, err)
		}
		if err != nil {
			var ps rules.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty Problems", err, err)
			}
			// YAML also breaks lines at \r, NEL, LS and PS.
			lines := 1 + bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) +
				bytes.Count(data, []byte("\u0085")) + bytes.Count(data, []byte("\u2028")) + bytes.Count(data, []byte("\u2029"))
			for _, p := range ps {
				if p.Message == "" || p.File != "fuzz.yaml" {
					t.Errorf("problem %+v has no message or names the wrong file", p)
				}
				if p.Line < 0 || p.Line > lines || p.Column < 0 {
					t.Errorf("problem %+v points outside the file's %d lines", p, lines)
				}
			}
			return
		}
		if len(cfg.Routes) == 0 && cfg.Mode != rules.Observe {
			t.Fatal("a config without routes that does not observe")
		}
		for _, r := range cfg.Routes {
			if r.Name == "" || r.Method == "" || r.Path == "" {
				t.Errorf("route %+v lacks a name, method or path", r)
			}
			// Filled, the template is a path a request line carries.
			vals := map[string]string{}
			for _, v := range r.PathVariables() {
				vals[v.Name] = "1"
			}
			if f := rules.TargetFault(r.ExpandPath(vals)); f != nil {
				t.Errorf("route %s: path %q, filled, holds %v", r.Name, r.RawPath, f)
			}
			for _, fl := range r.Fields {
				if fl.Rule == "" || fl.In == "" || fl.Key == "" {
					t.Errorf("route %s: field %+v lacks a rule, location or key", r.Name, fl)
				}
			}
			for _, e := range r.Errors {
				if e.Code == "" || (e.Field == nil && e.Message == "") {
					t.Errorf("route %s: error rule %d lacks a code, or both field and message", r.Name, e.Index)
				}
				if !r.Concerns(400) && !r.Concerns(500) && e.Match.Status.String() == "" {
					t.Errorf("route %s: error rule %d matches no status", r.Name, e.Index)
				}
			}
		}
	})
}
