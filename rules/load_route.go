package rules

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/suggest"
	"gopkg.in/yaml.v3"
)

func (l *loader) field(r *Route, name string, n *yaml.Node, path string) *Field {
	f := &Field{Name: name, Key: name}
	if dn := l.deref(n); dn.Kind == yaml.ScalarNode && dn.Tag == "!!null" {
		// "title:" alone declares a field with no constraint.
		l.finishField(r, f, dn, path, nil)
		return f
	}
	pairs := l.mapping(n, path, fieldKeys, "a mapping of constraints, e.g. {enum: [open, pending, closed]}")
	if pairs == nil {
		// Still declared: error rules that name it should not fail too.
		l.finishField(r, f, l.deref(n), path, nil)
		return f
	}
	at := map[string]*yaml.Node{}
	var in string
	var lookup *callRef
	for _, kv := range pairs {
		p := join(path, kv.key)
		at[kv.key] = l.deref(kv.val)
		switch kv.key {
		case "description":
			f.Description = l.description(kv.val, p, "the ticket's new state")
		case "in":
			if s, ok := l.scalar(kv.val, p, "body"); ok {
				if !contains(locations, s) {
					l.errorf(at[kv.key], p, "unknown location %q; allowed values: %s", s, strings.Join(locations, ", "))
				} else {
					in = s
				}
			}
		case "key":
			if s, ok := l.scalar(kv.val, p, "ticket.status"); ok && s == "" {
				l.errorf(at[kv.key], p, "must not be empty; name where the value lives, e.g. key: ticket.status, or leave key out to use the field's name")
			} else if ok {
				f.Key = s
			}
		case "required":
			f.Required, _ = l.boolean(kv.val, p)
		case "enum":
			f.Enum = l.enum(kv.val, p)
		case "const":
			if s, ok := l.scalar(kv.val, p, "torrent-get"); ok {
				f.Const, f.Enum = s, []string{s}
			}
		case "format":
			if s, ok := l.scalar(kv.val, p, "rfc3339-utc"); ok {
				if f.Format = FormatNamed(s); f.Format == nil {
					hint := ""
					if c := closestName(s, formatNames()); c != "" {
						hint = fmt.Sprintf("did you mean %q? ", c)
					}
					l.errorf(at[kv.key], p, "unknown format %q; %sknown formats: %s", s, hint, strings.Join(formatNames(), ", "))
				}
			}
		case "pattern":
			if s, ok := l.scalar(kv.val, p, `'^C-[0-9]+$'`); ok {
				re, err := regexp.Compile(s)
				if err != nil {
					l.errorf(at[kv.key], p, "pattern %q does not compile as RE2: %v", s, reError(err))
				} else {
					f.Pattern, f.simple = re, compileSimple(re)
				}
			}
		case "example":
			if s, ok := l.scalar(kv.val, p, "C-1042"); ok {
				if s == "" {
					l.errorf(at[kv.key], p, "must not be empty; give one value that satisfies the field's rule, e.g. example: C-1042")
				}
				f.Example = s
			}
		case "min":
			if v, ok := l.number(kv.val, p, "1"); ok {
				f.Min = &v
			}
		case "max":
			if v, ok := l.number(kv.val, p, "100"); ok {
				f.Max = &v
			}
		case "lookup":
			lookup = l.callRef(kv.val, p, "search_customers(query)")
		case "catalog":
			if c := l.catalog(kv.val, p); c != nil {
				f.Catalog = c
			}
		case "hidden":
			f.Hidden = l.enum(kv.val, p)
		case "aliases":
			f.Aliases = l.aliases(kv.val, p)
		case "rule":
			if s, ok := l.scalar(kv.val, p, "must be an ISO 3166-1 alpha-2 country code, two letters"); ok {
				f.RuleText = strings.TrimSpace(s)
			}
		case "list_tokens":
			if v, ok := l.integer(kv.val, p, 0, 100000, "60"); ok {
				f.ListBudget = int(v)
			}
		case "max_length":
			if v, ok := l.integer(kv.val, p, 1, 1<<20, "200"); ok {
				f.MaxLength = int(v)
			}
		case "min_length":
			if v, ok := l.integer(kv.val, p, 1, 1<<20, "1"); ok {
				f.MinLength = int(v)
			}
		}
	}
	if in != "" {
		f.In, f.inGiven = Location(in), true
	}
	l.finishField(r, f, l.deref(n), path, at)
	if lookup != nil {
		l.lookups = append(l.lookups, pendingLookup{route: r, field: f, ref: lookup})
	}
	return f
}

