package draft

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

// Options tune the inference. Zero values mean the defaults.
type Options struct {
	// Upstream is the upstream URL to write, e.g. from where the Document
	// was fetched. Empty writes a placeholder comment, leaving the
	// upstream to --upstream.
	Upstream string
	// MinEnumSupport is how many successful requests a closed set of
	// values needs before it is written as an enum. Zero means 5.
	MinEnumSupport int
	// MaxEnum is the most values an inferred enum may have. Zero means 12.
	MaxEnum int
	// MinEvidence is how many observations an inference needs to be
	// written active; one with fewer is written commented out for a person
	// to confirm. Zero means 3.
	MinEvidence int
}

// Defaults of Options.
const (
	DefaultMinEnumSupport = 5
	DefaultMaxEnum        = 12
	DefaultMinEvidence    = 3
)

func (o Options) withDefaults() Options {
	o.MinEnumSupport = cmp.Or(o.MinEnumSupport, DefaultMinEnumSupport)
	o.MaxEnum = cmp.Or(o.MaxEnum, DefaultMaxEnum)
	o.MinEvidence = cmp.Or(o.MinEvidence, DefaultMinEvidence)
	return o
}

// Draft is a drafted rule file and its tests, both YAML. Tests names the
// rule file by the relative name given to Write.
type Draft struct {
	Rules, Tests []byte
}

// Write drafts a rule file and a file of rule unit tests from what observe
// mode learned. rulesName is how the tests name the rule file, relative to
// the tests file, e.g. "../rules.yaml". The rule file passes signpost check;
// Write returns an error when the Document holds no operation, or when
// Options.Upstream is not a URL.
func Write(doc *observe.Document, rulesName string, o Options) (*Draft, error) {
	if doc == nil || len(doc.Operations) == 0 {
		return nil, errors.New("draft: the document records no operation; observe some traffic first")
	}
	if rulesName == "" {
		return nil, errors.New("draft: name the rule file the tests are for, e.g. ../rules.yaml")
	}
	doc, err := asServed(doc)
	if err != nil {
		return nil, err
	}
	// A second pass sees what the first templated: a registry's tags
	// (latest, v1) below /v2/{name:.+}/manifests, once its names are one.
	merged := 0
	for range 3 {
		n, err := generalisePaths(doc)
		if err != nil {
			return nil, err
		}
		if merged += n; n == 0 {
			break
		}
	}
	n, err := foldIntoTemplates(doc)
	if err != nil {
		return nil, err
	}
	merged += n
	servablePaths(doc)
	if o.Upstream != "" {
		if _, err := rules.ParseUpstream(o.Upstream); err != nil {
			return nil, fmt.Errorf("draft: upstream %q: %v", o.Upstream, err)
		}
	}
	o = o.withDefaults()
	routes, unproven, skipped := infer(doc, o)
	if len(routes) == 0 {
		for _, r := range unproven {
			skipped = append(skipped, fmt.Sprintf("%s %s: no call succeeded", r.op.Method, r.op.Path))
		}
		return nil, fmt.Errorf("draft: no operation of the document can be a route: %s", strings.Join(skipped, "; "))
	}
	data := renderRules(doc, routes, unproven, skipped, merged, o)
	cfg, err := rules.Parse(rulesName, data)
	if err != nil {
		// A draft that does not load is this package's mistake.
		return nil, fmt.Errorf("draft: the drafted rules do not load:\n%v", err)
	}
	tests, err := renderTests(routes, cfg, rulesName)
	if err != nil {
		return nil, err
	}
	return &Draft{Rules: data, Tests: tests}, nil
}

// asServed returns doc as GET /draft serves it and draft --from reads it:
// through JSON, which makes every string valid UTF-8, each byte that is not
// read as U+FFFD, as regular expressions read it in the bodies they match.
// An upstream's garbage bytes so draft the same rules in process as from a
// saved document, and never a pattern that cannot compile.
func asServed(doc *observe.Document) (*observe.Document, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("draft: %v", err)
	}
	var out observe.Document
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("draft: %v", err)
	}
	return &out, nil
}

// routeDraft is what the draft says of one operation.
type routeDraft struct {
	op       *observe.Operation
	name     string
	nameNote string
	fields   []*fieldDraft
	rules    []*ruleDraft
	// caseOnly lists, per field name, changes in case alone that
	// recoveries made, which need no alias.
	caseOnly map[string][]string
	// unproven is set when no call of the operation succeeded: the route
	// is written commented out.
	unproven bool
}

// field returns the field observed under name in a location, or nil.
func (r *routeDraft) field(name, in string) *fieldDraft {
	for _, f := range r.fields {
		if f.obs.Name == name && f.obs.In == in {
			return f
		}
	}
	return nil
}

