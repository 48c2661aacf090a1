package mcp

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// xmlNode is an element of an XML body built from a call's arguments.
type xmlNode struct {
	name     string
	text     string
	children []*xmlNode
	buf      []byte // the text, as it is read
}

// set puts text at path (steps as rules' XML fields write them,
// methodCall/params/param[2]/value), making the elements on the way: the
// nth child of a name is made with those before it.
func (n *xmlNode) set(path, text string) {
	steps := strings.Split(path, "/")
	cur := n
	for i, s := range steps {
		name, index := s, 1
		if open := strings.IndexByte(s, '['); open > 0 && strings.HasSuffix(s, "]") {
			if k, err := strconv.Atoi(s[open+1 : len(s)-1]); err == nil && k > 0 {
				name, index = s[:open], k
			}
		}
		if i == 0 {
			if name != cur.name {
				return // another root: no one document holds both
			}
			continue
		}
		var found *xmlNode
		seen := 0
		for _, c := range cur.children {
			if c.name == name {
				if seen++; seen == index {
					found = c
					break
				}
			}
		}
		for ; found == nil; seen++ {
			c := &xmlNode{name: name}
			cur.children = append(cur.children, c)
			if seen+1 == index {
				found = c
			}
		}
		cur = found
	}
	cur.text = text
}

// write appends the element to b, its text escaped.
func (n *xmlNode) write(b *bytes.Buffer) {
	b.WriteString("<" + n.name + ">")
	_ = xml.EscapeText(b, []byte(n.text))
	for _, c := range n.children {
		c.write(b)
	}
	b.WriteString("</" + n.name + ">")
}

// buildXML writes one XML document holding each text at its path, in the
// order given; paths under another root than the first's are left out.
func buildXML(paths, texts []string) []byte {
	if len(paths) == 0 {
		return nil
	}
	root := &xmlNode{name: strings.SplitN(strings.SplitN(paths[0], "/", 2)[0], "[", 2)[0]}
	for i, p := range paths {
		root.set(p, texts[i])
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>` + "\n")
	root.write(&b)
	return b.Bytes()
}

// xmlrpcFault reads an XML-RPC fault response, which travels in a 200:
// as signpost's own body when signpost wrote it (its struct holds an
// error member beside faultCode and faultString), else as the body it is.
// isFault is false for any other body.
func xmlrpcFault(body []byte) (out []byte, isFault bool) {
	if !bytes.Contains(body, []byte("<methodResponse")) || !bytes.Contains(body, []byte("<fault>")) {
		return nil, false // most results: not read as XML at all
	}
	doc, err := parseXML(body)
	if err != nil || doc.name != "methodResponse" {
		return nil, false
	}
	f := doc.child("fault")
	if f == nil {
		return nil, false
	}
	fault, ok := rpcValue(f.child("value")).(map[string]any)
	if !ok {
		return body, true
	}
	message, isText := fault["faultString"].(string)
	if _, signposts := fault["error"].(string); !signposts || !isText {
		return body, true
	}
	delete(fault, "faultCode")
	delete(fault, "faultString")
	fault["message"] = message
	if out, err = json.Marshal(fault); err != nil {
		return body, true
	}
	return out, true
}

// parseXML reads an XML document into its tree of elements, by local
// name, each with its character data.
func parseXML(body []byte) (*xmlNode, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == nil {
				return nil, io.ErrUnexpectedEOF
			}
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: t.Name.Local}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.children = append(top.children, n)
			} else if root == nil {
				root = n
			} else {
				return nil, errors.New("a second root element")
			}
			if root.name != "methodResponse" {
				return nil, errors.New("not an XML-RPC response")
			}
			stack = append(stack, n)
		case xml.EndElement:
			n := stack[len(stack)-1]
			n.text, n.buf = string(n.buf), nil
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				n := stack[len(stack)-1]
				n.buf = append(n.buf, t...)
			}
		}
	}
}

// child returns the first child element called name, or nil.
func (n *xmlNode) child(name string) *xmlNode {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// rpcValue is an XML-RPC <value> as JSON's values: a struct an object,
// an array an array, a scalar of its type; a value with no type is a
// string.
func rpcValue(v *xmlNode) any {
	if v == nil {
		return nil
	}
	if len(v.children) == 0 {
		return v.text
	}
	t := v.children[0]
	switch t.name {
	case "struct":
		out := map[string]any{}
		for _, m := range t.children {
			if m.name == "member" && m.child("name") != nil {
				out[strings.TrimSpace(m.child("name").text)] = rpcValue(m.child("value"))
			}
		}
		return out
	case "array":
		out := []any{}
		for _, e := range t.child("data").childrenNamed("value") {
			out = append(out, rpcValue(e))
		}
		return out
	case "int", "i4", "i8":
		if n, err := strconv.ParseInt(strings.TrimSpace(t.text), 10, 64); err == nil {
			return n
		}
	case "double":
		if f, err := strconv.ParseFloat(strings.TrimSpace(t.text), 64); err == nil {
			return f
		}
	case "boolean":
		return strings.TrimSpace(t.text) == "1"
	}
	return t.text
}

// childrenNamed returns the child elements called name.
func (n *xmlNode) childrenNamed(name string) []*xmlNode {
	if n == nil {
		return nil
	}
	var out []*xmlNode
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}