// description reads a description: text for the tool definition, not
// empty, with surrounding space trimmed.
func (l *loader) description(n *yaml.Node, path, example string) string {
	s, ok := l.scalar(n, path, example)
	if !ok {
		return ""
	}
	if s = strings.TrimSpace(s); s == "" {
		l.errorf(l.deref(n), path, "must not be empty; say in a sentence what the model should know, e.g. description: %s, or leave description out", example)
	}
	return s
}

// finishField fills defaults and checks that the constraints fit together.
// at maps each key written to its value node.
func (l *loader) finishField(r *Route, f *Field, n *yaml.Node, path string, at map[string]*yaml.Node) {
	vars := templateVars(r.Path)
	switch {
	case f.In == "" && contains(vars, f.Key):
		f.In = InPath
	case f.In == "" && (r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH") && r.Body != "" && r.Body != EncodingJSON:
		f.In = locationOf(r.Body)
	case f.In == "" && (r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH"):
		f.In = InBody
	case f.In == "":
		f.In = InQuery
	case f.In == InPath && r.Path != "" && !contains(vars, f.Key):
		l.errorf(at["in"], join(path, "in"), "the path %s has no variable {%s}; its variables: %s", r.written(), f.Key, listOrNone(vars))
	}
	if f.In == InPath {
		f.Required = true // a path variable is always present when the route matches
	}
	var kinds []string
	for _, k := range []string{"enum", "const", "catalog", "format", "pattern"} {
		if at[k] != nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) > 1 {
		l.errorf(n, path, "%s each fix a value's form; keep one of them", andList(kinds))
		return
	}
	numeric := f.Format != nil && f.Format.numeric()
	for _, k := range []string{"min", "max"} {
		if at[k] == nil || numeric || (k == "min" && f.Min == nil) || (k == "max" && f.Max == nil) {
			continue
		}
		has := "has no format"
		if f.Format != nil {
			has = "has format: " + f.Format.Name
		}
		l.errorf(at[k], join(path, k), "%s %s bounds a number, but this field %s; use format: integer or format: number, e.g. {format: integer, min: 1, max: 100}", k, at[k].Value, has)
	}
	if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
		l.errorf(at["max"], join(path, "max"), "max %s is below min %s; the range runs from min up to max, e.g. {min: %s, max: %s}", num(*f.Max), num(*f.Min), num(*f.Max), num(*f.Min))
	}
	if at["max_length"] != nil && f.MaxLength > 0 && (f.Enum != nil || f.Format != nil) {
		fixed := "enum"
		if f.Format != nil {
			fixed = "format " + f.Format.Name
		}
		l.errorf(at["max_length"], join(path, "max_length"), "max_length %d bounds free text, and the %s already fixes the value's form; drop max_length", f.MaxLength, fixed)
	}
	if at["min_length"] != nil && f.MinLength > 0 && (f.Enum != nil || f.Format != nil) {
		fixed := "enum"
		if f.Format != nil {
			fixed = "format " + f.Format.Name
		}
		l.errorf(at["min_length"], join(path, "min_length"), "min_length %d bounds free text, and the %s already fixes the value's form; drop min_length", f.MinLength, fixed)
	}
	if f.MinLength > 0 && f.MaxLength > 0 && f.MinLength > f.MaxLength {
		l.errorf(at["min_length"], join(path, "min_length"), "min_length %d is above max_length %d; a value's length runs from min_length up to max_length, e.g. {min_length: 1, max_length: %d}", f.MinLength, f.MaxLength, f.MaxLength)
	}
	if f.Pattern != nil && at["example"] == nil {
		l.errorf(n, join(path, "example"), "missing; pattern %q needs one value that matches it, so callers see the form as well as the rule, e.g. {pattern: '^C-[0-9]+$', example: C-1042}", f.Pattern.String())
	}
	switch {
	case at["example"] != nil && f.Enum != nil:
		l.errorf(at["example"], join(path, "example"), "example %q is not needed: the enum lists every permitted value already; drop it", f.Example)
	case at["example"] != nil && f.Example != "":
		probe := *f
		probe.In = InQuery // the example is written as text
		probe.Required = true
		probe.RuleText = "" // the author reads the pattern itself
		if !probe.Check(Text(f.Example)) {
			probe.Example = probe.defaultExample()
			l.errorf(at["example"], join(path, "example"), "example %q does not satisfy the field's own rule: %s", f.Example, probe.ruleText())
		}
	}
	if f.Example == "" {
		f.Example = f.defaultExample()
	}
	if f.Const != "" && f.RuleText == "" {
		f.RuleText = "must be " + f.Const
	}
	l.valueSet(f, n, path, at)
	if f.Catalog != nil && at["example"] != nil && !slices.Contains(f.Enum, f.Example) {
		// Checked once the catalog's values are the field's.
		eg := f.Catalog.Example
		if eg == "" && len(f.Enum) > 0 {
			eg = f.Enum[0]
		}
		l.errorf(at["example"], join(path, "example"), "example %q is not one of the catalog's permitted values; drop it, or use one, e.g. %q", f.Example, eg)
	}
	f.Rule = f.ruleText()
}

// valueSet completes an enum or catalog field: its hidden values and
// aliases, the cost of listing it, and its suggestion set.
func (l *loader) valueSet(f *Field, n *yaml.Node, path string, at map[string]*yaml.Node) {
	if c := f.Catalog; c != nil {
		f.Enum = c.Values
		f.Hidden = append(slices.Clip(c.Hidden), f.Hidden...)
		if f.RuleText == "" {
			f.RuleText = c.Rule
		}
		if f.Example == "" || at["example"] == nil {
			f.Example = c.Example
		}
		if len(c.Aliases)+len(f.Aliases) > 0 {
			// The field's own aliases win, over a catalog's that differs
			// only in case too.
			own := make(map[string]bool, len(f.Aliases))
			for a := range f.Aliases {
				own[strings.ToLower(a)] = true
			}
			merged := make(map[string]string, len(c.Aliases)+len(f.Aliases))
			for a, v := range c.Aliases {
				if !own[strings.ToLower(a)] {
					merged[a] = v
				}
			}
			maps.Copy(merged, f.Aliases)
			f.Aliases = merged
		}
	}
	if f.Enum == nil {
		for _, k := range []string{"hidden", "aliases", "list_tokens"} {
			if at[k] != nil {
				l.errorf(at[k], join(path, k), "%s applies to a set of permitted values; add enum: or catalog:", k)
			}
		}
		l.ruleWithoutSet(f, path, at)
		return
	}
	// Sets, not lists: a file near MaxFileSize may list 500,000 values.
	inEnum, inHidden := setOf(f.Enum), setOf(f.Hidden)
	for _, h := range f.Hidden {
		if inEnum[h] {
			l.errorf(at["hidden"], join(path, "hidden"), "%q is listed in the enum too; a hidden value is accepted but never shown, so keep it in one place", h)
		}
	}
	f.members = make(map[string]bool, len(f.Enum)+len(f.Hidden))
	for _, v := range f.Enum {
		f.members[v] = true
	}
	for _, v := range f.Hidden {
		f.members[v] = true
	}
	folded := make(map[string]string, len(f.members))
	for v := range f.members {
		folded[strings.ToLower(v)] = v
	}
	for _, alias := range slices.Sorted(maps.Keys(f.Aliases)) {
		target := f.Aliases[alias]
		where, node := join(path, "aliases."+alias), at["aliases"]
		if node == nil {
			where, node = join(path, "catalog"), at["catalog"]
		}
		switch {
		case inHidden[target]:
			l.errorf(node, where, "alias %q leads to hidden value %q; suggestions must not reveal it, so drop the alias or unhide the value", alias, target)
		case !inEnum[target]:
			hint := ""
			if c := closestName(target, f.Enum); c != "" {
				hint = fmt.Sprintf("; did you mean %q?", c)
			}
			l.errorf(node, where, "alias %q leads to %q, which is not a permitted value%s", alias, target, hint)
		case folded[strings.ToLower(alias)] != "":
			l.errorf(node, where, "alias %q is itself a permitted value (%q); an alias must be another name", alias, folded[strings.ToLower(alias)])
		}
	}
	f.Suggest = suggest.NewSet(f.Enum, f.Aliases)
	// Of aliases alike but for case, the one that sorts first wins, as in
	// suggest.NewSet: every load of a file answers the same.
	f.aliasesFolded = make(map[string]string, len(f.Aliases))
	for _, alias := range slices.Sorted(maps.Keys(f.Aliases)) {
		if k := strings.ToLower(alias); f.aliasesFolded[k] == "" {
			f.aliasesFolded[k] = f.Aliases[alias]
		}
	}
	if at["list_tokens"] == nil {
		// The file's limit, DefaultListTokens unless it set one: 0
		// included, which lists no set.
		f.ListBudget = l.cfg.Limits.ListTokens
	}
	f.ListCost = Tokens(listing(f.Enum))
	f.Listed = f.ListCost >= 0 && f.ListCost <= f.ListBudget
	if !f.Listed && f.RuleText == "" {
		f.RuleText = fmt.Sprintf("must be one of %d permitted values", len(f.Enum))
	}
}

// ruleWithoutSet refuses a rule: on a field that is neither a set nor a
// pattern: a format or a max_length is worded by signpost already, and a
// field with no constraint has nothing to word.
func (l *loader) ruleWithoutSet(f *Field, path string, at map[string]*yaml.Node) {
	n := at["rule"]
	if n == nil || f.Pattern != nil || at["catalog"] != nil {
		return
	}
	const words = "rule words a pattern or a set of permitted values"
	switch {
	case f.Format != nil:
		l.errorf(n, join(path, "rule"), "%s; format %s words this field already (%s); drop rule", words, f.Format.Name, f.constraintText())
	case f.MaxLength > 0:
		l.errorf(n, join(path, "rule"), "%s, and this field has max_length only (%s); add pattern: with an example, or drop rule", words, f.constraintText())
	case at["pattern"] == nil:
		l.errorf(n, join(path, "rule"), "%s, and this field has neither; add pattern: with an example, enum: or catalog:, or drop rule", words)
	}
}

// listing is how a message lists a permitted set.
func listing(values []string) string { return "allowed values: " + strings.Join(values, ", ") }

// andList joins words as prose: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func listOrNone(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	return "{" + strings.Join(vs, "}, {") + "}"
}

