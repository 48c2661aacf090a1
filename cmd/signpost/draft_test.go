package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
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
		{"no source", []string{"draft"}, exitUsage, "name a source, e.g. signpost draft --admin 127.0.0.1:9090"},
		{"an argument", []string{"draft", "--from", "x.json", "extra"}, exitUsage,
			`unexpected argument "extra"; name each document with its own --from, e.g. --from a.json --from b.json`},
		{"standard input twice", []string{"draft", "--from", "-", "--from", "x.json", "--from", "-"}, exitUsage,
			"--from - given twice; standard input holds one document: save the others to files"},
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

// replicaDocs are the documents two replicas observed of the demo's ticket
// API, each its share of the traffic.
var replicaDocs = []string{
	"../../observe/testdata/tickets.replica-a.json",
	"../../observe/testdata/tickets.replica-b.json",
}

// readReplica returns a replica's document as its JSON and decoded.
func readReplica(t *testing.T, path string) ([]byte, observe.Document) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d observe.Document
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return data, d
}

// TestDraftMergesReplicas drafts from the documents of two replicas, one
// read from its admin listener and the other from a file, or both from
// files, and wants one rule file of their summed counts that passes
// rules.Load.
func TestDraftMergesReplicas(t *testing.T) {
	dataA, a := readReplica(t, replicaDocs[0])
	_, b := readReplica(t, replicaDocs[1])
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/draft" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(dataA)
	}))
	defer admin.Close()

	var requests, errs int64
	for _, d := range []observe.Document{a, b} {
		for _, op := range d.Operations {
			requests += op.Requests
			for _, e := range op.Errors {
				errs += e.Count
			}
		}
	}
	summary := fmt.Sprintf("# since %s: %d requests to 5 operations, and %d upstream errors no rule explained.",
		a.Since.UTC().Format("2006-01-02T15:04:05Z"), requests, errs)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"two files", []string{"--from", replicaDocs[0], "--from", replicaDocs[1]}},
		{"an admin listener and a file", []string{"--from", replicaDocs[1], "--admin", admin.URL}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tickets.yaml")
			code, stdout, stderr := run(t, append(append([]string{"draft"}, tc.args...), "-o", out)...)
			if code != exitOK || !strings.Contains(stdout, "(5 routes from 5 operations observed, merged from 2 documents)") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 5 routes merged from 2 documents", code, stdout, stderr)
			}
			written, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				summary,
				"# GET /customers: 12 requests, 6 successful; 1 kind of error unexplained",
				"# 400 error = Invalid status: 8 times (25% of 32 requests)",
				"# 8 of 8 recoveries changed status: active → open (6), Opened → open (2)",
			} {
				if !strings.Contains(string(written), want) {
					t.Errorf("%s lacks %q:\n%s", out, want, written)
				}
			}
			if _, err := rules.Load(out); err != nil {
				t.Errorf("the merged draft does not load: %v", err)
			}
		})
	}
}

// TestDraftRefusesMerge checks that documents that cannot be merged are
// named, with what to do.
func TestDraftRefusesMerge(t *testing.T) {
	dataA, _ := readReplica(t, replicaDocs[0])
	edit := func(name, from, to string) string {
		t.Helper()
		s := strings.Replace(string(dataA), from, to, 1)
		if s == string(dataA) {
			t.Fatalf("no %q in %s", from, replicaDocs[0])
		}
		return writeFile(t, name, s)
	}
	v2 := edit("v2.json", `"version": 1`, `"version": 2`)
	short := edit("short-window.json", `"recovery_window": "10m0s"`, `"recovery_window": "5m0s"`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"another version", []string{"--from", replicaDocs[0], "--from", v2},
			v2 + " has version 2; this signpost reads version 1, from GET /draft of the same release"},
		{"another recovery window", []string{"--from", replicaDocs[0], "--from", short},
			replicaDocs[0] + " and " + short + ": documents observed with different recovery windows: 10m0s and 5m0s; draft them apart or align learn.recovery_window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"draft"}, tc.args...)...)
			if code != exitFindings || stdout != "" || stderr != "signpost draft: "+tc.want+"\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, exitFindings, tc.want)
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

// TestDraftOntoABase: --base starts from a hand-written rule file and adds
// what the traffic taught; the result keeps the base's declarations,
// loads, and its drafted tests pass.
func TestDraftOntoABase(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tickets.yaml")
	code, stdout, stderr := run(t, "draft", "--from", "../../draft/testdata/tickets.json", "--base", "../../draft/testdata/base.yaml", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# signpost draft added to this file what traffic observe mode saw taught: 3 routes,",
		"  edit_ticket:\n    method: PATCH\n    path: /tickets/{id}\n",
		"message: the status is one of open, pending, closed",
		"next_call: assign(id)",
	} {
		if !strings.Contains(string(written), want) {
			t.Errorf("%s lacks %q:\n%s", out, want, written)
		}
	}
	if code, stdout, stderr := run(t, "test", testsPath(out)); code != exitOK {
		t.Errorf("the drafted tests do not pass on the merged file: exit %d\n%s%s", code, stdout, stderr)
	}
	broken := filepath.Join(dir, "broken.yaml")
	os.WriteFile(broken, []byte("routes:\n  r: {method: GET}\n"), 0o644)
	if code, _, stderr := run(t, "draft", "--from", "../../draft/testdata/tickets.json", "--base", broken, "-o", out); code != exitFindings || !strings.Contains(stderr, "does not pass check") {
		t.Errorf("a base that does not load: exit %d, stderr %q; want it named", code, stderr)
	}
}
