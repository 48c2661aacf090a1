package rules

import "github.com/tidwall/gjson"

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
