package rewrite

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
)

// An xmlStep is one step of an XML field's path: an element's local name,
// and which of its parent's children of that name, from 1.
type xmlStep struct {
	name  string
	index int
}

// parseXMLPath splits methodCall/params/param[2]/value into its steps; the
// rules loader has checked the syntax.
func parseXMLPath(path string) []xmlStep {
	parts := strings.Split(path, "/")
	steps := make([]xmlStep, len(parts))
	for i, p := range parts {
		steps[i] = xmlStep{name: p, index: 1}
		if open := strings.IndexByte(p, '['); open > 0 && strings.HasSuffix(p, "]") {
			if n, err := strconv.Atoi(p[open+1 : len(p)-1]); err == nil && n > 0 {
				steps[i] = xmlStep{name: p[:open], index: n}
			}
		}
	}
	return steps
}

// xmlValue returns the text of the element at path in an XML body, its
// character data trimmed, and whether the element is there. Elements are
// named by their local names, whatever their namespace, as WebDAV's and
// XML-RPC's documents are read.
func xmlValue(body []byte, path string) (string, bool) {
	steps := parseXMLPath(path)
	d := xml.NewDecoder(bytes.NewReader(body))
	// matched is how many steps the open elements match, from the root;
	// counts[i] counts the children of the element matching step i-1.
	matched, depth := 0, 0
	counts := make([]map[string]int, len(steps))
	counts[0] = map[string]int{}
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if matched == depth && depth < len(steps) {
				counts[depth][t.Name.Local]++
				if s := steps[depth]; t.Name.Local == s.name && counts[depth][s.name] == s.index {
					matched++
					if matched < len(steps) {
						counts[matched] = map[string]int{}
					}
				}
			}
			depth++
		case xml.EndElement:
			depth--
			if matched == len(steps) && depth == len(steps)-1 {
				return strings.TrimSpace(text.String()), true
			}
			if depth < matched {
				matched = depth
			}
		case xml.CharData:
			if matched == len(steps) {
				text.Write(t)
			}
		}
	}
}

// xmlProblem says what keeps b from being one well-formed XML document,
// in signpost's words, or "" when it is one.
func xmlProblem(b []byte) string {
	if rules.IsJSON(b) {
		return "is JSON, not XML"
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	root := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !root {
				return "holds no XML element"
			}
			return ""
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return "is not well-formed XML (line " + strconv.Itoa(se.Line) + ")"
			}
			return "is not well-formed XML"
		}
		if _, ok := tok.(xml.StartElement); ok {
			root = true
		}
	}
}
