package observe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestFormats tries each named format on values that pass and fail it.
func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want []string
	}{
		{"2024-02-29", []string{"date"}},
		{"2023-02-29", nil},
		{"2024-13-01", nil},
		{"2024-1-01", nil},
		{"2024-05-01T10:00:00Z", []string{"rfc3339-utc", "rfc3339"}},
		{"2024-05-01T10:00:00.5Z", []string{"rfc3339-utc", "rfc3339"}},
		{"2024-05-01T10:00:00+02:00", []string{"rfc3339"}},
		{"2024-05-01 10:00:00+02:00", nil},
		{"1715000000", []string{"integer"}},
		{"2024-05-01T25:00:00Z", nil},
		{"3f2b8c1e-4d5a-4b6c-8d9e-0a1b2c3d4e5f", []string{"uuid"}},
		{"3f2b8c1e4d5a4b6c8d9e0a1b2c3d4e5f", nil},
		{"ada@example.com", []string{"email"}},
		{"ada@example", []string{"email"}}, // as format: email takes it (net/mail): a dotless domain is an address
		{"a da@example.com", nil},
		{"@example.com", nil},
		{"42", []string{"integer"}},
		{"-7", []string{"integer"}},
		{"+", nil},
		{"4.2", nil},
		{"", nil},
	} {
		var got []string
		for i, check := range formatChecks {
			if check(tc.v) {
				got = append(got, formatNames[i])
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("formats of %q = %q; want %q", tc.v, got, tc.want)
		}
	}
}

// TestValueHelpers checks the cut, the shape and the mask of values.
func TestValueHelpers(t *testing.T) {
	for _, tc := range []struct{ in, cut, shape string }{
		{"T-1041", "T-1041", "T-0"},
		{"a1b22c333", "a1b22c333", "a0b0c0"},
		{strings.Repeat("x", 70), strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("ü", 40), strings.Repeat("ü", 32), strings.Repeat("ü", 32)},
		{"a" + strings.Repeat("ü", 40), "a" + strings.Repeat("ü", 31), "a" + strings.Repeat("ü", 31)},
		{"Bearer abcdefghijkl", "Bearer [masked]", "Bearer [masked]"},
	} {
		got := maskValue(tc.in)
		if shape := string(appendShape(nil, got)); got != tc.cut || shape != tc.shape {
			t.Errorf("maskValue(%q) = %q, shape %q; want %q, %q", tc.in, got, shape, tc.cut, tc.shape)
		}
	}
}

