package draft

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

// servablePaths rewrites the paths of doc's inferred operations as a rule
// file serves them, literal segments percent-encoded where a request line
// cannot carry them ("/x y" is "/x%20y"), and every "METHOD /path" an
// error's Before names to match. Declared routes keep their templates.
func servablePaths(doc *observe.Document) {
	renamed := map[string]string{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.Route != "" {
			continue
		}
		orig := op.Path
		plainVars(op)
		if op.Path = escapeTemplate(op.Path); op.Path != orig {
			renamed[op.Method+" "+orig] = op.Method + " " + op.Path
		}
	}
	relabel(doc, renamed)
}

// plainVars renames the variables of an inferred template that a rule file
// would refuse, such as {__id} after a segment of punctuation, and their
// path fields with them.
func plainVars(op *observe.Operation) {
	segs := splitPath(op.Path)
	changed := false
	for i, seg := range segs {
		if !isVarSeg(seg) {
			continue
		}
		name, re, hasRe := strings.Cut(seg[1:len(seg)-1], ":")
		if plainField.MatchString(name) {
			continue
		}
		base := snake(name)
		if base == "" || !plainField.MatchString(base) {
			base = "id"
		}
		now := varName(segs, base)
		changed = true
		if hasRe {
			segs[i] = "{" + now + ":" + re + "}"
		} else {
			segs[i] = "{" + now + "}"
		}
		for j := range op.Fields {
			if op.Fields[j].In == "path" && op.Fields[j].Name == name {
				op.Fields[j].Name = now
			}
		}
	}
	if !changed {
		return
	}
	p := joinPath(segs)
	if p == "" || strings.HasSuffix(op.Path, "/") {
		p += "/"
	}
	op.Path = p
}

// relabel renames the operations each error's Before names.
func relabel(doc *observe.Document, renamed map[string]string) {
	if len(renamed) == 0 {
		return
	}
	for i := range doc.Operations {
		for j := range doc.Operations[i].Errors {
			e := &doc.Operations[i].Errors[j]
			for k := range e.Before {
				if to, ok := renamed[e.Before[k].Value]; ok {
					e.Before[k].Value = to
				}
			}
		}
	}
}

// escapeTemplate percent-encodes each literal segment of a template that
// a request line cannot carry as it is.
func escapeTemplate(tpl string) string {
	if rules.TargetFault(strings.ReplaceAll(strings.ReplaceAll(tpl, "{", ""), "}", "")) == nil {
		return tpl
	}
	segs := strings.Split(tpl, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			continue
		}
		if rules.TargetFault("/"+s) == nil && !strings.ContainsAny(s, "?{}") {
			continue
		}
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// generalisePaths templates, in doc's inferred operations, the path
// segments that name things though they hold no digit: a position where
// many observed paths differ between the same literal neighbours, such as
// the label in /api/v1/label/job/values, or a registry's repository name
// of one or more segments in /v2/team/workers/manifests/{manifest_id}.
// Operations that then share a method and a template are merged, their
// counts summed. A position at a path's end is templated only below a
// collection callers listed (/silences/a, /silences/b and /silences/c,
// with GET /silences seen), since an API's fixed words (/api/v1/query,
// /api/v1/labels) sit there too. It returns the number of operations
// merged away.
func generalisePaths(doc *observe.Document) (int, error) {
	observed := map[string]bool{}
	for _, op := range doc.Operations {
		if op.Route == "" {
			observed[blankVars(op.Path)] = true
		}
	}
	type cand struct {
		middles map[string]bool // the values seen between prefix and suffix
		lens    map[int]bool    // their lengths in segments
	}
	cands := map[[2]string]*cand{}
	for p := range observed {
		segs := splitPath(p)
		n := len(segs)
		for i := 1; i < n; i++ {
			for j := i + 1; j <= n; j++ {
				// A tag such as v1 where other paths hold an id names a
				// thing too, though it reads as a version.
				tag := j == n && j == i+1 && !isVarSeg(segs[i]) && observed[joinPath(segs[:i])+"/{}"]
				if !nameSegment(segs[j-1]) && !tag {
					break
				}
				suffix := segs[j:]
				if j == n && j != i+1 {
					break
				}
				if j < n && !hasLiteral(suffix) {
					continue
				}
				k := [2]string{joinPath(segs[:i]), joinPath(suffix)}
				c := cands[k]
				if c == nil {
					c = &cand{middles: map[string]bool{}, lens: map[int]bool{}}
					cands[k] = c
				}
				c.middles[joinPath(segs[i:j])] = true
				c.lens[j-i] = true
			}
		}
	}
	accepted := func(k [2]string) bool {
		c := cands[k]
		if c == nil {
			return false
		}
		if k[1] == "" {
			// At the path's end: below a collection callers listed, or
			// where other paths have an id already (a registry's tags
			// latest, prod and main beside manifests/{manifest_id}).
			prefix := splitPath(k[0])
			return len(c.middles) >= 3 && (observed[k[0]] && !isVarSeg(prefix[len(prefix)-1]) || observed[k[0]+"/{}"])
		}
		return len(c.middles) >= 3 || len(c.middles) >= 2 && len(c.lens) > 1
	}

	renamed := map[string]string{}
	changed := false
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.Route != "" {
			continue
		}
		segs := splitPath(blankVars(op.Path))
		orig := splitPath(op.Path)
		bestI, bestJ := -1, -1
		for a := 1; a < len(segs); a++ {
			for b := a + 1; b <= len(segs); b++ {
				if !accepted([2]string{joinPath(segs[:a]), joinPath(segs[b:])}) {
					continue
				}
				// The longest literal suffix wins, then the position seen
				// with the most values, then the longest prefix: the
				// narrowest position that varies most.
				if bestI < 0 {
					bestI, bestJ = a, b
					continue
				}
				n, bn := len(cands[[2]string{joinPath(segs[:a]), joinPath(segs[b:])}].middles), len(cands[[2]string{joinPath(segs[:bestI]), joinPath(segs[bestJ:])}].middles)
				if len(segs)-b > len(segs)-bestJ || len(segs)-b == len(segs)-bestJ && (n > bn || n == bn && a > bestI) {
					bestI, bestJ = a, b
				}
			}
		}
		if bestI < 0 {
			continue
		}
		name := varName(orig, "name")
		multi := len(cands[[2]string{joinPath(segs[:bestI]), joinPath(segs[bestJ:])}].lens) > 1 || bestJ-bestI > 1
		tplVar := "{" + name + "}"
		if multi {
			tplVar = "{" + name + ":.+}"
		}
		value := strings.Join(orig[bestI:bestJ], "/")
		np := "/" + strings.Join(append(append(append([]string{}, orig[:bestI]...), tplVar), orig[bestJ:]...), "/")
		if strings.HasSuffix(op.Path, "/") {
			np += "/"
		}
		renamed[op.Method+" "+op.Path] = op.Method + " " + np
		op.Path = np
		op.Fields = append([]observe.Field{{
			Name: name, In: "path", Kind: "string", Seen: op.Requests, Succeeded: op.Successes,
			Good: nonEmpty(value, op.Successes), Bad: nonEmpty(value, op.Requests-op.Successes),
		}}, op.Fields...)
		changed = true
	}
	if !changed {
		return 0, nil
	}
	unifyVars(doc, renamed)
	relabel(doc, renamed)
	return mergeOperations(doc)
}

