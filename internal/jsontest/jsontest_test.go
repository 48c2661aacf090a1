package jsontest_test

import (
	"testing"

	"github.com/signpost-proxy/signpost/internal/jsontest"
)

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"a":1}`, " {\n  \"a\": 1.0\n} ", true},
		{`"x"`, `"x"`, true},
		{`null`, `null`, true},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`{"a":1}`, `{"a":1}{}`, false},
		{``, ``, false},
		{`not json`, `not json`, false},
	} {
		if got := jsontest.Same(tc.a, tc.b); got != tc.same {
			t.Errorf("Same(%q, %q) = %t, want %t", tc.a, tc.b, got, tc.same)
		}
	}
}
