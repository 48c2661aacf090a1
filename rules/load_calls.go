package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// callRef is a call named in the file, resolved once every route is known.
type callRef struct {
	node *yaml.Node
	path string
	name string
	args []argRef
}

type argRef struct{ name, from string }

var callShorthand = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$`)

// callRef reads a call written as `route(arg, arg: field)` or as a mapping
// {call: route, arguments: [arg] or {arg: field}}. An argument with no
// field takes the failed request's field of the same name.
func (l *loader) callRef(n *yaml.Node, path, example string) *callRef {
	n = l.deref(n)
	ref := &callRef{node: n, path: path}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		m := callShorthand.FindStringSubmatch(n.Value)
		if m == nil && strings.Contains(n.Value, "(") && !strings.Contains(n.Value, ")") {
			l.errorf(n, path, "%q is cut short at a comma; inside {...} quote a call with several arguments, e.g. '%s'", n.Value, example)
			return nil
		}
		if m == nil {
			l.errorf(n, path, "%q is not a call; write the route and its arguments, e.g. %s", n.Value, example)
			return nil
		}
		ref.name = m[1]
		if strings.TrimSpace(m[2]) == "" {
			return ref
		}
		for a := range strings.SplitSeq(m[2], ",") {
			name, from, _ := strings.Cut(a, ":")
			name, from = strings.TrimSpace(name), strings.TrimSpace(from)
			if name == "" {
				l.errorf(n, path, "%q has an empty argument; e.g. %s", n.Value, example)
				return nil
			}
			ref.args = append(ref.args, argRef{name, cmpOr(from, name)})
		}
		return ref
	}
	pairs := l.mapping(n, path, []string{"call", "arguments"}, "a call, e.g. "+example)
	if pairs == nil {
		return nil
	}
	for _, kv := range pairs {
		p := join(path, kv.key)
		switch kv.key {
		case "call":
			ref.name, _ = l.scalar(kv.val, p, "assign_ticket")
		case "arguments":
			v := l.deref(kv.val)
			switch v.Kind {
			case yaml.SequenceNode:
				for i, it := range v.Content {
					if s, ok := l.scalar(it, fmt.Sprintf("%s[%d]", p, i), "ticket_id"); ok {
						ref.args = append(ref.args, argRef{s, s})
					}
				}
			case yaml.MappingNode:
				for _, a := range l.mapping(v, p, nil, "a mapping of arguments to fields") {
					if s, ok := l.scalar(a.val, join(p, a.key), "ticket_id"); ok {
						ref.args = append(ref.args, argRef{a.key, s})
					}
				}
			default:
				l.errorf(v, p, "must list the arguments, e.g. [ticket_id] or {ticket_id: id}; found %s", describe(v))
			}
		}
	}
	if ref.name == "" {
		l.errorf(n, join(path, "call"), "missing; name the route to call, e.g. %s", example)
		return nil
	}
	return ref
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resolve turns a reference made from route from into a Call, reporting an
// unknown route, an argument the called route does not take, and a source
// field the failed route does not have. Path variables count as fields of
// their route whether declared or not. A lookup's arguments all take the
// value of field lookup.
func (l *loader) resolve(ref *callRef, from *Route, routes map[string]*Route, names []string, lookup *Field) *Call {
	target := routes[ref.name]
	if target == nil {
		hint := "; routes: " + strings.Join(names, ", ")
		if c := closestName(ref.name, names); c != "" {
			hint = fmt.Sprintf("; did you mean %q?", c)
		}
		l.errorf(ref.node, ref.path, "calls %q, which is not a route of this file%s", ref.name, hint)
		return nil
	}
	c := &Call{Route: target}
	ok := true
	for i, a := range ref.args {
		if slices.ContainsFunc(ref.args[:i], func(b argRef) bool { return b.name == a.name }) {
			l.errorf(ref.node, ref.path, "passes argument %q twice; name each argument once, e.g. %s(%s)", a.name, target.Name, a.name)
			ok = false
			continue
		}
		if target.Field(a.name) == nil && !contains(templateVars(target.Path), a.name) {
			l.errorf(ref.node, ref.path, "%s has no field %q to pass; its fields: %s", target.Name, a.name, fieldNames(target))
			ok = false
			continue
		}
		src := lookup
		if src == nil {
			src = argumentField(from, a.from)
		}
		if src == nil {
			l.errorf(ref.node, ref.path, "argument %s takes field %q, which %s does not declare; its fields: %s", a.name, a.from, from.Name, fieldNames(from))
			ok = false
			continue
		}
		c.Args = append(c.Args, Arg{Name: a.name, From: src})
	}
	if !ok {
		return nil
	}
	return c
}

// argumentField returns the field of r called name: a declared one, or an
// undeclared path variable, which every matched request carries.
func argumentField(r *Route, name string) *Field {
	if f := r.Field(name); f != nil {
		return f
	}
	if contains(templateVars(r.Path), name) {
		return &Field{Name: name, In: InPath, Key: name, Required: true, Rule: "is required"}
	}
	return nil
}

// fieldNames lists a route's fields and undeclared path variables.
func fieldNames(r *Route) string {
	var names []string
	for _, f := range r.Fields {
		names = append(names, f.Name)
	}
	for _, v := range templateVars(r.Path) {
		if !contains(names, v) {
			names = append(names, v)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// pendingLookup and pendingRule hold what waits for every route to load.
type pendingLookup struct {
	route *Route
	field *Field
	ref   *callRef
}

type pendingRule struct {
	route     *Route
	rule      *ErrorRule
	next      *callRef
	node      *yaml.Node
	path      string
	msgNode   *yaml.Node
	retryNode *yaml.Node
}

// link resolves every call once all routes are known, then composes each
// rule's message.
func (l *loader) link() {
	routes := make(map[string]*Route, len(l.cfg.Routes))
	names := make([]string, len(l.cfg.Routes))
	for i, r := range l.cfg.Routes {
		routes[r.Name], names[i] = r, r.Name
	}
	for _, p := range l.lookups {
		if len(p.ref.args) != 1 || p.ref.args[0].from != p.ref.args[0].name {
			l.errorf(p.ref.node, p.ref.path, "a lookup passes the value sent as its one argument, e.g. lookup: %s(query)", p.ref.name)
			continue
		}
		c := l.resolve(p.ref, p.route, routes, names, p.field)
		if c == nil {
			continue
		}
		p.field.Lookup = c
		p.field.Rule = p.field.ruleText()
	}
	for _, p := range l.rules {
		e := p.rule
		if p.next != nil {
			e.NextCall = l.resolve(p.next, p.route, routes, names, nil)
		}
		if e.Futile != "" && e.Retryable != nil && *e.Retryable {
			l.errorf(p.node, p.path, "a futile rule cannot be retryable: repeating the call cannot succeed; drop retryable: true")
		}
		if e.RetryAfter > 0 && (e.Futile != "" || e.Retryable != nil && !*e.Retryable) {
			l.errorf(p.retryNode, join(p.path, "retry_after"), "has no effect on a rule that is never retryable; drop it, or the futile or retryable: false")
		}
		if e.Futile != "" {
			no := false
			e.Retryable = &no
		}
		l.compose(p)
		l.futileCall(p, routes, names)
	}
}

// Placeholders a message may hold: the value sent, and the upstream's
// own short detail.
const (
	PlaceholderReceived = "received"
	PlaceholderUpstream = "upstream"
)

// hole is a placeholder of a message: {name} at byte at of the message.
type hole struct {
	at   int
	name string
}

// template reads the rule's own message: {received} and {upstream} are
// placeholders, {{ and }} are literal braces, and any other brace is a
// problem, so that a misspelt placeholder never reaches an agent. It
// returns the message with its literal braces, the placeholders written
// {name}, and records where they are.
func (l *loader) template(p pendingRule) string {
	e := p.rule
	e.route = p.route
	src := e.Message
	if !strings.ContainsAny(src, "{}") {
		return src
	}
	path := join(p.path, "message")
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(src) && src[i+1] == c:
			b.WriteByte(c)
			i++
		case c == '}':
			l.errorf(p.msgNode, path, "a lone } at byte %d; write }} for a literal brace, e.g. up{{job=\"node\"}}", i+1)
			return src
		case c == '{':
			end := strings.IndexAny(src[i+1:], "{}")
			if end < 0 || src[i+1+end] != '}' {
				l.errorf(p.msgNode, path, "a lone { at byte %d; write {{ for a literal brace, e.g. up{{job=\"node\"}}", i+1)
				return src
			}
			name := src[i+1 : i+1+end]
			switch {
			case name != PlaceholderReceived && name != PlaceholderUpstream:
				l.errorf(p.msgNode, path, "unknown placeholder {%s}; only {received} (the value sent) and {upstream} (the upstream's short message) are replaced; write {{ and }} for literal braces, e.g. up{{job=\"node\"}}", name)
			case name == PlaceholderReceived && e.Field == nil && !e.capturesReceived():
				l.errorf(p.msgNode, path, "{received} needs a field: or a (?P<received>...) group in the match to take the value from")
			}
			e.holes = append(e.holes, hole{b.Len(), name})
			b.WriteString(src[i : i+2+end])
			i += 1 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// compose builds the rule's final message: its own or its field's rule,
// then the next call, then what to do instead of repeating a futile call.
func (l *loader) compose(p pendingRule) {
	e := p.rule
	msg := l.template(p)
	if msg == "" && e.Field != nil {
		msg, e.StatesRule = e.Field.Rule, true
	} else if e.Field != nil && e.Field.Lookup != nil && !strings.Contains(msg, e.Field.Lookup.Route.Name) {
		msg += "; " + lookupHint(e.Field)
	}
	if c := e.NextCall; c != nil && !strings.Contains(msg, c.Route.Name) {
		msg += "; call " + c.Route.Name + " first"
	}
	if e.Futile != "" {
		msg += "; repeating this call cannot succeed; " + e.Futile
	}
	e.Message = msg
}

func (e *ErrorRule) capturesReceived() bool {
	for _, re := range []*regexp.Regexp{e.Match.Body, e.Match.Regex} {
		if re != nil && re.SubexpIndex(CaptureGroup) >= 0 {
			return true
		}
	}
	return false
}

// lookupHint names the call that finds valid values for f.
func lookupHint(f *Field) string {
	what := "find valid values"
	if n := strings.ToLower(f.Name); strings.HasSuffix(n, "id") {
		what = "resolve an id"
	}
	return what + " with " + f.Lookup.Signature()
}

// choice reads one of a closed set of words.
func (l *loader) choice(n *yaml.Node, path string, options []string) (string, bool) {
	s, ok := l.scalar(n, path, options[0])
	if !ok {
		return "", false
	}
	if !contains(options, s) {
		hint := ""
		if c := closestName(s, options); c != "" {
			hint = fmt.Sprintf("did you mean %q? ", c)
		}
		l.errorf(l.deref(n), path, "unknown value %q; %sallowed values: %s", s, hint, strings.Join(options, ", "))
		return "", false
	}
	return s, true
}

var (
	formatChoices = []string{string(FormatJSON), string(FormatProblem), string(FormatJSONRPC), string(FormatXMLRPC)}
	policyChoices = []string{string(Wrap), string(Passthrough)}
	// encodingChoices are the values of a route's body:.
	encodingChoices = []string{string(EncodingJSON), string(EncodingForm), string(EncodingMultipart), string(EncodingXML)}
	modeChoices     = []string{string(ValidateAfter), string(ValidateBefore)}
	// enforcementChoices are the values of mode:.
	enforcementChoices = []string{string(Enforce), string(Observe)}
)
