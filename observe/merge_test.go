package observe

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the documents in testdata from the scripted traffic")

// step is one exchange of the scripted traffic, at a time from its start.
type step struct {
	at time.Duration
	x  Exchange
}

// ticketTraffic is the demo's four agents on the legacy ticket API, each
// making a mistake and then the call that works, twice over: the same
// shape of traffic as adopting.md observes.
func ticketTraffic() []step {
	var steps []step
	at := time.Duration(0)
	add := func(caller uint64, method, path, query, body string, status int, resType, res string) {
		at += 7 * time.Second
		x := Exchange{Caller: caller, Method: method, Path: path, RawQuery: query, Status: status, ResponseType: resType}
		if body != "" {
			x.RequestType, x.Body = "application/json", []byte(body)
		}
		if res != "" {
			x.Response = []byte(res)
		}
		steps = append(steps, step{at, x})
	}
	const js, html = "application/json", "text/html; charset=utf-8"
	for round := range 2 {
		for agent := uint64(1); agent <= 4; agent++ {
			id := fmt.Sprintf("T-88%d%d", 4+round, agent)
			priority := []string{"urgent", "p1", "high", "urgent"}[agent-1]
			add(agent, "POST", "/tickets", "", `{"title":"Printer on fire","priority":"`+priority+`","due_at":"2026-05-0`+fmt.Sprint(agent)+`"}`,
				400, js, `{"error":"Invalid priority"}`)
			add(agent, "POST", "/tickets", "", `{"title":"Printer on fire","priority":"p1","due_at":"2026-05-0`+fmt.Sprint(agent)+`"}`,
				201, js, "")
			status := []string{"active", "Opened", "active", "active"}[agent-1]
			add(agent, "PATCH", "/tickets/"+id, "", `{"status":"`+status+`"}`, 400, js, `{"error":"Invalid status"}`)
			add(agent, "PATCH", "/tickets/"+id, "", `{"status":"open"}`, 200, js, "")
			add(agent, "GET", "/tickets/"+strings.TrimPrefix(id, "T-"), "", "", 404, js, `{"error":"No such ticket"}`)
			add(agent, "GET", "/tickets/"+id, "", "", 200, js, "")
			add(agent, "PATCH", "/tickets/"+id, "", `{"status":"closed"}`, 409, js, `{"error":"Cannot close ticket"}`)
			add(agent, "POST", "/tickets/"+id+"/assign", "", `{"agent":"a`+fmt.Sprint(agent)+`"}`, 200, js, "")
			add(agent, "PATCH", "/tickets/"+id, "", `{"status":"closed"}`, 200, js, "")
			if agent%2 == 0 || round == 1 {
				add(agent, "GET", "/customers", "query=O%27Brien&page=1", "", 500, html,
					"<html><head><title>500 Internal Server Error</title></head><body>ORA-01756: quoted string not properly terminated</body></html>")
				add(agent, "GET", "/customers", "query=Acme&page=1", "", 200, js, "")
			}
		}
	}
	return steps
}

// trafficStart is when the scripted traffic begins.
var trafficStart = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

// observeTraffic returns the document of a record started at start that
// saw the steps keep selects.
func observeTraffic(start time.Time, steps []step, keep func(x *Exchange) bool) Document {
	c := &clock{t: start}
	r := New(Options{Now: c.now})
	for _, s := range steps {
		if keep(&s.x) {
			c.t = trafficStart.Add(s.at)
			r.Add(&s.x)
		}
	}
	return r.Document()
}

// replicas returns the documents of two replicas behind a load balancer
// that keeps each caller on one replica: agents 1 and 3 on the first,
// started at 08:55, 2 and 4 on the second, started at 08:58; and the
// document of one record that saw all the traffic.
func replicas() (a, b, all Document) {
	steps := ticketTraffic()
	a = observeTraffic(trafficStart.Add(-5*time.Minute), steps, func(x *Exchange) bool { return x.Caller%2 == 1 })
	b = observeTraffic(trafficStart.Add(-2*time.Minute), steps, func(x *Exchange) bool { return x.Caller%2 == 0 })
	all = observeTraffic(trafficStart.Add(-5*time.Minute), steps, func(*Exchange) bool { return true })
	return a, b, all
}

