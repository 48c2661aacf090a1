package draft

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Added counts what Onto added to a base rule file, and names the drafted
// routes the base has under names of its own.
type Added struct {
	Routes, Fields, Errors int
	Renamed                map[string]string // drafted name → the base's
}

// Onto returns base, a rule file written by hand or by signpost import,
// with what drafted, a draft of the same API, adds to it: each drafted
// route the base lacks (by method and path template), and, on a route the
// base has, each field it does not declare and each error rule whose code
// it does not use, their evidence comments with them. The base's own
// declarations, names and settings stay as they are; a drafted call to a
// route the base names otherwise is renamed to the base's name.
func Onto(base, drafted []byte) ([]byte, Added, error) {
	var added Added
	var b, d yaml.Node
	if err := yaml.Unmarshal(base, &b); err != nil {
		return nil, added, fmt.Errorf("draft: the base rule file does not parse: %v", err)
	}
	if err := yaml.Unmarshal(drafted, &d); err != nil {
		return nil, added, fmt.Errorf("draft: the draft does not parse: %v", err)
	}
	if len(b.Content) == 0 || b.Content[0].Kind != yaml.MappingNode {
		return nil, added, fmt.Errorf("draft: the base rule file is not a mapping of settings, e.g. routes: {...}")
	}
	broot, droot := b.Content[0], d.Content[0]
	if value(broot, "upstream") == nil {
		if up := value(droot, "upstream"); up != nil {
			broot.Content = append([]*yaml.Node{key(droot, "upstream"), up}, broot.Content...)
		}
	}
	broutes := value(broot, "routes")
	if broutes == nil {
		broutes = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		broot.Content = append(broot.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "routes"}, broutes)
	}
	droutes := value(droot, "routes")
	if droutes == nil || broutes.Kind != yaml.MappingNode {
		return nil, added, fmt.Errorf("draft: the base's routes are not a mapping of names to routes")
	}
	// The base's routes by method and path template, variables unnamed.
	byTemplate := map[string]string{}
	names := map[string]bool{}
	for i := 0; i+1 < len(broutes.Content); i += 2 {
		name, r := broutes.Content[i].Value, broutes.Content[i+1]
		names[name] = true
		byTemplate[templateKey(r)] = name
	}
	renamed := map[string]string{} // drafted name → the base's
	added.Renamed = renamed
	type pending struct {
		keyNode, route *yaml.Node
		base           string
	}
	var routes []pending
	for i := 0; i+1 < len(droutes.Content); i += 2 {
		k, r := droutes.Content[i], droutes.Content[i+1]
		p := pending{keyNode: k, route: r, base: byTemplate[templateKey(r)]}
		if p.base != "" {
			renamed[k.Value] = p.base
		}
		routes = append(routes, p)
	}
	for _, p := range routes {
		renameCalls(p.route, renamed)
		if p.base == "" {
			name := p.keyNode.Value
			for n := 2; names[name]; n++ {
				name = p.keyNode.Value + "_" + strconv.Itoa(n)
			}
			names[name] = true
			p.keyNode.Value = name
			broutes.Content = append(broutes.Content, p.keyNode, p.route)
			added.Routes++
			continue
		}
		into := value(broutes, p.base)
		renameVars(p.route, varNames(into))
		added.Fields += addMembers(into, p.route, "fields")
		added.Errors += addRules(into, p.route)
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&b); err != nil {
		return nil, added, err
	}
	_ = enc.Close()
	head := fmt.Sprintf("# signpost draft added to this file what traffic observe mode saw taught: %d routes,\n"+
		"# %d fields and %d error rules, each with its evidence in a comment above it. Review them as\n"+
		"# you would a draft; the rest is the file as it was.\n", added.Routes, added.Fields, added.Errors)
	return append([]byte(head), spaceRoutes(out.Bytes())...), added, nil
}