// fieldNamed returns the field written under name, or nil.
func (r *routeDraft) fieldNamed(name string) *fieldDraft {
	for _, f := range r.fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

// pathVars are the variables of the route's template.
func (r *routeDraft) pathVars() []string {
	var vs []string
	for _, s := range segments(r.op.Path) {
		if s.isVar {
			vs = append(vs, s.text)
		}
	}
	return vs
}

// hasArg reports whether a call made from the route can pass its value
// named a: a path variable, or a field the draft can declare.
func (r *routeDraft) hasArg(a string) bool {
	if slices.Contains(r.pathVars(), a) {
		return true
	}
	f := r.fieldNamed(a)
	return f != nil && !f.credential
}

// sortedOperations orders operations by path, then by method: GET, POST,
// PUT, PATCH, DELETE, then the rest.
func sortedOperations(doc *observe.Document) []*observe.Operation {
	ops := make([]*observe.Operation, len(doc.Operations))
	for i := range doc.Operations {
		ops[i] = &doc.Operations[i]
	}
	slices.SortStableFunc(ops, func(a, b *observe.Operation) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(methodOrder(a.Method), methodOrder(b.Method)),
			strings.Compare(a.Method, b.Method))
	})
	return ops
}

// infer drafts every route: names, then fields, then, with every route's
// fields known for calls, error rules and aliases.
// Operations a rule file cannot route, and errors it cannot match, are
// left out, and said so in skipped.
func infer(doc *observe.Document, o Options) (routes, unproven []*routeDraft, skipped []string) {
	var ops []*observe.Operation
	seenOp := map[string]bool{}
	for _, op := range sortedOperations(doc) {
		k := op.Method + " " + routeShape(op.Path)
		if w := op.When; w != nil {
			k += " when " + w.In + " " + w.Key + "=" + w.Equals
		}
		switch {
		case !rules.MethodToken(op.Method):
			skipped = append(skipped, fmt.Sprintf("%s %s: a route's method is a method token (RFC 9110)", op.Method, op.Path))
		case !strings.HasPrefix(op.Path, "/"):
			skipped = append(skipped, fmt.Sprintf("%s %s: a path template starts with /", op.Method, op.Path))
		case seenOp[k]:
			skipped = append(skipped, fmt.Sprintf("%s %s: the same route as an operation above", op.Method, op.Path))
		default:
			seenOp[k] = true
			ops = append(ops, op)
		}
	}
	names, notes := nameRoutes(ops)
	refs := map[string]*routeRef{}
	for i, op := range ops {
		r := &routeDraft{op: op, name: names[i], nameNote: notes[i], caseOnly: map[string][]string{}}
		if op.Successes == 0 {
			// No call showed the route exists: served, it would be a tool
			// and would hide signpost's answer naming the routes there are.
			r.unproven = true
			unproven = append(unproven, r)
			continue
		}
		seen := map[string]bool{}
		for j := range op.Fields {
			f := inferField(op, &op.Fields[j], o)
			for n := 2; seen[f.name]; n++ {
				f.name = fmt.Sprintf("%s_%d", fieldName(op.Fields[j].Name), n)
				if f.key == "" {
					f.key = op.Fields[j].Name
					if f.obs.In == "body" {
						f.key = gjsonEscape(f.key)
					}
				}
			}
			seen[f.name] = true
			if w := op.When; w != nil && w.In == "json" && f.obs.In == "body" && f.obs.Name == w.Key {
				// The member that names the operation: fixed on its route.
				f.kind, f.constant, f.active, f.why = "const", w.Equals, true, ""
				f.evidence = fmt.Sprintf("%s: names the operation; every call of it sends %q", f.obs.Name, w.Equals)
			}
			r.fields = append(r.fields, f)
		}
		routes = append(routes, r)
		ref := &routeRef{name: r.name, method: op.Method, path: op.Path, args: r.pathVars()}
		for _, f := range r.fields {
			if f.active && f.kind != "" && !slices.Contains(ref.args, f.name) {
				ref.args = append(ref.args, f.name)
			}
		}
		refs[op.Method+" "+op.Path] = ref
	}
	for _, r := range routes {
		for _, f := range r.fields {
			if f.kind == "enum" {
				f.aliases, r.caseOnly[f.name] = aliasesFor(f, r.op.Errors, o)
			}
		}
		codes := map[string]bool{}
		var errs []observe.Error
		for _, e := range r.op.Errors {
			if e.Status < 200 || e.Status > 599 || e.Status >= 300 && e.Status < 400 {
				skipped = append(skipped, fmt.Sprintf("%s: an error of status %d, which a rule cannot match", r.name, e.Status))
				continue
			}
			errs = append(errs, e)
		}
		for _, g := range groupErrors(r.op.Path, errs) {
			d := inferRule(r, g, refs, o)
			if codes[d.code] {
				base := d.code
				if alt := textCode(d.err.Text); alt != "" && !strings.Contains(alt, base) && !strings.Contains(base, alt) && snakeName.MatchString(base+"_"+alt) && !codes[base+"_"+alt] && d.err.Status < 500 {
					d.code = base + "_" + alt
				}
				for n := 2; codes[d.code]; n++ {
					d.code = fmt.Sprintf("%s_%d", base, n)
				}
			}
			codes[d.code] = true
			r.rules = append(r.rules, d)
		}
	}
	return routes, unproven, skipped
}

// routeShape blanks a template's variable names: two templates that differ
// only in them route alike.
func routeShape(path string) string {
	var b strings.Builder
	for _, s := range segments(path) {
		b.WriteByte('/')
		if s.isVar {
			b.WriteString("{}")
		} else {
			b.WriteString(s.text)
		}
	}
	return b.String()
}
