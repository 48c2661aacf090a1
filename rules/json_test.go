package rules_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		json, path  string
		first, last string // Raw of each result; "" when absent
	}{
		{`{"error":"Invalid status"}`, "error", `"Invalid status"`, `"Invalid status"`},
		{`{"status":"open","status":"OPEN"}`, "status", `"open"`, `"OPEN"`},
		{`{"a":{"b":1,"b":2},"a":{"b":3}}`, "a.b", `1`, `3`},
		{`{"errors":[{"message":"x"},{"message":"y"}]}`, "errors.1.message", `"y"`, `"y"`},
		{`{"a\u0062":true}`, "ab", `true`, `true`},
		{`{"a":1}`, "b", ``, ``},
		{`{"a":1}`, "a.b", ``, ``},
		{`[1,2]`, "a", ``, ``},
		{`not json`, "a", ``, ``},
		// gjson's own syntax is gjson's to read: first member, as it finds it.
		{`{"items":[{"id":1},{"id":2}]}`, "items.#", `2`, `2`},
		{`{"a":1,"a":2}`, "a|@this", `1`, `1`},
		{`{"a":1}`, "", ``, ``},
		{`{"":{"":1}}`, ".", `1`, `1`},
		// A scalar has no members, whatever gjson.Get makes of its text.
		{`"0000000000[[0000"`, "0", ``, ``},
	} {
		if got := rules.Lookup(tc.json, tc.path, false).Raw; got != tc.first {
			t.Errorf("Lookup(%s, %q, first) = %s; want %s", tc.json, tc.path, got, tc.first)
		}
		if got := rules.Lookup(tc.json, tc.path, true).Raw; got != tc.last {
			t.Errorf("Lookup(%s, %q, last) = %s; want %s", tc.json, tc.path, got, tc.last)
		}
	}
}

// FuzzLookupFirst checks the member walk against gjson.Get, which also
// takes the first of repeated keys: on a valid object or array and a plain
// path the two must agree.
func FuzzLookupFirst(f *testing.F) {
	f.Add(`{"error":"Invalid status"}`, "error")
	f.Add(`{"a":{"b":[1,{"c":"d"}]},"a":2}`, "a.b.1.c")
	f.Add(`{"e\"rr":1,"x":{"":2}}`, "x.")
	f.Add(`[{"a":1},{"a":2}]`, "1.a")
	f.Fuzz(func(t *testing.T, json, path string) {
		if root := gjson.Parse(json); !rules.IsJSON([]byte(json)) || !root.IsObject() && !root.IsArray() {
			t.Skip()
		}
		got, want := rules.Lookup(json, path, false), gjson.Get(json, path)
		if got.Raw != want.Raw || got.Type != want.Type {
			t.Errorf("Lookup(%q, %q) = %s; gjson.Get = %s", json, path, got.Raw, want.Raw)
		}
	})
}
