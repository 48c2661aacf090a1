package rules

import (
	"strings"

	"github.com/tidwall/gjson"
)

// MaxJSONDepth bounds the nesting of a JSON body signpost parses. Deeper
// bodies are treated as not JSON: validating them recursively would cost
// stack and time out of proportion to any real request or error.
const MaxJSONDepth = 128

// IsJSON reports whether b is one valid JSON value nested no deeper than
// MaxJSONDepth.
func IsJSON(b []byte) bool { return shallow(b, MaxJSONDepth) && gjson.ValidBytes(b) }

// shallow reports whether the brackets of b, outside strings, never nest
// deeper than max. It is a linear pre-check that keeps the recursive
// validator away from hostile nesting.
func shallow(b []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > max {
				return false
			}
		case ']', '}':
			depth--
		}
	}
	return true
}

// Lookup returns the value at a gjson path in json. A plain dotted path is
// walked member by member; where an object repeats a key, the first is
// taken, or with last the last one, as most parsers read it. A path with
// gjson's query syntax goes to gjson.Get, which takes the first. Error
// rules and request fields share the one walk, so that examining an error
// runs as little distinct code as it can.
func Lookup(json, path string, last bool) gjson.Result {
	if !plainPath(path) {
		return gjson.Get(json, path)
	}
	cur := gjson.Parse(json)
	for key := range strings.SplitSeq(path, ".") {
		var found gjson.Result
		switch {
		case cur.IsObject():
			cur.ForEach(func(k, v gjson.Result) bool {
				if k.Str == key {
					found = v
					return last
				}
				return true
			})
		case cur.IsArray():
			found = cur.Get(key)
		}
		if !found.Exists() {
			return gjson.Result{}
		}
		cur = found
	}
	return cur
}

// plainPath reports whether a gjson path is keys and indexes alone, joined
// by single dots: none of gjson's query, modifier, escape or JSON-lines
// syntax.
func plainPath(path string) bool {
	return path != "" && path[0] != '.' && path[len(path)-1] != '.' &&
		!strings.Contains(path, "..") && !strings.ContainsAny(path, "*?#|@!\\`{[")
}
