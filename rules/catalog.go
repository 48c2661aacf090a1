package rules

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Catalog is a permitted-value set too large to write inline, kept in a
// file of its own and referenced by fields.
type Catalog struct {
	File string
	// Rule states the constraint in words, for messages that cannot list
	// the values, e.g. "must be an ISO 3166-1 alpha-2 country code, two letters".
	Rule    string
	Example string
	Values  []string          // listed and suggested, in declared order
	Hidden  []string          // accepted, never listed or suggested
	Aliases map[string]string // other names callers send -> value
}

var catalogKeys = []string{"rule", "example", "values", "hidden", "aliases"}

// catalog loads the catalog a field names, relative to the rule file,
// once per load however many fields name it.
func (l *loader) catalog(n *yaml.Node, path string) *Catalog {
	name, ok := l.scalar(n, path, "catalogs/iso3166-alpha2.yaml")
	if !ok {
		return nil
	}
	file := name
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(l.file), name)
	}
	if c, seen := l.catalogs[file]; seen {
		return c
	}
	data, err := readFile(file)
	if err != nil {
		where := ""
		if file != name {
			where = " (looked for " + file + ")"
		}
		l.errorf(l.deref(n), path, "catalog %q%s: %s", name, where, strings.Replace(err.Error(), "the rule file", "the catalog", 1))
		l.catalogs[file] = nil
		return nil
	}
	sub := &loader{file: file, catalogs: l.catalogs, isCatalog: true}
	c := sub.parseCatalog(data)
	l.problems = append(l.problems, sub.problems...)
	if len(sub.problems) > 0 {
		c = nil
	}
	l.catalogs[file] = c
	return c
}

func (l *loader) parseCatalog(data []byte) *Catalog {
	root := l.document(data, "a catalog: a mapping with rule:, example: and values:")
	if root == nil {
		return nil
	}
	c := &Catalog{File: l.file}
	seen := map[string]*yaml.Node{}
	for _, kv := range l.mapping(root, "", catalogKeys, "a catalog mapping") {
		switch kv.key {
		case "rule":
			c.Rule, _ = l.scalar(kv.val, kv.key, "must be an ISO 3166-1 alpha-2 country code, two letters")
		case "example":
			c.Example, _ = l.scalar(kv.val, kv.key, "GB")
		case "values":
			c.Values = l.enum(kv.val, kv.key)
		case "hidden":
			c.Hidden = l.enum(kv.val, kv.key)
		case "aliases":
			c.Aliases = l.aliases(kv.val, kv.key)
		}
		seen[kv.key] = l.deref(kv.val)
	}
	for _, k := range []string{"rule", "example", "values"} {
		if seen[k] == nil {
			l.errorf(root, k, "missing; a catalog states its rule in words, one example and its values, e.g.\n  rule: must be an ISO 3166-1 alpha-2 country code, two letters\n  example: GB\n  values: [AD, AE, AF]")
		}
	}
	if c.Example != "" && c.Values != nil && !contains(c.Values, c.Example) {
		l.errorf(seen["example"], "example", "example %q is not one of the catalog's values; give one that is, e.g. example: %s", c.Example, c.Values[0])
	}
	return c
}

// aliases reads a mapping of other names to permitted values.
func (l *loader) aliases(n *yaml.Node, path string) map[string]string {
	pairs := l.mapping(n, path, nil, "a mapping of other names to permitted values, e.g. {UK: GB, high: p1}")
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		if v, ok := l.scalar(kv.val, join(path, kv.key), "GB"); ok {
			out[kv.key] = v
		}
	}
	return out
}