// TestFields records the path, query and body fields of exchanges and
// checks kinds, counts, values, caps, formats and shapes.
func TestFields(t *testing.T) {
	r := New(Options{Values: 3})
	add := func(path, query, body string, status int) {
		r.Add(&Exchange{Caller: 1, Method: "patch", Path: path, RawQuery: query, Body: []byte(body), Status: status})
	}
	add("/tickets/T-1", "expand=tags&expand=more&x%20y=1", `{"status":"open","due":"2024-05-01","n":1,"tags":["a"],"meta":{"a":1},"gone":null}`, 200)
	add("/tickets/T-22", "expand=tags", `{"status":"OPEN","n":"one","due":"2024-05-02"}`, 422)
	add("/tickets/T-333", "", `{"status":"pending","due":"2024-05-03"}`, 200)
	add("/tickets/T-4", "", `{"status":"closed","due":"2024-05-04"}`, 200)
	add("/tickets/T-5", "", `{"status":"closed"}`, 200)
	add("/tickets/T-6", "", `["not","an","object"]`, 200)
	add("/tickets/T-7", "", `{"status":`, 200)

	d := r.Document()
	if len(d.Operations) != 1 {
		t.Fatalf("operations = %d; want 1", len(d.Operations))
	}
	op := d.Operations[0]
	if op.Method != "PATCH" || op.Path != "/tickets/{ticket_id}" || op.Requests != 7 || op.Successes != 6 {
		t.Errorf("operation = %s %s %d/%d; want PATCH /tickets/{ticket_id} 6/7", op.Method, op.Path, op.Successes, op.Requests)
	}
	var names []string
	for _, f := range op.Fields {
		names = append(names, f.In+":"+f.Name)
	}
	wantNames := []string{"path:ticket_id", "query:expand", "query:x y", "body:status", "body:due", "body:n", "body:tags", "body:meta"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("fields = %q; want %q", names, wantNames)
	}
	byName := func(name string) Field { return op.Fields[slices.Index(names, name)] }

	id := byName("path:ticket_id")
	if id.Kind != "string" || id.Seen != 7 || id.Succeeded != 6 || !id.Open || len(id.Good) != 3 {
		t.Errorf("ticket_id = %+v; want string, seen 7, succeeded 6, open, 3 good", id)
	}
	if want := []Value{{Value: "T-0", Count: 6}}; !slices.Equal(id.Shapes, want) {
		t.Errorf("ticket_id shapes = %v; want %v", id.Shapes, want)
	}
	if want := []Value{{Value: "tags", Count: 1, Callers: 1}}; !slices.Equal(byName("query:expand").Good, want) {
		t.Errorf("expand good = %v; want the first value only, %v", byName("query:expand").Good, want)
	}
	st := byName("body:status")
	if want := []Value{{Value: "closed", Count: 2, Callers: 1}, {Value: "open", Count: 1, Callers: 1}, {Value: "pending", Count: 1, Callers: 1}}; !slices.Equal(st.Good, want) || st.Open {
		t.Errorf("status good = %v open %v; want %v, closed", st.Good, st.Open, want)
	}
	if want := []Value{{Value: "OPEN", Count: 1}}; !slices.Equal(st.Bad, want) {
		t.Errorf("status bad = %v; want %v", st.Bad, want)
	}
	if due := byName("body:due"); due.Formats["date"] != 3 || len(due.Formats) != 1 {
		t.Errorf("due formats = %v; want date 3", due.Formats)
	}
	if n := byName("body:n"); n.Kind != "mixed" || n.Seen != 2 {
		t.Errorf("n = %+v; want mixed, seen 2", n)
	}
	for _, c := range []struct{ name, kind string }{{"body:tags", "array"}, {"body:meta", "object"}} {
		if f := byName(c.name); f.Kind != c.kind || f.Good != nil || f.Shapes != nil {
			t.Errorf("%s = %+v; want kind %s and no values", c.name, f, c.kind)
		}
	}
	// ticket_id: 6 good values, 3 kept; no other field outgrew its bound.
	if d.Dropped.Values != 3 {
		t.Errorf("dropped values = %d; want 3", d.Dropped.Values)
	}
}

// TestFieldBound keeps at most maxFields fields per operation, counting
// the others' values as dropped.
func TestFieldBound(t *testing.T) {
	r := New(Options{})
	var b strings.Builder
	b.WriteByte('{')
	for i := range maxFields + 6 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":%d`, i, i)
	}
	b.WriteByte('}')
	r.Add(&Exchange{Method: "POST", Path: "/x", Body: []byte(b.String()), Status: 200})
	d := r.Document()
	if n := len(d.Operations[0].Fields); n != maxFields || d.Dropped.Values != 6 {
		t.Errorf("fields = %d, dropped values %d; want %d, 6", n, d.Dropped.Values, maxFields)
	}
}

// TestCredentials keeps no value of a field named like a credential, and
// masks the secrets a sample carries.
func TestCredentials(t *testing.T) {
	r := New(Options{})
	r.Add(&Exchange{
		Caller: 1, Method: "POST", Path: "/login", RawQuery: "api_key=k-SECRET1&q=1",
		Body:   []byte(`{"user":"ada","password":"hunter2-SECRET2","apiKey":"SECRET3","note":"Bearer SECRET4abcdef"}`),
		Status: 401, ResponseType: "application/json",
		Response: []byte(`{"error":"bad credentials","echo":"Authorization: Bearer SECRET5abcdef"}`),
	})
	r.Add(&Exchange{Caller: 1, Method: "POST", Path: "/login", RawQuery: "api_key=k-SECRET6",
		Body: []byte(`{"user":"ada","password":"SECRET7"}`), Status: 200})
	d := r.Document()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "SECRET") {
		t.Errorf("document holds a secret: %s", raw)
	}
	creds := map[string]bool{}
	for _, f := range d.Operations[0].Fields {
		if f.Credential {
			creds[f.In+":"+f.Name] = true
			if f.Good != nil || f.Bad != nil || f.Shapes != nil || f.Formats != nil {
				t.Errorf("credential %s kept values: %+v", f.Name, f)
			}
		}
	}
	for _, want := range []string{"query:api_key", "body:password", "body:apiKey"} {
		if !creds[want] {
			t.Errorf("field %s not marked a credential; credentials %v", want, creds)
		}
	}
	for _, e := range d.Operations[0].Errors {
		for _, b := range e.Blamed {
			if creds[b.In+":"+b.Field] {
				t.Errorf("credential %s blamed", b.Field)
			}
		}
	}
}
