package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/observe"
)

// recorded returns a record of a few calls to the ticket API: an error
// callers got past, and successes.
func recorded(t *testing.T) *observe.Record {
	t.Helper()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rec := observe.New(observe.Options{Now: func() time.Time { return at }})
	for i, c := range []struct {
		caller uint64
		body   string
		status int
	}{{1, `{"status":"OPEN"}`, 400}, {1, `{"status":"open"}`, 200}, {2, `{"status":"done"}`, 400}, {2, `{"status":"closed"}`, 200}} {
		x := &observe.Exchange{Caller: c.caller, Method: "PATCH", Path: "/tickets/T-" + string(rune('1'+i)),
			Body: []byte(c.body), Status: c.status, ResponseType: "application/json"}
		if c.status >= 400 {
			x.Response = []byte(`{"error":"Invalid status"}`)
		}
		rec.Add(x)
	}
	return rec
}

// TestObservedLinesRoundTrip writes a record to a log as a process does at
// exit, among other lines, and reads it back as draft --from does: the
// same document, one per process whose lines the log holds.
func TestObservedLinesRoundTrip(t *testing.T) {
	rec := recorded(t)
	var one bytes.Buffer
	if err := logObserved(&one, rec); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(one.String(), "\n"); n != len(rec.Document().Operations) || n == 0 {
		t.Fatalf("%d lines for %d operations:\n%s", n, len(rec.Document().Operations), &one)
	}
	other := strings.ReplaceAll(one.String(), processName, "replica-b/1/1")
	log := `{"time":"2026-12-01T09:00:00Z","level":"INFO","msg":"listening","listen":"127.0.0.1:8080"}` + "\n" +
		one.String() + "not JSON at all\n" + other +
		`{"time":"2026-12-01T09:00:01Z","level":"INFO","msg":"shutting down"}` + "\n"
	path := filepath.Join(t.TempDir(), "signpost.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, _, err := openDocuments(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(rec.Document())
	if len(docs) != 2 {
		t.Fatalf("%d documents, want one per process: 2", len(docs))
	}
	for i, d := range docs {
		if got, _ := json.Marshal(d); !bytes.Equal(got, want) {
			t.Errorf("document %d read back:\n%s\nwant the record's:\n%s", i, got, want)
		}
	}

	// draft reads the log as it reads the documents themselves.
	docPath := filepath.Join(t.TempDir(), "observed.json")
	if err := os.WriteFile(docPath, want, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fromLog, fromDocs := filepath.Join(dir, "log.yaml"), filepath.Join(dir, "docs.yaml")
	for _, args := range [][]string{
		{"draft", "--from", path, "-o", fromLog},
		{"draft", "--from", docPath, "--from", docPath, "-o", fromDocs},
	} {
		if code, out, errs := run(t, args...); code != exitOK {
			t.Fatalf("signpost %v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	a, _ := os.ReadFile(fromLog)
	b, _ := os.ReadFile(fromDocs)
	if !bytes.Equal(a, b) {
		t.Errorf("the draft from the log differs from the draft from its documents:\n%s\n---\n%s", a, b)
	}
}

func TestObservedLinesRefused(t *testing.T) {
	for _, tt := range []struct {
		name, log, want string
	}{
		{"no observed line", `{"time":"2026-12-01T09:00:00Z","level":"INFO","msg":"listening"}` + "\n",
			`holds no "observed operation" line: signpost writes them to its JSON log as it exits, when a route observes`},
		{"another version", `{"msg":"listening"}` + "\n" + `{"msg":"observed operation","observer":"a","version":7,"operation":{}}` + "\n",
			":2: an observed line of version 7; this signpost reads version 1"},
		{"a broken line", `{"msg":"listening"}` + "\n" + `{"msg":"observed operation","observer":` + "\n",
			":2: an observed line that is not JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "signpost.log", tt.log)
			code, _, stderr := run(t, "draft", "--from", path)
			if code != exitFindings || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitFindings, tt.want)
			}
		})
	}
}

// FuzzOpenDocuments reads arbitrary bytes as draft --from does: a log or a
// document, or an error that names the file, never a panic.
func FuzzOpenDocuments(f *testing.F) {
	f.Add([]byte(`{"msg":"observed operation","observer":"a","version":1,"operation":{"method":"GET","path":"/x"}}` + "\n"))
	f.Add([]byte("{\n  \"version\": 1,\n  \"operations\": []\n}\n"))
	f.Add([]byte(`{"msg":"listening"}` + "\n\xff\n" + `{"msg":"observed operation"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		docs, _, err := openDocuments(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Errorf("the error does not name the file: %v", err)
			}
			return
		}
		if len(docs) == 0 {
			t.Error("no document and no error")
		}
	})
}
