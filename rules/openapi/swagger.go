package openapi

import (
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// loadSwagger reads a Swagger 2.0 document and converts it to OpenAPI 3.0
// with kin-openapi's openapi2conv, which turns host, basePath and schemes
// into servers. root is the document as YAML read it, version its swagger
// key's value.
func loadSwagger(name string, data []byte, root, version *yaml.Node) (*openapi3.T, error) {
	if version.Tag != "!!str" {
		// swagger: 2.0 unquoted is a number to a YAML reader, and openapi2
		// takes only the string "2.0" the specification writes.
		version.Tag, version.Style = "!!str", yaml.DoubleQuotedStyle
		if b, err := yaml.Marshal(root); err == nil {
			data = b
		}
	}
	var doc2 openapi2.T
	if err := openapi2.UnmarshalFromData(data, &doc2); err != nil {
		return nil, specLoadError(name, err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, specLoadError(name, err)
	}
	if doc.Paths == nil {
		// Converted from paths: {}, which "declares no operations" words.
		doc.Paths = openapi3.NewPaths()
	}
	swaggerOrigins(doc, root)
	return doc, nil
}

// jsonUnmarshal matches the JSON decoder's complaint about a value of the
// wrong kind, which names Go types: "json: cannot unmarshal array into
// value of type openapi2.PathItem".
var jsonUnmarshal = regexp.MustCompile(`json: cannot unmarshal (\w+) into (?:Go struct field |field |Go value |value )?(?:(\S+) )?of type ([\w.\[\]*]+)`)

var jsonKinds = map[string]string{"array": "a list", "object": "a mapping", "string": "text", "number": "a number", "bool": "a boolean"}

// wordJSONUnmarshal rewords jsonUnmarshal's matches in msg without Go's
// names: "found a list where a path item belongs at paths./pets".
func wordJSONUnmarshal(msg string) string {
	return jsonUnmarshal.ReplaceAllStringFunc(msg, func(m string) string {
		sub := jsonUnmarshal.FindStringSubmatch(m)
		at := ""
		if f := sub[2]; strings.HasPrefix(f, "T.") {
			at = " at " + strings.NewReplacer("~1", "/", "~0", "~").Replace(f[2:])
		} else if typ, key, ok := strings.Cut(f, "."); ok {
			at = " at " + key + " of " + goTypeNoun("openapi2."+typ) // Operation.parameters
		}
		kind := jsonKinds[sub[1]]
		if kind == "" {
			kind = sub[1]
		}
		return "found " + kind + " where " + goTypeNoun(sub[3]) + " belongs" + at
	})
}

// swaggerOrigins records where a Swagger 2.0 document declares each path
// and property, which openapi2 does not, so routes and fields keep its order.
func swaggerOrigins(doc *openapi3.T, root *yaml.Node) {
	top := root.Content[0]
	if paths := mappingValue(top, "paths"); paths != nil && paths.Kind == yaml.MappingNode && doc.Paths != nil {
		for i := 0; i+1 < len(paths.Content); i += 2 {
			k := paths.Content[i]
			if item := doc.Paths.Value(k.Value); item != nil && item.Origin == nil {
				item.Origin = &openapi3.Origin{Key: nodeLocation(k)}
			}
		}
	}
	// A converted schema is not tied to the mapping it came from, so each
	// one takes the order of the first properties mapping in the document
	// that declares the same names.
	orders := map[string][]*yaml.Node{}
	var collect func(n *yaml.Node, depth int)
	collect = func(n *yaml.Node, depth int) {
		if depth > 64 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "properties" && v.Kind == yaml.MappingNode {
					var keys []*yaml.Node
					for j := 0; j+1 < len(v.Content); j += 2 {
						keys = append(keys, v.Content[j])
					}
					sig := propertySignature(keys, func(k *yaml.Node) string { return k.Value })
					if _, seen := orders[sig]; !seen {
						orders[sig] = keys
					}
				}
				collect(v, depth+1)
			}
		case yaml.SequenceNode, yaml.DocumentNode:
			for _, c := range n.Content {
				collect(c, depth+1)
			}
		}
	}
	collect(root, 0)
	seen := map[*openapi3.Schema]bool{}
	var visit func(r *openapi3.SchemaRef)
	visit = func(r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		s := r.Value
		seen[s] = true
		names := specKeys(s.Properties)
		for _, k := range orders[propertySignature(names, func(n string) string { return n })] {
			if p := s.Properties[k.Value]; p != nil && p.Origin == nil {
				p.Origin = &openapi3.Origin{Key: nodeLocation(k)}
			}
		}
		for _, n := range names {
			visit(s.Properties[n])
		}
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, m := range list {
				visit(m)
			}
		}
		visit(s.Items)
		visit(s.Not)
	}
	for _, o := range specOperations(doc) {
		for _, list := range []openapi3.Parameters{o.item.Parameters, o.op.Parameters} {
			for _, p := range list {
				if p != nil && p.Value != nil {
					visit(p.Value.Schema)
				}
			}
		}
		if rb := o.op.RequestBody; rb != nil && rb.Value != nil {
			for _, mt := range specKeys(rb.Value.Content) {
				if c := rb.Value.Content[mt]; c != nil {
					visit(c.Schema)
				}
			}
		}
	}
}

// propertySignature names a set of property names, whatever their order.
func propertySignature[T any](keys []T, name func(T) string) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = name(k)
	}
	slices.Sort(names)
	return strings.Join(names, "\x00")
}

func nodeLocation(n *yaml.Node) *openapi3.Location {
	return &openapi3.Location{Line: n.Line, Column: n.Column}
}

// mappingValue is the value of key in mapping m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