// spaceRoutes puts a blank line before each route after the first, and
// before the comments above it, as rule files are written.
func spaceRoutes(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	var out []string
	inRoutes, first := false, true
	for _, l := range lines {
		switch {
		case l == "routes:":
			inRoutes = true
		case inRoutes && len(l) > 0 && l[0] != ' ' && l[0] != '#':
			inRoutes = false
		case inRoutes && strings.HasPrefix(l, "  ") && len(l) > 2 && l[2] != ' ' && l[2] != '#':
			if !first {
				// Back over the comments that belong to this route.
				at := len(out)
				for at > 0 && strings.HasPrefix(out[at-1], "  #") {
					at--
				}
				out = append(out[:at], append([]string{""}, out[at:]...)...)
			}
			first = false
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// addMembers adds to the mapping at name in into each member of the one in
// from that it lacks, creating it when into has none, and returns how many.
func addMembers(into, from *yaml.Node, name string) int {
	src := value(from, name)
	if src == nil || src.Kind != yaml.MappingNode {
		return 0
	}
	dst := value(into, name)
	if dst == nil {
		into.Content = append(into.Content, key(from, name), src)
		return len(src.Content) / 2
	}
	if dst.Kind != yaml.MappingNode {
		return 0
	}
	n := 0
	for i := 0; i+1 < len(src.Content); i += 2 {
		if value(dst, src.Content[i].Value) == nil {
			dst.Content = append(dst.Content, src.Content[i], src.Content[i+1])
			n++
		}
	}
	dst.Style = 0 // a flow mapping grown by drafted fields reads better in blocks
	return n
}

// addRules appends to into's error rules each of from's whose code into's
// do not use, and returns how many.
func addRules(into, from *yaml.Node) int {
	src := value(from, "errors")
	if src == nil || src.Kind != yaml.SequenceNode {
		return 0
	}
	dst := value(into, "errors")
	if dst == nil {
		into.Content = append(into.Content, key(from, "errors"), src)
		return len(src.Content)
	}
	if dst.Kind != yaml.SequenceNode {
		return 0
	}
	codes := map[string]bool{}
	for _, r := range dst.Content {
		if c := value(r, "code"); c != nil {
			codes[c.Value] = true
		}
	}
	n := 0
	for _, r := range src.Content {
		if c := value(r, "code"); c != nil && codes[c.Value] {
			continue
		}
		dst.Content = append(dst.Content, r)
		n++
	}
	return n
}

// renameVars renames, in a drafted route, its path's variables to the
// names the base's route gives the same positions (by): its fields, the
// field its rules blame, and the arguments of the calls they name, which
// are filled from the failed request's fields.
func renameVars(route *yaml.Node, by []string) {
	from := varNames(route)
	if len(from) != len(by) {
		return
	}
	to := map[string]string{}
	for i, v := range from {
		if v != by[i] {
			to[v] = by[i]
		}
	}
	if len(to) == 0 {
		return
	}
	if f := value(route, "fields"); f != nil && f.Kind == yaml.MappingNode {
		for i := 0; i < len(f.Content); i += 2 {
			if n, ok := to[f.Content[i].Value]; ok {
				f.Content[i].Value = n
			}
		}
	}
	errs := value(route, "errors")
	if errs == nil || errs.Kind != yaml.SequenceNode {
		return
	}
	for _, r := range errs.Content {
		if f := value(r, "field"); f != nil {
			if n, ok := to[f.Value]; ok {
				f.Value = n
			}
		}
		for _, k := range []string{"next_call", "futile"} {
			if v := value(r, k); v != nil && v.Kind == yaml.ScalarNode {
				v.Value = callArgs.ReplaceAllStringFunc(v.Value, func(args string) string {
					return word.ReplaceAllStringFunc(args, func(w string) string { return cmp.Or(to[w], w) })
				})
			}
		}
	}
}

// callArgs is the argument list of a call, parentheses included.
var callArgs = regexp.MustCompile(`\([^()]*\)`)

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.-]*`)

// varNames returns the names of a route's path variables, in order.
func varNames(route *yaml.Node) []string {
	p := value(route, "path")
	if p == nil {
		return nil
	}
	var out []string
	for _, v := range variable.FindAllString(p.Value, -1) {
		name, _, _ := strings.Cut(strings.Trim(v, "{}"), ":")
		out = append(out, strings.TrimSpace(name))
	}
	return out
}

// callName is the route a next_call or futile names: its name before "(".
var callName = regexp.MustCompile(`\b([a-z][a-z0-9_]*)\(`)

// renameCalls renames, in a drafted route's rules, the routes their calls
// name that the base names otherwise.
func renameCalls(route *yaml.Node, renamed map[string]string) {
	errs := value(route, "errors")
	if errs == nil || errs.Kind != yaml.SequenceNode {
		return
	}
	for _, r := range errs.Content {
		for _, k := range []string{"next_call", "futile"} {
			v := value(r, k)
			if v == nil || v.Kind != yaml.ScalarNode {
				continue
			}
			v.Value = callName.ReplaceAllStringFunc(v.Value, func(m string) string {
				if to, ok := renamed[strings.TrimSuffix(m, "(")]; ok {
					return to + "("
				}
				return m
			})
		}
	}
}

// templateKey is a route's method and path template with its variables
// unnamed: /pet/{petId} and /pet/{pet_id:[0-9]+} are one template; and
// its when:, which tells apart the routes of one method and path.
func templateKey(route *yaml.Node) string {
	m, p := value(route, "method"), value(route, "path")
	if m == nil || p == nil {
		return ""
	}
	k := strings.ToUpper(m.Value) + " " + variable.ReplaceAllString(p.Value, "{}")
	// Routes that share a method and path are told apart by their when:,
	// the body member or query parameter that chooses each.
	if w := value(route, "when"); w != nil && w.Kind == yaml.MappingNode {
		var parts []string
		for i := 0; i+1 < len(w.Content); i += 2 {
			parts = append(parts, w.Content[i].Value+"="+w.Content[i+1].Value)
		}
		slices.Sort(parts)
		k += " when " + strings.Join(parts, " ")
	}
	return k
}

var variable = regexp.MustCompile(`\{[^{}]*\}`)

// value returns the value of a mapping's member, or nil.
func value(m *yaml.Node, name string) *yaml.Node {
	if k := key(m, name); k != nil {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i] == k {
				return m.Content[i+1]
			}
		}
	}
	return nil
}

// key returns a mapping's key node of that name, or nil.
func key(m *yaml.Node, name string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i]
		}
	}
	return nil
}

// RenameCalls returns tests, a drafted tests file, with the calls its
// expected bodies name (next_call's call) renamed as Onto renamed them.
func RenameCalls(tests []byte, renamed map[string]string) ([]byte, error) {
	if len(renamed) == 0 {
		return tests, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal(tests, &n); err != nil {
		return nil, fmt.Errorf("draft: the drafted tests do not parse: %v", err)
	}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if v := n.Content[i+1]; n.Content[i].Value == "call" && v.Kind == yaml.ScalarNode && renamed[v.Value] != "" {
					v.Value = renamed[v.Value]
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&n)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	_ = enc.Close()
	return out.Bytes(), nil
}
