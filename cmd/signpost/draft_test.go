package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDraftRefusesBadInput checks that each mistake on draft's command
// line, or in the document it reads, is named with what to do instead.
func TestDraftRefusesBadInput(t *testing.T) {
	// A port nothing listens on: one just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no source", []string{"draft"}, exitUsage, "name one source, e.g. signpost draft --admin 127.0.0.1:9090"},
		{"two sources", []string{"draft", "--admin", "127.0.0.1:9090", "--from", "x.json"}, exitUsage, "name one source"},
		{"an argument", []string{"draft", "--from", "x.json", "extra"}, exitUsage, "name one source"},
		{"a bad upstream", []string{"draft", "--from", "x.json", "--upstream", "ftp://x"}, exitUsage, "--upstream"},
		{"a missing file", []string{"draft", "--from", "/nonexistent/observed.json"}, exitFindings, "no such file"},
		{"not JSON", []string{"draft", "--from", writeFile(t, "log.txt", "level=info msg=hello\n")}, exitFindings,
			"is not JSON (at byte 1"},
		{"another version", []string{"draft", "--from", writeFile(t, "v9.json", `{"version":9,"operations":[]}`)}, exitFindings,
			"has version 9; this signpost reads version 1"},
		{"not a document", []string{"draft", "--from", writeFile(t, "list.json", `[1,2]`)}, exitFindings,
			"is not a document from GET /draft"},
		{"nobody listening", []string{"draft", "--admin", closed}, exitFindings, "is signpost serving with --admin " + closed},
		{"not an admin listener", []string{"draft", "--admin", notFound.URL}, exitFindings, "answered 404 Not Found; a signpost admin listener answers 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

func TestTestsPath(t *testing.T) {
	for in, want := range map[string]string{
		"draft.yaml":            "draft.tests.yaml",
		"dir/api.yml":           "dir/api.tests.yml",
		"rules":                 "rules.tests.yaml",
		"/tmp/x.y/tickets.yaml": "/tmp/x.y/tickets.tests.yaml",
	} {
		if got := testsPath(in); got != want {
			t.Errorf("testsPath(%q) = %q, want %q", in, got, want)
		}
	}
}