// unifyVars gives operations of one method whose templates differ only in
// their variables' names the names of the most requested of them, so that
// they merge as one: /v2/{name:.+}/manifests/{name_2}, from tags such as
// latest, joins /v2/{name:.+}/manifests/{manifest_id}.
func unifyVars(doc *observe.Document, renamed map[string]string) {
	canon := map[string]*observe.Operation{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.Route != "" {
			continue
		}
		k := op.Method + " " + blankVars(op.Path)
		if c := canon[k]; c == nil || op.Requests > c.Requests {
			canon[k] = op
		}
	}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		c := canon[op.Method+" "+blankVars(op.Path)]
		if op.Route != "" || c == op || c.Path == op.Path {
			continue
		}
		from, to := splitPath(op.Path), splitPath(c.Path)
		names := map[string]string{}
		for j := range from {
			if isVarSeg(from[j]) && isVarSeg(to[j]) {
				a, _, _ := strings.Cut(from[j][1:len(from[j])-1], ":")
				b, _, _ := strings.Cut(to[j][1:len(to[j])-1], ":")
				names[a] = b
			}
		}
		for j := range op.Fields {
			if n, ok := names[op.Fields[j].Name]; ok && op.Fields[j].In == "path" {
				op.Fields[j].Name = n
			}
		}
		for old, now := range renamed {
			if now == op.Method+" "+op.Path {
				renamed[old] = c.Method + " " + c.Path
			}
		}
		renamed[op.Method+" "+op.Path] = c.Method + " " + c.Path
		op.Path = c.Path
	}
}

// nonEmpty is one value seen n times, or none when n is 0.
func nonEmpty(v string, n int64) []observe.Value {
	if n <= 0 {
		return nil
	}
	return []observe.Value{{Value: v, Count: n}}
}

// nameSegment reports whether a path segment may be part of a name the
// draft templates: a literal, not an API version or prefix.
func nameSegment(s string) bool {
	return s != "" && !isVarSeg(s) && !versionSegment.MatchString(strings.ToLower(s))
}

