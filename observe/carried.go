package observe

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Carries reports whether a success's body carries an error, as RPC APIs
// answer one in a 200: a JSON object with "ok" or "success" false, a
// non-empty "error" or "errors", or, outside JSON-RPC (whose "result" is
// data), a "result" that is prose rather than a success word ("method name
// not recognized"); or an XML-RPC fault.
func Carries(body []byte) bool {
	s := strings.TrimSpace(view(body))
	switch {
	case s == "":
		return false
	case s[0] == '<':
		return strings.Contains(s, "<methodResponse") && strings.Contains(s, "<fault>")
	case s[0] != '{' || !gjson.Valid(s):
		return false
	}
	doc := gjson.Parse(s)
	for _, k := range []string{"ok", "success"} {
		if doc.Get(k).Type == gjson.False {
			return true
		}
	}
	switch e := doc.Get("error"); e.Type {
	case gjson.String:
		if strings.TrimSpace(e.Str) != "" {
			return true
		}
	case gjson.JSON, gjson.Number, gjson.True:
		if e.Raw != "{}" && e.Raw != "[]" {
			return true
		}
	}
	if errs := doc.Get("errors"); errs.IsArray() && len(errs.Array()) > 0 {
		return true
	}
	if doc.Get("jsonrpc").Exists() {
		return false
	}
	r := doc.Get("result")
	return r.Type == gjson.String && strings.Contains(strings.TrimSpace(r.Str), " ")
}
