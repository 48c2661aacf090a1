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
	return indexXML(body).value(path)
}

// maxXMLElements bounds the elements an XML body is indexed for: past it,
// the elements are not read.
const maxXMLElements = 10000

// xmlIndex holds an XML body's elements by their paths, every step's index
// written out (methodCall[1]/params[1]/param[2]/value[1]), each with its
// text: read once for every field and when: of a request, so that the
// routes and fields it is checked for cost one pass over it.
type xmlIndex map[string]string

// indexXML reads body's elements, up to maxXMLElements; an element not
// closed before a break in the document is not there.
func indexXML(body []byte) xmlIndex {
	idx := xmlIndex{}
	type open struct {
		path   string
		counts map[string]int
		start  int // where its text starts in text
	}
	var stack []open
	var text []byte
	d := xml.NewDecoder(bytes.NewReader(body))
	for len(idx) < maxXMLElements {
		tok, err := d.Token()
		if err != nil {
			return idx
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path := t.Name.Local + "[1]"
			if n := len(stack); n > 0 {
				parent := &stack[n-1]
				if parent.counts == nil {
					parent.counts = map[string]int{}
				}
				parent.counts[t.Name.Local]++
				path = parent.path + "/" + t.Name.Local + "[" + strconv.Itoa(parent.counts[t.Name.Local]) + "]"
			}
			stack = append(stack, open{path: path, start: len(text)})
		case xml.CharData:
			if len(stack) > 0 {
				text = append(text, t...)
			}
		case xml.EndElement:
			if len(stack) == 0 {
				return idx
			}
			e := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, seen := idx[e.path]; !seen {
				idx[e.path] = strings.TrimSpace(string(text[e.start:]))
			}
		}
	}
	return idx
}

// value returns the text of the element at path, written as a field's key
// is, its indexes optional.
func (idx xmlIndex) value(path string) (string, bool) {
	var b strings.Builder
	for i, s := range parseXMLPath(path) {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(s.name)
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(s.index))
		b.WriteByte(']')
	}
	v, ok := idx[b.String()]
	return v, ok
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