func isVarSeg(s string) bool { return strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") }

func hasLiteral(segs []string) bool {
	for _, s := range segs {
		if !isVarSeg(s) {
			return true
		}
	}
	return false
}

// blankVars writes each variable of a template as {}, so that templates
// that differ only in their variables' names compare equal.
func blankVars(tpl string) string {
	segs := splitPath(tpl)
	for i, s := range segs {
		if isVarSeg(s) {
			segs[i] = "{}"
		}
	}
	return joinPath(segs)
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// joinPath joins segments as a path; none is "".
func joinPath(segs []string) string {
	if len(segs) == 0 {
		return ""
	}
	return "/" + strings.Join(segs, "/")
}

// varName is base, or base_2, base_3, ... when the template has it already.
func varName(segs []string, base string) string {
	taken := map[string]bool{}
	for _, s := range segs {
		if isVarSeg(s) {
			n, _, _ := strings.Cut(s[1:len(s)-1], ":")
			taken[n] = true
		}
	}
	name := base
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	return name
}

// foldIntoTemplates merges into a template the operations whose paths it
// takes, when each value the template's variables take there is a name:
// part of a name the draft templated (team/workers), or a word at the
// path's end where at least 3 such words stand in observed paths (the
// tags latest, prod and v1 of /v2/{name:.+}/manifests/{manifest_id}). A
// lone word beside an id, as search in /tickets/search beside
// /tickets/{ticket_id}, stays a route of its own. It returns the number
// of operations merged away.
func foldIntoTemplates(doc *observe.Document) (int, error) {
	var tpls []string
	seen := map[string]bool{}
	for _, op := range doc.Operations {
		if op.Route == "" && strings.Contains(op.Path, "{") && !seen[op.Path] {
			seen[op.Path] = true
			tpls = append(tpls, op.Path)
		}
	}
	// The words each template's last variable takes across observed paths.
	words := map[string]map[string]bool{}
	for _, t := range tpls {
		words[t] = map[string]bool{}
		for _, op := range doc.Operations {
			if op.Route != "" {
				continue
			}
			if vals, ok := matchTemplate(splitPath(t), splitPath(op.Path)); ok {
				if last := vals[len(vals)-1]; last.literal && lastIsVar(t) {
					words[t][last.value] = true
				}
			}
		}
	}
	renamed := map[string]string{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.Route != "" {
			continue
		}
		for _, t := range tpls {
			if t == op.Path || len(words[t]) < 3 {
				continue
			}
			vals, ok := matchTemplate(splitPath(t), splitPath(op.Path))
			if !ok {
				continue
			}
			fold := true
			for j, v := range vals {
				if v.literal && !v.slash && j != len(vals)-1 {
					fold = false // a word inside the path may be a fixed one
				}
			}
			if !fold {
				continue
			}
			for _, v := range vals {
				if v.literal {
					op.Fields = append(op.Fields, observe.Field{Name: v.name, In: "path", Kind: "string",
						Seen: op.Requests, Succeeded: op.Successes,
						Good: nonEmpty(v.value, op.Successes), Bad: nonEmpty(v.value, op.Requests-op.Successes)})
				}
			}
			renamed[op.Method+" "+op.Path] = op.Method + " " + t
			op.Path = t
			break
		}
	}
	if len(renamed) == 0 {
		return 0, nil
	}
	relabel(doc, renamed)
	return mergeOperations(doc)
}

func lastIsVar(tpl string) bool {
	segs := splitPath(tpl)
	return len(segs) > 0 && isVarSeg(segs[len(segs)-1])
}

// varValue is what one variable of a template takes in a path.
type varValue struct {
	name, value string
	literal     bool // the path has text there, not a variable of its own
	slash       bool // the variable takes a slash: a name of several segments
}

// matchTemplate matches a path's segments (which may hold variables of
// their own) against a template's: a literal matches itself, a variable
// one segment, a variable that takes a slash one or more. It returns what
// each variable of the template takes.
func matchTemplate(tpl, path []string) ([]varValue, bool) {
	if len(tpl) == 0 {
		return nil, len(path) == 0
	}
	if len(path) == 0 {
		return nil, false
	}
	t := tpl[0]
	if !isVarSeg(t) {
		if path[0] != t {
			return nil, false
		}
		return matchTemplate(tpl[1:], path[1:])
	}
	name, re, _ := strings.Cut(t[1:len(t)-1], ":")
	slash := strings.Contains(re, ".")
	most := 1
	if slash {
		most = len(path)
	}
	for n := 1; n <= most; n++ {
		part := path[:n]
		literal := true
		for _, s := range part {
			if isVarSeg(s) {
				literal = false
			}
		}
		if !literal && (n > 1 || part[0] != t && !sameVar(part[0], t)) {
			continue
		}
		rest, ok := matchTemplate(tpl[1:], path[n:])
		if ok {
			return append([]varValue{{name: name, value: strings.Join(part, "/"), literal: literal, slash: slash}}, rest...), true
		}
	}
	return nil, false
}

// sameVar reports whether two variable segments read alike, their names aside.
func sameVar(a, b string) bool {
	_, ra, _ := strings.Cut(a[1:len(a)-1], ":")
	_, rb, _ := strings.Cut(b[1:len(b)-1], ":")
	return ra == rb
}

// mergeOperations merges the operations of doc that now share a method and
// a path, as observe.Merge merges replicas' records, and returns how many
// fewer there are.
func mergeOperations(doc *observe.Document) (int, error) {
	before := len(doc.Operations)
	d := *doc
	d.Version = observe.DocumentVersion
	m, err := observe.Merge(d)
	if err != nil {
		return 0, fmt.Errorf("draft: merging the operations of templated paths: %v", err)
	}
	m.Version = doc.Version
	*doc = m
	return before - len(doc.Operations), nil
}