func mustJSON(t *testing.T, d Document) []byte {
	t.Helper()
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func readDoc(t *testing.T, name string) Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test computes; if the change is meant, run go test -run %s -update\ngot:\n%s", path, t.Name(), got)
	}
}

// TestReplicaDocuments keeps the replicas' documents in testdata those of
// the scripted traffic.
func TestReplicaDocuments(t *testing.T) {
	a, b, _ := replicas()
	golden(t, "tickets.replica-a.json", mustJSON(t, a))
	golden(t, "tickets.replica-b.json", mustJSON(t, b))
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tickets.merged.json", mustJSON(t, m))
}

// TestMergeIsOneRecord checks that the replicas' documents merge into
// the document of one record that saw all the traffic, when no bound is
// reached and each caller stays on one replica.
func TestMergeIsOneRecord(t *testing.T) {
	a, b, all := replicas()
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, m), mustJSON(t, all); !bytes.Equal(got, want) {
		t.Errorf("merged document differs from one record's:\n%s\nwant:\n%s", got, want)
	}
}

// TestMergeOrderFree merges every order of three documents and wants the
// same bytes each time.
func TestMergeOrderFree(t *testing.T) {
	a, b := readDoc(t, "tickets.replica-a.json"), readDoc(t, "tickets.replica-b.json")
	// A third replica that began at the same time as the first, with a
	// declared route, a value past what the others sent and an error of
	// its own: ties between documents must break the same way too.
	c := readDoc(t, "tickets.replica-b.json")
	c.Since = a.Since
	c.Operations[0].Route = "list_customers"
	c.Operations[0].Fields[0].Good = append(c.Operations[0].Fields[0].Good, Value{Value: "Zed", Count: 1})
	c.Operations[0].Errors = append(c.Operations[0].Errors, Error{Status: 503, Text: "busy", Count: 1, Sample: Sample{Method: "GET", Path: "/customers"}})
	docs := []Document{a, b, c}
	var first []byte
	for _, p := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		m, err := Merge(docs[p[0]], docs[p[1]], docs[p[2]])
		if err != nil {
			t.Fatal(err)
		}
		got := mustJSON(t, m)
		if first == nil {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("order %v merges to other bytes:\n%s\nwant:\n%s", p, got, first)
		}
	}
}

