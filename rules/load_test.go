package rules_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestLoadBad loads every testdata/*.bad.yaml and compares its problems,
// in order, with the "# want: line:col: path: message" comments at the top
// of the file. A message that runs over several lines continues on "#| "
// lines.
func TestLoadBad(t *testing.T) {
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.bad.yaml fixtures")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".bad.yaml"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := wants(t, data)
			if len(want) == 0 {
				t.Fatalf("%s has no # want: lines", file)
			}
			cfg, err := rules.Load(file)
			checkProblems(t, file, cfg, err, want)
		})
	}
}

// wants reads the expected problems from the leading comment block.
func wants(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if w, ok := strings.CutPrefix(line, "# want: "); ok {
			out = append(out, w)
			continue
		}
		if more, ok := strings.CutPrefix(line, "#|"); ok {
			if len(out) == 0 {
				t.Fatalf("continuation line %q before any # want:", line)
			}
			out[len(out)-1] += "\n" + strings.TrimPrefix(more, " ")
		}
	}
	return out
}

// checkProblems asserts that a load failed with exactly the wanted
// problems, each written without the file name.
func checkProblems(t *testing.T, file string, cfg *rules.Config, err error, want []string) {
	t.Helper()
	if cfg != nil {
		t.Errorf("Load returned a config along with error %v", err)
	}
	var ps rules.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error = %v (%T), want rules.Problems", err, err)
	}
	got := make([]string, len(ps))
	for i, p := range ps {
		if p.Message == "" {
			t.Errorf("problem %d has no message: %+v", i, p)
		}
		if p.File != file {
			// A problem in a catalog the file names: "in catalogs/x.yaml:3:19: ...".
			rel, err := filepath.Rel(filepath.Dir(file), p.File)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("problem %d names file %q, outside %s", i, p.File, filepath.Dir(file))
			}
			got[i] = "in " + rel + strings.TrimPrefix(p.String(), p.File)
			continue
		}
		s, ok := strings.CutPrefix(p.String(), file)
		if !ok {
			t.Errorf("problem %q does not start with the file name", p.String())
		}
		got[i] = strings.TrimPrefix(strings.TrimPrefix(s, ":"), " ")
	}
	if strings.Join(got, "\n") == strings.Join(want, "\n") && len(got) == len(want) {
		return
	}
	var b strings.Builder
	for _, g := range got {
		b.WriteString("# want: " + strings.ReplaceAll(g, "\n", "\n#| ") + "\n")
	}
	t.Errorf("problems differ\n--- got (as want lines):\n%s--- want:\n# want: %s", b.String(), strings.Join(want, "\n# want: "))
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("first difference at problem %d:\n got: %q\nwant: %q", i, g, w)
			break
		}
	}
}

// TestLoadFile covers problems with the file itself rather than its
// content. Their fixtures are written here: a binary or oversized file
// does not belong in testdata.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	valid := []byte("routes:\n  get_ticket: {method: GET, path: '/tickets/{ticket_id}'}\n")
	big := append(bytes.Repeat([]byte("# padding\n"), rules.MaxFileSize/10), valid...)
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"missing", filepath.Join(dir, "absent.yaml"), []string{
			"cannot read the rule file: no such file or directory"}},
		{"directory", dir, []string{
			"cannot read the rule file: is a directory"}},
		{"latin1", write("latin1.yaml", []byte("routes:\n  get_ticket:\n    method: GET\n    path: /tickets/{ticket_id}\n    fields:\n      city: {enum: [Z\xfcrich, Zug]}\n")), []string{
			"6:22: byte 0xfc is not valid UTF-8; save the rule file as UTF-8"}},
		{"latin1 after runes", write("runes.yaml", []byte("# Zürich, Genève\n# caf\xe9\n")), []string{
			"2:6: byte 0xe9 is not valid UTF-8; save the rule file as UTF-8"}},
		{"latin1 after CRLF", write("crlf.yaml", []byte("# Z\xc3\xbcrich\r\n# caf\xe9\r\n")), []string{
			"2:6: byte 0xe9 is not valid UTF-8; save the rule file as UTF-8"}},
		{"old Mac line ends", write("cr.yaml", []byte("routes:\r  get_ticket:\r    method: get\r    path: /t\r")), []string{
			`3:13: routes.get_ticket.method: method "get" must be upper case: GET`}},
		{"syntax error at the end without a newline", write("eof.yaml", []byte("routes:\n  a: {method: GET")), []string{
			"2:1: YAML syntax: did not find expected ',' or '}'; inside {} or [], quote a value that holds braces, brackets or commas, e.g. {path: '/tickets/{ticket_id}'}"}},
		{"utf16", write("utf16.yaml", []byte("\xff\xfer\x00o\x00")), []string{
			"1:1: byte 0xff is not valid UTF-8; save the rule file as UTF-8"}},
		{"too large", write("big.yaml", big), []string{
			"the rule file is larger than 4 MiB; split large value sets out of it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := rules.Load(tt.path)
			checkProblems(t, tt.path, cfg, err, tt.want)
		})
	}

	t.Run("at the size limit", func(t *testing.T) {
		exact := append(bytes.Repeat([]byte("#"), rules.MaxFileSize-len(valid)-1), '\n')
		path := write("exact.yaml", append(exact, valid...))
		if _, err := rules.Load(path); err != nil {
			t.Fatalf("a file of exactly MaxFileSize bytes: %v", err)
		}
	})
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    rules.Problem
		want string
	}{
		{rules.Problem{File: "r.yaml", Line: 7, Column: 9, Path: "routes.a", Message: "m"}, "r.yaml:7:9: routes.a: m"},
		{rules.Problem{File: "r.yaml", Line: 7, Path: "routes.a", Message: "m"}, "r.yaml:7:1: routes.a: m"},
		{rules.Problem{File: "r.yaml", Line: 2, Column: 1, Message: "m"}, "r.yaml:2:1: m"},
		{rules.Problem{File: "r.yaml", Message: "m"}, "r.yaml: m"},
		{rules.Problem{File: "r.yaml", Path: "routes", Message: "m"}, "r.yaml: routes: m"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
	ps := rules.Problems{tests[0].p, tests[3].p}
	if got, want := ps.Error(), "r.yaml:7:9: routes.a: m\nr.yaml: m"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestParseProblemsInFileOrder checks that problems found late in the walk
// (here a duplicate route, found after the route's fields) still come in
// file order, and that a mistake reached through several aliases is
// reported once, under the path where the walk first met it.
func TestParseProblemsInFileOrder(t *testing.T) {
	_, err := rules.Parse("r.yaml", []byte(`routes:
  a:
    method: GET
    path: /a
    fields:
      x: &x {enum: [], colour: red}
  b:
    method: GET
    path: /a
    fields:
      x: *x
      y: *x
      z: {format: nope}
`))
	var ps rules.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"r.yaml:6:20: routes.a.fields.x.enum: must be a non-empty list of strings, e.g. [open, pending, closed]; found an empty list",
		`r.yaml:6:24: routes.a.fields.x: unknown key "colour"; valid keys here: in, key, required, enum, const, catalog, format, pattern, example, min, max, max_length, min_length, hidden, aliases, rule, list_tokens, lookup, description`,
		`r.yaml:7:3: routes.b: GET /a is already routed as "a"; each method and path belongs to one route, unless each route of it says with when: which requests are its, e.g. when: {json: method, equals: torrent-get}`,
		`r.yaml:13:19: routes.b.fields.z.format: unknown format "nope"; known formats: rfc3339-utc, date, uuid, email, integer, number, boolean, rfc3339`,
	}
	if got := ps.Error(); got != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestExtensionMethods: any RFC 9110 method token is a route's method, as
// WebDAV's PROPFIND and MKCOL are.
func TestExtensionMethods(t *testing.T) {
	cfg, err := rules.Parse("webdav.yaml", []byte(`routes:
  list_properties:
    method: PROPFIND
    path: /dav/{file}
    fields:
      depth: {in: header, key: Depth, enum: ["0", "1"]}
  make_folder:
    method: MKCOL
    path: /dav/{folder}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Route("list_properties").Method + " " + cfg.Route("make_folder").Method; got != "PROPFIND MKCOL" {
		t.Errorf("methods %q, want PROPFIND MKCOL", got)
	}
}