func (l *loader) enum(n *yaml.Node, path string) []string {
	n = l.deref(n)
	const want = "must be a non-empty list of strings, e.g. [open, pending, closed]"
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		l.errorf(n, path, "%s; found %s", want, describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	seen := make(map[string]bool, len(n.Content))
	for i, item := range n.Content {
		item = l.deref(item)
		p := path + "[" + strconv.Itoa(i) + "]"
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" || item.Value == "" {
			l.errorf(item, p, "%s; found %s", want, describe(item))
			continue
		}
		if item.Tag != "!!str" {
			l.errorf(item, p, "%s is read as %s, not text; quote it, e.g. %q", item.Value, tagNoun(item.Tag), item.Value)
			continue
		}
		if seen[item.Value] {
			l.errorf(item, p, "%q is listed twice; list each permitted value once", item.Value)
			continue
		}
		seen[item.Value] = true
		out = append(out, item.Value)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// setOf returns the members of list as a set.
func setOf(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, v := range list {
		set[v] = true
	}
	return set
}

// tagNoun names what YAML read a plain scalar as.
func tagNoun(tag string) string {
	switch tag {
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!timestamp":
		return "a timestamp"
	}
	return "type " + tag
}

func reError(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

func (l *loader) errorRules(r *Route, n *yaml.Node, path string) {
	n = l.deref(n)
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "must be a list of error rules, e.g.\n        - match: {status: 400, json: error, equals: Invalid status}\n          code: invalid_status\n          field: status\nfound %s", describe(n))
		return
	}
	for i, item := range n.Content {
		p := path + "[" + strconv.Itoa(i) + "]"
		e := l.errorRule(r, item, p)
		if e == nil {
			continue
		}
		e.Index = len(r.Errors)
		e.Pos = Pos{l.deref(item).Line, l.deref(item).Column}
		r.Errors = append(r.Errors, e)
		r.concerns.union(e.Match.Status)
	}
}

func (l *loader) errorRule(r *Route, n *yaml.Node, path string) *ErrorRule {
	pairs := l.mapping(n, path, ruleKeys, "an error rule mapping with match: and code:")
	if pairs == nil {
		return nil
	}
	e := &ErrorRule{}
	ok := true
	var matchSeen, codeSeen bool
	pending := pendingRule{route: r, rule: e, node: l.deref(n), path: path}
	for _, kv := range pairs {
		p := join(path, kv.key)
		switch kv.key {
		case "match":
			matchSeen = true
			ok = l.match(kv.val, p, &e.Match) && ok
		case "code":
			codeSeen = true
			if s, good := l.scalar(kv.val, p, "invalid_status"); good {
				if !snakeCase.MatchString(s) {
					eg := "invalid_status"
					if sc := snakeFrom(s); snakeCase.MatchString(sc) {
						eg = sc
					}
					l.errorf(l.deref(kv.val), p, "code %q must be snake_case, e.g. %s", s, eg)
					ok = false
				}
				e.Code = s
			}
		case "field":
			if s, good := l.scalar(kv.val, p, "status"); good {
				if e.Field = r.Field(s); e.Field == nil {
					names := make([]string, len(r.Fields))
					for i, f := range r.Fields {
						names[i] = f.Name
					}
					msg := fmt.Sprintf("field %q is not declared under this route's fields", s)
					if c := closestName(s, names); c != "" {
						msg += fmt.Sprintf("; did you mean %q?", c)
					} else if len(names) > 0 {
						msg += "; declared: " + strings.Join(names, ", ")
					} else {
						msg += "; declare it, e.g. fields: {" + s + ": {enum: [a, b]}}"
					}
					l.errorf(l.deref(kv.val), p, "%s", msg)
					ok = false
				}
			}
		case "message":
			if s, good := l.scalar(kv.val, p, "an unassigned ticket cannot be closed"); good {
				if strings.TrimSpace(s) == "" {
					l.errorf(l.deref(kv.val), p, "must not be blank; say what went wrong, e.g. message: an unassigned ticket cannot be closed")
				}
				e.Message = strings.TrimSpace(s)
			}
		case "status":
			if v, good := l.integer(kv.val, p, 400, 599, "400"); good {
				e.Status = int(v)
			}
		case "retryable":
			if b, good := l.boolean(kv.val, p); good {
				e.Retryable = &b
			}
		case "retry_after":
			pending.retryNode = l.deref(kv.val)
			if v, good := l.integer(kv.val, p, 1, 86400, "5"); good {
				e.RetryAfter = int(v)
			}
		case "next_call":
			if pending.next = l.callRef(kv.val, p, "assign_ticket(ticket_id)"); pending.next == nil {
				ok = false
			}
		case "futile":
			if s, good := l.scalar(kv.val, p, "choose another slot with list_slots"); good {
				if strings.TrimSpace(s) == "" {
					l.errorf(l.deref(kv.val), p, "must say what to do instead, e.g. futile: choose another slot with list_slots")
				}
				e.Futile = strings.TrimSpace(s)
			}
		}
		if kv.key == "message" {
			pending.msgNode = l.deref(kv.val)
		}
	}
	if !matchSeen {
		l.errorf(n, join(path, "match"), "missing; an error rule says which upstream responses it means, e.g. match: {status: 400, json: error, equals: Invalid status}")
		ok = false
	}
	if !codeSeen {
		l.errorf(n, join(path, "code"), "missing; an error rule gives the stable code callers see, e.g. code: invalid_status")
		ok = false
	}
	if codeSeen && !containsPair(pairs, "field") && !containsPair(pairs, "message") {
		l.errorf(n, join(path, "message"), "missing; a rule that names no field must say what went wrong, e.g. message: an unassigned ticket cannot be closed")
		ok = false
	}
	if !ok {
		return nil
	}
	l.rules = append(l.rules, pending)
	return e
}

// snakeFrom spells a name such as InvalidStatus or invalid-status in
// snake_case, for a suggestion.
func snakeFrom(s string) string {
	var b strings.Builder
	prevLower := false
	for _, c := range s {
		switch {
		case 'A' <= c && c <= 'Z':
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(c + 'a' - 'A')
			prevLower = false
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			b.WriteRune(c)
			prevLower = true
		default:
			b.WriteByte('_')
			prevLower = false
		}
	}
	return b.String()
}

var statusClass = regexp.MustCompile(`^[245]xx$`)

func (l *loader) match(n *yaml.Node, path string, m *Match) bool {
	pairs := l.mapping(n, path, matchKeys, "a match mapping, e.g. {status: 400, json: error, equals: Invalid status}")
	if pairs == nil {
		return false
	}
	ok := true
	var statusSeen, jsonSeen bool
	var compare []string
	for _, kv := range pairs {
		p := join(path, kv.key)
		v := l.deref(kv.val)
		switch kv.key {
		case "status":
			statusSeen = true
			ok = l.statuses(v, p, &m.Status) && ok
		case "json":
			jsonSeen = true
			if s, good := l.scalar(v, p, "error"); good && s == "" {
				l.errorf(v, p, "must not be empty; name a path into the upstream's JSON body, e.g. json: error or json: errors.0.message")
				ok = false
			} else if good {
				m.JSON = s
			} else {
				ok = false
			}
		case "equals", "not_equals", "contains":
			compare = append(compare, kv.key)
			if s, good := l.scalar(v, p, "Invalid status"); good {
				switch kv.key {
				case "equals":
					m.Equals = &s
				case "not_equals":
					m.NotEquals = &s
				default:
					m.Contains = &s
				}
			} else {
				ok = false
			}
		case "regex", "body":
			if kv.key == "regex" {
				compare = append(compare, kv.key)
			}
			s, good := l.scalar(v, p, `'(?i)invalid status'`)
			if !good {
				ok = false
				continue
			}
			re, err := regexp.Compile(s)
			if err != nil {
				l.errorf(v, p, "regex %q does not compile as RE2: %v", s, reError(err))
				ok = false
				continue
			}
			if kv.key == "regex" {
				m.Regex = re
			} else {
				m.Body = re
			}
		}
	}
	if !statusSeen {
		l.errorf(l.deref(n), join(path, "status"), "missing; a match names the upstream status, e.g. status: 400, status: [400, 422] or status: 4xx")
		ok = false
	}
	if len(compare) > 1 {
		l.errorf(l.deref(n), path, "%s each compare the JSON value; use one of them", strings.Join(compare, " and "))
		ok = false
	}
	if len(compare) == 1 && !jsonSeen {
		l.errorf(l.deref(n), join(path, "json"), "missing; %s compares the value at a JSON path, e.g. json: error", compare[0])
		ok = false
	}
	if statusSeen && m.Status.anySuccess() && !jsonSeen && m.Body == nil {
		l.errorf(l.deref(n), path, "status %s is a success, which matches only by what its body says, or every success would be an error; add a condition, e.g. {status: 200, json: result, not_equals: success}", m.Status)
		ok = false
	}
	return ok
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// statuses reads a status, a class like 4xx, or a list of them.
func (l *loader) statuses(n *yaml.Node, path string, set *statusSet) bool {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			l.errorf(n, path, "must list at least one status, e.g. [400, 422]")
			return false
		}
	}
	ok := true
	for i, it := range items {
		it = l.deref(it)
		p := path
		if n.Kind == yaml.SequenceNode {
			p += "[" + strconv.Itoa(i) + "]"
		}
		switch {
		case it.Kind == yaml.ScalarNode && it.Tag == "!!int":
			st, err := strconv.Atoi(it.Value)
			if err != nil || st < minStatus || st > maxStatus || 300 <= st && st < 400 {
				l.errorf(it, p, "status %s must be an error status from 400 to 599, a success from 200 to 299 that carries an error, or a class like 4xx", it.Value)
				ok = false
				continue
			}
			set.add(st)
		case it.Kind == yaml.ScalarNode && it.Tag == "!!str" && isDigits(it.Value):
			l.errorf(it, p, "status %q is quoted, which makes it text; write the number unquoted, e.g. status: %s", it.Value, it.Value)
			ok = false
		case it.Kind == yaml.ScalarNode && statusClass.MatchString(strings.ToLower(it.Value)):
			base := int(it.Value[0]-'0') * 100
			for st := base; st < base+100; st++ {
				set.add(st)
			}
		default:
			l.errorf(it, p, "status %s must be an error status from 400 to 599, a success from 200 to 299 that carries an error, a class like 4xx, or a list of them, e.g. [400, 422]", describe(it))
			ok = false
		}
	}
	return ok
}