// TestMergeOne wants a document merged alone back as it was.
func TestMergeOne(t *testing.T) {
	for _, name := range []string{"tickets.replica-a.json", "tickets.replica-b.json", "tickets.merged.json"} {
		t.Run(name, func(t *testing.T) {
			d := readDoc(t, name)
			m, err := Merge(d)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := mustJSON(t, m), mustJSON(t, d); !bytes.Equal(got, want) {
				t.Errorf("Merge of one document changed it:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestMergeReplicas checks the sums of the two replicas' documents, field
// by field.
func TestMergeReplicas(t *testing.T) {
	a, b := readDoc(t, "tickets.replica-a.json"), readDoc(t, "tickets.replica-b.json")
	m, err := Merge(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Since.Equal(a.Since) || m.RecoveryWindow != "10m0s" || m.Version != DocumentVersion {
		t.Errorf("since %v, window %q, version %d; want the first replica's start %v, 10m0s, %d", m.Since, m.RecoveryWindow, m.Version, a.Since, DocumentVersion)
	}
	var paths []string
	for _, op := range m.Operations {
		paths = append(paths, op.Method+" "+op.Path)
	}
	want := []string{"GET /customers", "GET /tickets/{ticket_id}", "PATCH /tickets/{ticket_id}", "POST /tickets", "POST /tickets/{ticket_id}/assign"}
	if !slices.Equal(paths, want) {
		t.Fatalf("operations %q; want %q", paths, want)
	}

	tests := []struct {
		name          string
		method, path  string
		check         func(t *testing.T, op, oa, ob Operation)
		requests, suc int64
	}{
		{"requests summed", "PATCH", "/tickets/{ticket_id}", func(t *testing.T, op, oa, ob Operation) {
			if op.Requests != oa.Requests+ob.Requests || op.Successes != oa.Successes+ob.Successes {
				t.Errorf("requests %d/%d; want %d/%d", op.Successes, op.Requests, oa.Successes+ob.Successes, oa.Requests+ob.Requests)
			}
		}, 32, 16},
		{"fields in the order first seen, counts summed", "POST", "/tickets", func(t *testing.T, op, oa, ob Operation) {
			var names []string
			for _, f := range op.Fields {
				names = append(names, f.In+" "+f.Name)
			}
			if !slices.Equal(names, []string{"body title", "body priority", "body due_at"}) {
				t.Errorf("fields %q", names)
			}
			p := op.Fields[1]
			if p.Seen != 16 || p.Succeeded != 8 || !slices.Equal(p.Good, []Value{{Value: "p1", Count: 8, Callers: 3}}) ||
				!slices.Equal(p.Bad, []Value{{Value: "urgent", Count: 4}, {Value: "high", Count: 2}, {Value: "p1", Count: 2}}) {
				t.Errorf("priority %+v; want seen 16, 8 succeeded, p1 8 good, urgent 4 high 2 p1 2 bad", p)
			}
			if d := op.Fields[2]; d.Formats["date"] != 8 || len(d.Good) != 4 || d.Good[0] != (Value{Value: "2026-05-01", Count: 2, Callers: 1}) {
				t.Errorf("due_at %+v; want 8 dates, 4 values, 2026-05-01 first", d)
			}
		}, 16, 8},
		{"errors summed, first and last seen from either, sample the earliest", "PATCH", "/tickets/{ticket_id}", func(t *testing.T, op, oa, ob Operation) {
			e := op.Errors[0]
			ea, eb := oa.Errors[0], ob.Errors[0]
			if e.Text != "Invalid status" || e.Count != ea.Count+eb.Count || e.Recovered != ea.Recovered+eb.Recovered {
				t.Errorf("first error %+v; want Invalid status, counts summed", e)
			}
			if !e.FirstSeen.Equal(ea.FirstSeen) || !e.LastSeen.Equal(eb.LastSeen) || e.Sample != ea.Sample {
				t.Errorf("first seen %v, last %v, sample %+v; want the first replica's first, the second's last, the first's sample", e.FirstSeen, e.LastSeen, e.Sample)
			}
			if len(e.Blamed) != 1 || e.Blamed[0].Count != 8 ||
				!slices.Equal(e.Blamed[0].Changes, []Change{{"active", "open", 6}, {"Opened", "open", 2}}) {
				t.Errorf("blamed %+v; want status: active → open (6), Opened → open (2)", e.Blamed)
			}
			if c := op.Errors[1]; c.Text != "Cannot close ticket" || !slices.Equal(c.Before, []Value{{Value: "POST /tickets/{ticket_id}/assign", Count: 8}}) {
				t.Errorf("second error %+v; want Cannot close ticket, after POST /tickets/{ticket_id}/assign 8 times", c)
			}
		}, 32, 16},
		{"an error met first by the replica begun later", "GET", "/customers", func(t *testing.T, op, oa, ob Operation) {
			if len(op.Errors) != 1 || op.Errors[0].Count != 6 {
				t.Fatalf("errors %+v; want one 500, 6 times", op.Errors)
			}
			if e, eb := op.Errors[0], ob.Errors[0]; !e.FirstSeen.Equal(eb.FirstSeen) || e.Sample != eb.Sample || !e.FirstSeen.Before(oa.Errors[0].FirstSeen) {
				t.Errorf("first seen %v, sample %+v; want the second replica's, which met it first", e.FirstSeen, e.Sample)
			}
		}, 12, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := findOp(t, m, tt.method, tt.path)
			if op.Requests != tt.requests || op.Successes != tt.suc {
				t.Errorf("%s %s: %d of %d requests succeeded; want %d of %d", tt.method, tt.path, op.Successes, op.Requests, tt.suc, tt.requests)
			}
			tt.check(t, op, findOp(t, a, tt.method, tt.path), findOp(t, b, tt.method, tt.path))
		})
	}
}

// doc returns a document of version 1 begun at 08:00 plus minutes, with
// the given operations.
func doc(minutes int, ops ...Operation) Document {
	return Document{
		Version:        DocumentVersion,
		Since:          time.Date(2026, 5, 4, 8, minutes, 0, 0, time.UTC),
		RecoveryWindow: "10m0s",
		Operations:     ops,
	}
}

// values returns n values named prefix0, prefix1..., the first counted n
// times, the next n-1 and so on.
func values(prefix string, n int) []Value {
	vs := make([]Value, n)
	for i := range vs {
		vs[i] = Value{Value: fmt.Sprintf("%s%02d", prefix, i), Count: int64(n - i)}
	}
	return vs
}

// TestMergeBounds merges documents whose sum passes a bound of the record
// and wants it bounded as the record bounds it, with what it left out
// counted in Dropped.
func TestMergeBounds(t *testing.T) {
	at := func(minutes int) time.Time { return time.Date(2026, 5, 4, 10, minutes, 0, 0, time.UTC) }
	errs := func(from, n int) []Error {
		var es []Error
		for i := range n {
			es = append(es, Error{Status: 400, JSON: "error", Text: fmt.Sprintf("error %02d", from+i), Count: 1,
				FirstSeen: at(from + i), LastSeen: at(from + i)})
		}
		return es
	}
	fields := func(from, n int) []Field {
		var fs []Field
		for i := range n {
			fs = append(fs, Field{Name: fmt.Sprintf("f%02d", from+i), In: "query", Kind: "string", Seen: 2, Succeeded: 1})
		}
		return fs
	}
	ops := func(from, n int) []Operation {
		var os []Operation
		for i := range n {
			os = append(os, Operation{Method: "GET", Path: fmt.Sprintf("/things/%03d", from+i), Requests: int64(1 + (from+i)%7),
				Fields: []Field{}, Errors: []Error{}})
		}
		return os
	}
	tests := []struct {
		name    string
		docs    []Document
		dropped Dropped
		check   func(t *testing.T, d Document)
	}{
		{
			name: "good values past 32: the least frequent left out, open",
			docs: []Document{
				doc(0, Operation{Method: "GET", Path: "/t", Fields: []Field{{Name: "q", In: "query", Kind: "string", Good: values("a", 20)}}}),
				doc(1, Operation{Method: "GET", Path: "/t", Fields: []Field{{Name: "q", In: "query", Kind: "string", Good: values("b", 20)}}}),
			},
			// 40 values: the 32 most frequent are a00..a15 and b00..b15; the 8
			// cut, a16..a19 and b16..b19, were seen 4, 3, 2 and 1 times each.
			dropped: Dropped{Values: 20},
			check: func(t *testing.T, d Document) {
				f := d.Operations[0].Fields[0]
				if len(f.Good) != 32 || !f.Open || f.Good[0] != (Value{Value: "a00", Count: 20}) || f.Good[1] != (Value{Value: "b00", Count: 20}) || f.Good[31] != (Value{Value: "b15", Count: 5}) {
					t.Errorf("good %v (open %v); want 32, a00 and b00 first, b15 last, open", f.Good, f.Open)
				}
			},
		},
		{
			name: "bad values and shapes past 32: counted, not open",
			docs: []Document{
				doc(0, Operation{Method: "GET", Path: "/t", Fields: []Field{{Name: "q", In: "query", Kind: "string", Bad: values("a", 20), Shapes: values("s", 30)}}}),
				doc(1, Operation{Method: "GET", Path: "/t", Fields: []Field{{Name: "q", In: "query", Kind: "string", Bad: values("b", 20), Shapes: values("s", 30)}}}),
			},
			// bad: as above, 20; shapes: 30 distinct, all kept.
			dropped: Dropped{Values: 20},
			check: func(t *testing.T, d Document) {
				f := d.Operations[0].Fields[0]
				if len(f.Bad) != 32 || f.Open || len(f.Shapes) != 30 || f.Shapes[0] != (Value{Value: "s00", Count: 60}) {
					t.Errorf("bad %d, shapes %d (first %v), open %v; want 32, 30 with s00 60, not open", len(f.Bad), len(f.Shapes), f.Shapes[0], f.Open)
				}
			},
		},
		{
			name: "errors past 32: the least recently seen forgotten",
			docs: []Document{
				doc(0, Operation{Method: "GET", Path: "/t", Errors: errs(0, 20)}),
				doc(1, Operation{Method: "GET", Path: "/t", Errors: errs(20, 20)}),
			},
			dropped: Dropped{Errors: 8},
			check: func(t *testing.T, d Document) {
				es := d.Operations[0].Errors
				if len(es) != 32 || es[0].Text != "error 08" || es[31].Text != "error 39" {
					t.Errorf("%d errors, from %q to %q; want 32, error 08 to error 39", len(es), es[0].Text, es[len(es)-1].Text)
				}
			},
		},
		{
			name: "fields past 64: those first seen kept, the others' values counted",
			docs: []Document{
				doc(0, Operation{Method: "GET", Path: "/t", Fields: fields(0, 40)}),
				doc(1, Operation{Method: "GET", Path: "/t", Fields: fields(30, 40)}),
			},
			// 70 fields; f64..f69 left out, seen twice each.
			dropped: Dropped{Values: 12},
			check: func(t *testing.T, d Document) {
				fs := d.Operations[0].Fields
				if len(fs) != 64 || fs[0].Name != "f00" || fs[63].Name != "f63" || fs[35].Seen != 4 || fs[29].Seen != 2 {
					t.Errorf("%d fields; want 64, f00 to f63, those of both seen 4 times", len(fs))
				}
			},
		},
		{
			name: "operations past 256: the least requested forgotten",
			docs: []Document{doc(0, ops(0, 200)...), doc(1, ops(100, 200)...)},
			// 300 operations, 44 left out.
			dropped: Dropped{Operations: 44},
			check: func(t *testing.T, d Document) {
				if len(d.Operations) != 256 {
					t.Fatalf("%d operations; want 256", len(d.Operations))
				}
				for _, op := range d.Operations {
					if op.Requests == 1 {
						t.Errorf("%s kept with 1 request while others of 2 were left out", op.Path)
					}
				}
				if !slices.IsSortedFunc(d.Operations, compareOperations) {
					t.Error("operations not in order")
				}
			},
		},
		{
			name: "blamed fields, changes and prerequisites past 16",
			docs: []Document{
				doc(0, Operation{Method: "GET", Path: "/t", Errors: []Error{{Status: 400, Text: "x", Count: 1,
					Blamed: blames("a", 10), Before: values("GET /a", 10)}}}),
				doc(1, Operation{Method: "GET", Path: "/t", Errors: []Error{{Status: 400, Text: "x", Count: 1,
					Blamed: blames("b", 10), Before: values("GET /b", 10)}}}),
			},
			check: func(t *testing.T, d Document) {
				e := d.Operations[0].Errors[0]
				if len(e.Blamed) != 16 || len(e.Before) != 16 || e.Blamed[0].Field != "a00" || len(e.Blamed[0].Changes) != 16 {
					t.Errorf("%d blamed (first %+v), %d before; want 16, a00 with 16 changes, 16", len(e.Blamed), e.Blamed[0], len(e.Before))
				}
			},
		},
		{
			name: "dropped summed",
			docs: []Document{
				func() Document { d := doc(0); d.Dropped = Dropped{1, 2, 3, 4}; return d }(),
				func() Document { d := doc(1); d.Dropped = Dropped{10, 20, 30, 40}; return d }(),
			},
			dropped: Dropped{11, 22, 33, 44},
			check:   func(t *testing.T, d Document) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Merge(tt.docs...)
			if err != nil {
				t.Fatal(err)
			}
			if d.Dropped != tt.dropped {
				t.Errorf("dropped %+v; want %+v", d.Dropped, tt.dropped)
			}
			tt.check(t, d)
		})
	}
}

// blames returns n blamed fields named prefix00..., each with 20 changes.
func blames(prefix string, n int) []Blame {
	bs := make([]Blame, n)
	for i := range bs {
		bs[i] = Blame{Field: fmt.Sprintf("%s%02d", prefix, i), In: "body", Count: int64(n - i)}
		for j := range 20 {
			bs[i].Changes = append(bs[i].Changes, Change{From: fmt.Sprint(j), To: "ok", Count: 1})
		}
	}
	return bs
}

// TestMergeFields checks how a field's kind, credential and route name
// are reconciled.
func TestMergeFields(t *testing.T) {
	op := func(route string, f Field, e ...Error) Operation {
		return Operation{Route: route, Method: "POST", Path: "/login", Fields: []Field{f}, Errors: e}
	}
	blamed := Error{Status: 401, Text: "bad", Count: 1, Blamed: []Blame{{Field: "pin", In: "body", Count: 1, Changes: []Change{{"1234", "4321", 1}}}}}
	tests := []struct {
		name  string
		docs  []Document
		check func(t *testing.T, op Operation)
	}{
		{"kinds that disagree are mixed", []Document{
			doc(0, op("", Field{Name: "n", In: "body", Kind: "number", Good: []Value{{Value: "1", Count: 1}}})),
			doc(1, op("", Field{Name: "n", In: "body", Kind: "string", Good: []Value{{Value: "one", Count: 1}}})),
		}, func(t *testing.T, op Operation) {
			if f := op.Fields[0]; f.Kind != "mixed" || len(f.Good) != 2 {
				t.Errorf("field %+v; want mixed, with both values", f)
			}
		}},
		{"a credential in either keeps no value", []Document{
			doc(0, op("", Field{Name: "pin", In: "body", Kind: "string", Credential: true}, blamed)),
			doc(1, op("", Field{Name: "pin", In: "body", Kind: "string", Good: []Value{{Value: "1234", Count: 1}}, Bad: []Value{{Value: "0000", Count: 1}},
				Shapes: []Value{{Value: "0", Count: 1}}, Open: true, Formats: map[string]int64{"integer": 1}}, blamed)),
		}, func(t *testing.T, op Operation) {
			f := op.Fields[0]
			if !f.Credential || f.Good != nil || f.Bad != nil || f.Shapes != nil || f.Formats != nil || f.Open {
				t.Errorf("field %+v; want a credential with no values", f)
			}
			if b := op.Errors[0].Blamed; b != nil {
				t.Errorf("blamed %+v; want no change of a credential", b)
			}
		}},
		{"a route name from any document", []Document{
			doc(0, op("", Field{Name: "user", In: "body", Kind: "string"})),
			doc(1, op("login", Field{Name: "user", In: "body", Kind: "string"})),
		}, func(t *testing.T, op Operation) {
			if op.Route != "login" {
				t.Errorf("route %q; want login", op.Route)
			}
		}},
		{"two route names: the first replica's", []Document{
			doc(5, op("sign_in", Field{Name: "user", In: "body", Kind: "string"})),
			doc(0, op("login", Field{Name: "user", In: "body", Kind: "string"})),
		}, func(t *testing.T, op Operation) {
			if op.Route != "login" {
				t.Errorf("route %q; want login, from the document begun first", op.Route)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, docs := range [][]Document{tt.docs, {tt.docs[1], tt.docs[0]}} {
				d, err := Merge(docs...)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.Operations) != 1 {
					t.Fatalf("%d operations; want 1", len(d.Operations))
				}
				tt.check(t, d.Operations[0])
			}
		})
	}
}

// TestMergeRefuses checks that documents that cannot merge are named.
func TestMergeRefuses(t *testing.T) {
	short := doc(1)
	short.RecoveryWindow = "5m0s"
	old := doc(2)
	old.Version = 0
	tests := []struct {
		name      string
		docs      []Document
		doc, with int
		want      string
	}{
		{"another recovery window", []Document{doc(0), short}, 1, 0,
			"documents observed with different recovery windows: 10m0s and 5m0s; draft them apart or align learn.recovery_window"},
		{"another version", []Document{doc(0), doc(1), old}, 2, -1,
			"document 3 has version 0; documents of version 1 merge, from GET /draft of the same release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.docs...)
			var me *MergeError
			if !errors.As(err, &me) || me.Doc != tt.doc || me.With != tt.with || err.Error() != tt.want {
				t.Errorf("error %v (%+v); want %q of document %d with %d", err, me, tt.want, tt.doc, tt.with)
			}
		})
	}
	if _, err := Merge(); err == nil || err.Error() != "no documents to merge" {
		t.Errorf("Merge() = %v; want no documents to merge", err)
	}
}
