package rules

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/suggest"
	"gopkg.in/yaml.v3"
)

// MaxFileSize is the largest rule file Load reads.
const MaxFileSize = 4 << 20

// maxNodes bounds the YAML nodes one load visits when a file's aliases
// would add more than that many to those it holds, so that aliases that
// expand exponentially fail fast instead of exhausting memory. A file whose
// aliases add fewer is walked whole: MaxFileSize bounds it.
const maxNodes = 200_000

// Load reads, validates and compiles the rule file at path. On any mistake
// it returns a nil Config and Problems listing all of them.
func Load(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, Problems{{File: path, Message: err.Error()}}
	}
	return Parse(path, data)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the rule file: %v", pathErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the rule file: %v", pathErr(err))
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("the rule file is larger than %s; split large value sets out of it", SizeText(MaxFileSize))
	}
	return data, nil
}

// pathErr drops the operation and path from err, which the problem's file
// name already gives.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse validates and compiles a rule file held in memory; file names it in
// problems.
func Parse(file string, data []byte) (*Config, error) {
	l := &loader{file: file, catalogs: map[string]*Catalog{}}
	cfg := l.parse(data)
	if len(l.problems) > 0 {
		if l.exhausted > 0 {
			// What follows the budget problem comes from a partial walk.
			l.problems = l.problems[:l.exhausted]
		}
		// File order: the rule file first, then each catalog it names.
		slices.SortStableFunc(l.problems, func(a, b Problem) int {
			other := func(p Problem) int {
				if p.File == file {
					return 0
				}
				return 1
			}
			return cmp.Or(cmp.Compare(other(a), other(b)), strings.Compare(a.File, b.File),
				cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
		})
		// A node reached through several aliases holds one mistake, not
		// one per path to it: keep the first path the walk took.
		type at struct {
			line, col int
			msg       string
		}
		seen := map[at]bool{}
		l.problems = slices.DeleteFunc(l.problems, func(p Problem) bool {
			k := at{p.Line, p.Column, p.Message}
			dup := p.Line > 0 && seen[k]
			seen[k] = true
			return dup
		})
		return nil, l.problems
	}
	return cfg, nil
}

type loader struct {
	file     string
	problems Problems
	visits   int
	// budget is how many visits the walk may make: maxNodes, or no bound
	// for a document whose aliases add fewer than maxNodes nodes.
	budget int
	// exhausted is len(problems) once the node budget ran out, else zero.
	exhausted int
	// open holds the mappings being walked, to catch a merge key that
	// merges a mapping into itself.
	open map[*yaml.Node]bool
	// mergeAt is the outermost merge key being expanded, and mergePath its
	// key path: where an exhausted budget is reported.
	mergeAt   *yaml.Node
	mergePath string
	// lookups and rules wait for every route to load, to resolve the
	// calls they name.
	lookups []pendingLookup
	rules   []pendingRule
	// catalogs caches the catalogs loaded so far, by path; nil for one
	// that failed.
	catalogs map[string]*Catalog
	// isCatalog is set while loading a catalog rather than a rule file.
	isCatalog bool
	cfg       *Config
}

// errorfAt is errorf at a position already read.
func (l *loader) errorfAt(at Pos, path, format string, args ...any) {
	l.errorf(&yaml.Node{Line: at.Line, Column: at.Column}, path, format, args...)
}

func (l *loader) errorf(n *yaml.Node, path, format string, args ...any) {
	p := Problem{File: l.file, Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	l.problems = append(l.problems, p)
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// parserProblems are the messages of yaml.v3's parser, as opposed to its
// scanner. For these yaml.v3 reports a 0-based line: that of the enclosing
// collection's start, or of the problem when the collection starts on the
// first line, or none when both are on the first line.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntax reports a YAML syntax error at the line yaml.v3 means.
func (l *loader) syntax(data []byte, err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if contains(parserProblems, msg) {
		line++
	}
	// At the end of a file without a final newline, yaml.v3 counts one line
	// more than there is.
	lines := splitLines(data)
	line = min(line, len(lines))
	if strings.HasPrefix(msg, "did not find expected ',' or ") {
		msg += "; inside {} or [], quote a value that holds braces, brackets or commas, e.g. {path: '/tickets/{ticket_id}'}"
	}
	if line > 0 {
		text := lines[line-1]
		indent := text[:len(text)-len(bytes.TrimLeft(text, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			msg += "; this line is indented with a tab, and YAML indents with spaces only"
		}
	}
	l.problems = append(l.problems, Problem{File: l.file, Line: line, Message: "YAML syntax: " + msg})
}

func (l *loader) parse(data []byte) *Config {
	root := l.document(data, "it needs at least a routes: mapping, e.g.\n"+exampleFile)
	if root == nil {
		return nil
	}
	cfg := &Config{File: l.file, Listen: DefaultListen, Admin: DefaultAdmin, Format: FormatJSON, Unmatched: Wrap, Mode: Enforce,
		Learn:  Learn{CallerHeader: DefaultCallerHeader, Callers: DefaultCallers, MinCount: DefaultMinCount, RecoveryWindow: DefaultRecoveryWindow},
		Limits: Limits{ErrorBody: DefaultErrorBody, RequestBody: DefaultRequestBody, Received: DefaultReceived, Errors: DefaultErrors, ListTokens: DefaultListTokens}}
	l.cfg = cfg
	if l.deref(root).Kind != yaml.MappingNode {
		l.errorf(root, "", "the rule file must be a mapping of top-level keys (%s); found %s", strings.Join(topKeys, ", "), describe(l.deref(root)))
		return cfg
	}
	var routes *yaml.Node
	for _, kv := range l.mapping(root, "", topKeys, "a mapping of top-level keys") {
		switch kv.key {
		case "upstream":
			cfg.Upstream = l.upstream(kv.val, kv.key)
		case "listen":
			cfg.Listen = l.address(kv.val, kv.key, DefaultListen)
		case "admin":
			cfg.Admin = l.address(kv.val, kv.key, DefaultAdmin)
		case "limits":
			l.limits(kv.val, kv.key, &cfg.Limits)
		case "format":
			if v, ok := l.choice(kv.val, kv.key, formatChoices); ok {
				cfg.Format = BodyFormat(v)
			}
		case "unmatched":
			if v, ok := l.choice(kv.val, kv.key, policyChoices); ok {
				cfg.Unmatched, cfg.UnmatchedPos = Policy(v), Pos{kv.keyNode.Line, kv.keyNode.Column}
			}
		case "mode":
			if v, ok := l.choice(kv.val, kv.key, enforcementChoices); ok {
				cfg.Mode = Enforcement(v)
			}
		case "learn":
			l.learn(kv.val, kv.key, &cfg.Learn)
		case "routes":
			routes = kv.val
		}
	}
	if routes == nil {
		// Observing needs no route: it learns the API's operations from
		// the traffic, for signpost draft to declare.
		if cfg.Mode != Observe {
			l.errorf(root, "routes", "missing; a rule file declares at least one route, e.g.\n%s\nor, to learn them from traffic first, sets mode: observe", exampleFile)
		}
		return cfg
	}
	l.routes(routes, "routes")
	l.link()
	return cfg
}

func (l *loader) noun() string {
	if l.isCatalog {
		return "catalog"
	}
	return "rule file"
}

// document parses data as one YAML document and returns its root node, or
// nil after reporting why there is none; needs says what an empty file
// lacks.
func (l *loader) document(data []byte, needs string) *yaml.Node {
	if i := invalidUTF8(data); i >= 0 {
		lines := splitLines(data[:i])
		line, col := len(lines), 1+utf8.RuneCount(lines[len(lines)-1])
		l.problems = append(l.problems, Problem{File: l.file, Line: line, Column: col,
			Message: fmt.Sprintf("byte 0x%02x is not valid UTF-8; save the %s as UTF-8", data[i], l.noun())})
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		l.syntax(data, err)
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null" {
		if next := (yaml.Node{}); dec.Decode(&next) == nil {
			l.errorf(&next, "", "the %s's first YAML document is empty, and a second starts here; a %s holds one document, so remove the --- line before it", l.noun(), l.noun())
			return nil
		}
		l.errorf(nil, "", "the %s is empty; %s", l.noun(), needs)
		return nil
	}
	l.budget = maxNodes
	if own := countNodes(doc.Content[0]); expandedNodes(doc.Content[0], own+maxNodes+1, map[*yaml.Node]int{}) <= own+maxNodes {
		l.budget = math.MaxInt
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		l.errorf(&next, "", "a second YAML document starts here; a %s holds one document, so remove this --- line or split the file", l.noun())
	case err != io.EOF:
		l.syntax(data, err)
	}
	return doc.Content[0]
}

const exampleFile = `  routes:
    update_ticket:
      method: PATCH
      path: /tickets/{ticket_id}
      fields:
        status: {enum: [open, pending, closed]}
      errors:
        - match: {status: 400, json: error, equals: Invalid status}
          code: invalid_status
          field: status`

var (
	topKeys    = []string{"upstream", "listen", "admin", "limits", "format", "unmatched", "mode", "learn", "routes"}
	learnKeys  = []string{"caller_header", "callers", "min_count", "recovery_window"}
	limitKeys  = []string{"error_body", "request_body", "received", "errors", "list_tokens", "repeats"}
	repeatKeys = []string{"failures", "transient"}
	routeKeys  = []string{"method", "path", "when", "body", "handshake", "validate", "format", "unmatched", "mode", "repeats", "fields", "errors", "description"}
	fieldKeys  = []string{"in", "key", "required", "enum", "const", "catalog", "format", "pattern", "example", "min", "max", "max_length", "min_length",
		"hidden", "aliases", "rule", "list_tokens", "lookup", "description"}
	ruleKeys  = []string{"match", "code", "field", "message", "status", "retryable", "retry_after", "next_call", "futile"}
	matchKeys = []string{"status", "json", "equals", "not_equals", "contains", "regex", "body"}
	methods   = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"}
	locations = []string{string(InBody), string(InForm), string(InXML), string(InQuery), string(InPath), string(InHeader)}
)

// splitLines splits data into lines at the breaks YAML counts: \n, \r\n,
// a lone \r, NEL, LS and PS. There is always at least one line.
func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for {
		i := bytes.IndexAny(data, "\r\n\u0085\u2028\u2029")
		if i < 0 {
			return append(lines, data)
		}
		lines = append(lines, data[:i])
		_, size := utf8.DecodeRune(data[i:])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			size = 2
		}
		data = data[i+size:]
	}
}

func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// pair is one key of a mapping with its value, aliases resolved.
type pair struct {
	key      string
	keyNode  *yaml.Node
	val      *yaml.Node
	mergedAt *yaml.Node // the "<<" key it came from, if merged
}

// deref follows YAML aliases, counting every node visited against maxNodes.
func (l *loader) deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	l.visits++
	return n
}

// countNodes counts the nodes of the tree at n, each once: aliases are
// counted, not followed.
func countNodes(n *yaml.Node) int {
	total := 1
	for _, c := range n.Content {
		total += countNodes(c)
	}
	return total
}

// expandedNodes counts the nodes a walk of n meets when it follows every
// alias, up to limit. Anchored nodes, the only ones aliases lead to, are
// counted once and remembered in memo; an alias inside the node it names
// expands without end, and counts as limit.
func expandedNodes(n *yaml.Node, limit int, memo map[*yaml.Node]int) int {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1
		}
		return expandedNodes(n.Alias, limit, memo)
	}
	if n.Anchor != "" {
		switch v, seen := memo[n]; {
		case seen && v < 0:
			return limit
		case seen:
			return v
		}
		memo[n] = -1 // open
	}
	total := 1
	for _, c := range n.Content {
		if total += expandedNodes(c, limit, memo); total >= limit {
			total = limit
			break
		}
	}
	if n.Anchor != "" {
		memo[n] = total
	}
	return total
}

func (l *loader) overBudget(n *yaml.Node, path string) bool {
	if l.exhausted > 0 {
		return true
	}
	if l.visits <= cmp.Or(l.budget, maxNodes) {
		return false
	}
	if l.mergeAt != nil {
		n, path = l.mergeAt, l.mergePath
	}
	l.errorf(n, path, "the file expands to more than %d YAML nodes (aliases nested too deep?); write the repeated parts out once", maxNodes)
	l.exhausted = len(l.problems)
	return true
}

// mapping returns the pairs of a mapping node in order, with "<<" merge
// keys expanded in place. It reports a node that is not a mapping, keys
// outside allowed (when allowed is non-nil) and duplicate keys; what
// describes the mapping wanted, for the message.
func (l *loader) mapping(n *yaml.Node, path string, allowed []string, what string) []pair {
	n = l.deref(n)
	if l.overBudget(n, path) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.errorf(n, path, "must be %s; found %s", what, describe(n))
		return nil
	}
	if l.open == nil {
		l.open = map[*yaml.Node]bool{}
	}
	l.open[n] = true
	defer delete(l.open, n)
	var out []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" {
			out = append(out, l.merge(k, v, path)...)
			continue
		}
		key := k.Value
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, path, "keys must be plain names; found %s", describe(l.deref(k)))
			continue
		}
		if first, dup := seen[key]; dup {
			l.errorf(k, join(path, key), "duplicate key %q; first set at line %d; keep one of them", key, first.Line)
			continue
		}
		seen[key] = k
		if allowed != nil && !contains(allowed, key) {
			l.unknownKey(k, path, key, allowed)
			continue
		}
		out = append(out, pair{key: key, keyNode: k, val: v})
	}
	// Merged keys give way to keys written in the mapping itself.
	kept := out[:0]
	for _, p := range out {
		if p.mergedAt != nil {
			if _, explicit := seen[p.key]; explicit {
				continue
			}
			if allowed != nil && !contains(allowed, p.key) {
				l.unknownKey(p.keyNode, path, p.key, allowed)
				continue
			}
			seen[p.key] = p.keyNode
		}
		kept = append(kept, p)
	}
	return kept
}

func (l *loader) merge(k, v *yaml.Node, path string) []pair {
	if l.mergeAt == nil {
		l.mergeAt, l.mergePath = k, join(path, "<<")
		defer func() { l.mergeAt, l.mergePath = nil, "" }()
	}
	v = l.deref(v)
	var sources []*yaml.Node
	if v.Kind == yaml.SequenceNode {
		for _, s := range v.Content {
			sources = append(sources, l.deref(s))
		}
	} else {
		sources = []*yaml.Node{v}
	}
	var out []pair
	for _, s := range sources {
		if s.Kind != yaml.MappingNode {
			l.errorf(k, join(path, "<<"), "a merge key takes an alias of a mapping, or a list of them, e.g. <<: *defaults; found %s", describe(s))
			continue
		}
		if l.open[s] {
			l.errorf(k, join(path, "<<"), "<<: *%s merges a mapping into itself; merge a separate mapping, e.g. <<: *defaults", s.Anchor)
			continue
		}
		for _, p := range l.mapping(s, path, nil, "a mapping") {
			if !containsPair(out, p.key) {
				p.mergedAt = k
				out = append(out, p)
			}
		}
	}
	return out
}

func containsPair(ps []pair, key string) bool {
	for _, p := range ps {
		if p.key == key {
			return true
		}
	}
	return false
}

func (l *loader) unknownKey(k *yaml.Node, path, key string, allowed []string) {
	if s := closestName(key, allowed); s != "" {
		l.errorf(k, path, "unknown key %q; did you mean %q?", key, s)
		return
	}
	l.errorf(k, path, "unknown key %q; valid keys here: %s", key, strings.Join(allowed, ", "))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			return "an empty mapping"
		}
		return "a mapping"
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return "an empty list"
		}
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!str":
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "an empty document"
}

// scalar returns the text of a scalar node, reporting anything else.
func (l *loader) scalar(n *yaml.Node, path, example string) (string, bool) {
	n = l.deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errorf(n, path, "must be a single value, e.g. %s; found %s", example, describe(n))
		return "", false
	}
	return n.Value, true
}

func (l *loader) boolean(n *yaml.Node, path string) (bool, bool) {
	n = l.deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.errorf(n, path, "must be true or false; found %s", describe(n))
		return false, false
	}
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", true
}

func (l *loader) number(n *yaml.Node, path, example string) (float64, bool) {
	n = l.deref(n)
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, true
		}
	}
	l.errorf(n, path, "must be a number, e.g. %s; found %s", example, describe(n))
	return 0, false
}

func (l *loader) integer(n *yaml.Node, path string, lo, hi int64, example string) (int64, bool) {
	n = l.deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			if i >= lo && i <= hi {
				return i, true
			}
			l.errorf(n, path, "%d is out of range; must be from %d to %d, e.g. %s", i, lo, hi, example)
			return 0, false
		}
	}
	l.errorf(n, path, "must be a whole number from %d to %d, e.g. %s; found %s", lo, hi, example, describe(n))
	return 0, false
}

// size reads a byte count: a YAML integer (65536, 0x10000, 65_536), or
// text ParseSize reads (64KiB, 1 MiB).
func (l *loader) size(n *yaml.Node, path string, lo, hi int64, example string) int64 {
	n = l.deref(n)
	outOfRange := func() int64 {
		l.errorf(n, path, "%s is out of range; must be from %s to %s, e.g. %s", n.Value, SizeText(lo), SizeText(hi), example)
		return 0
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange):
			return outOfRange()
		case err != nil:
		case v < lo || v > hi:
			return outOfRange()
		default:
			return v
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		v, err := ParseSize(n.Value)
		switch {
		case errors.Is(err, ErrSizeRange):
			return outOfRange()
		case err != nil:
		case v < lo || v > hi:
			return outOfRange()
		default:
			return v
		}
	}
	l.errorf(n, path, "%s; found %s", SizeRule(example), describe(n))
	return 0
}

func (l *loader) upstream(n *yaml.Node, path string) *url.URL {
	s, ok := l.scalar(n, path, "http://127.0.0.1:8081")
	if !ok {
		return nil
	}
	u, err := ParseUpstream(s)
	if err != nil {
		l.errorf(l.deref(n), path, "%v", err)
		return nil
	}
	return u
}

// ParseUpstream checks an upstream base URL, from a rule file or the
// command line.
func ParseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q is not an upstream base URL; must be an absolute http or https URL without query or fragment, e.g. http://127.0.0.1:8081", s)
	}
	return u, nil
}

func (l *loader) address(n *yaml.Node, path, example string) string {
	s, ok := l.scalar(n, path, example)
	if !ok {
		return example
	}
	if err := CheckAddress(s); err != nil {
		l.errorf(l.deref(n), path, "%v", err)
	}
	return s
}

// CheckAddress checks a listen address, from a rule file or the command
// line.
func CheckAddress(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err == nil {
		var p uint64
		if p, err = strconv.ParseUint(port, 10, 16); err == nil && p <= 65535 {
			return nil
		}
	}
	return fmt.Errorf("%q is not a listen address; must be host:port, e.g. 127.0.0.1:8080 or :8080", s)
}

func (l *loader) limits(n *yaml.Node, path string, lim *Limits) {
	for _, kv := range l.mapping(n, path, limitKeys, "a mapping of limits, e.g. {error_body: 64KiB}") {
		p := join(path, kv.key)
		switch kv.key {
		case "error_body":
			if v := l.size(kv.val, p, 1<<10, 16<<20, "64KiB"); v > 0 {
				lim.ErrorBody = v
			}
		case "request_body":
			if v := l.size(kv.val, p, 1<<10, 64<<20, "1MiB"); v > 0 {
				lim.RequestBody = v
			}
		case "received":
			if v, ok := l.integer(kv.val, p, 8, 1024, "64"); ok {
				lim.Received = int(v)
			}
		case "errors":
			if v, ok := l.integer(kv.val, p, 1, 100, "10"); ok {
				lim.Errors = int(v)
			}
		case "list_tokens":
			if v, ok := l.integer(kv.val, p, 0, 100000, "60"); ok {
				lim.ListTokens = int(v)
			}
		case "repeats":
			l.repeats(kv.val, p, &lim.Repeats)
		}
	}
}

// repeats reads limits.repeats: off, or a mapping of the counts.
func (l *loader) repeats(n *yaml.Node, path string, r *Repeats) {
	if off, ok := l.off(n); ok {
		r.Off = off
		return
	}
	for _, kv := range l.mapping(n, path, repeatKeys, "off, or a mapping of counts, e.g. {failures: 2, transient: 3}") {
		p := join(path, kv.key)
		v, ok := l.integer(kv.val, p, 2, 100, map[string]string{"failures": "2", "transient": "3"}[kv.key])
		if !ok {
			continue
		}
		if kv.key == "failures" {
			r.Failures = int(v)
		} else {
			r.Transient = int(v)
		}
	}
}

// off reports whether n is the scalar off, and whether it is a scalar
// that says off or on at all: YAML 1.1 reads off as false.
func (l *loader) off(n *yaml.Node) (bool, bool) {
	n = l.deref(n)
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	switch n.Value {
	case "off", "false":
		return true, true
	}
	return false, false
}

func (l *loader) learn(n *yaml.Node, path string, learn *Learn) {
	for _, kv := range l.mapping(n, path, learnKeys, "a mapping, e.g. {caller_header: X-Session-Id, min_count: 3}") {
		p := join(path, kv.key)
		switch kv.key {
		case "caller_header":
			if s, ok := l.scalar(kv.val, p, DefaultCallerHeader); ok {
				if !headerName.MatchString(s) {
					l.errorf(l.deref(kv.val), p, "%q is not a header name; use letters, digits and dashes, e.g. %s", s, DefaultCallerHeader)
				}
				learn.CallerHeader = s
			}
		case "callers":
			if v, ok := l.integer(kv.val, p, 0, 10_000_000, "10000"); ok {
				learn.Callers = int(v)
			}
		case "min_count":
			if v, ok := l.integer(kv.val, p, 1, 1_000_000, "3"); ok {
				learn.MinCount = int(v)
			}
		case "recovery_window":
			if s, ok := l.scalar(kv.val, p, "10m"); ok {
				d, err := time.ParseDuration(s)
				if err != nil || d < time.Second || d > 24*time.Hour {
					l.errorf(l.deref(kv.val), p, "%q is not a window from 1s to 24h; write a duration, e.g. 10m or 90s", s)
				} else {
					learn.RecoveryWindow = d
				}
			}
		}
	}
}

var headerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)

var (
	snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	plainName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
)

func (l *loader) routes(n *yaml.Node, path string) {
	pairs := l.mapping(n, path, nil, "a mapping of route names to routes, e.g. {update_ticket: {method: PATCH, path: /tickets/{ticket_id}}}")
	if pairs == nil && l.deref(n).Kind == yaml.MappingNode && l.cfg.Mode != Observe {
		l.errorf(n, path, "is empty; declare at least one route, e.g.\n%s\nor, to learn them from traffic first, set mode: observe", exampleFile)
	}
	seen := map[string]string{}
	groups := map[string][]*Route{} // routes by method and path, in file order
	for _, kv := range pairs {
		p := join(path, kv.key)
		if !snakeCase.MatchString(kv.key) {
			eg := "update_ticket"
			if sc := snakeFrom(kv.key); snakeCase.MatchString(sc) {
				eg = sc
			}
			l.errorf(kv.keyNode, p, "route name %q must be snake_case like the agent's tool name, e.g. %s", kv.key, eg)
		}
		r := l.route(kv.key, kv.val, p)
		if r == nil {
			continue
		}
		r.Pos = Pos{kv.keyNode.Line, kv.keyNode.Column}
		if r.Method != "" && r.Path != "" && (r.When != nil || !r.whenGiven) {
			shape := r.Method + " " + templateShape(r.Path)
			k := shape + " " + r.When.String()
			if other, dup := seen[k]; dup {
				if r.When == nil {
					l.errorf(kv.keyNode, p, "%s %s is already routed as %q; each method and path belongs to one route, unless each route of it says with when: which requests are its, e.g. when: {json: method, equals: torrent-get}", r.Method, r.RawPath, other)
				} else {
					l.errorf(kv.keyNode, p, "%s %s when %s is already routed as %q; give each route of the path a when: of its own", r.Method, r.RawPath, r.When, other)
				}
			}
			seen[k] = r.Name
			groups[shape] = append(groups[shape], r)
		}
		l.cfg.Routes = append(l.cfg.Routes, r)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, r := range g[1:] {
			if r.Path != g[0].Path && (r.When != nil || g[0].When != nil) {
				// The router names the variables as the route it matched
				// does, which may not be the one the request is for.
				l.errorfAt(r.Pos, join(path, r.Name+".path"), "%s is %s's path with its variables named otherwise (%s); routes sharing a path write it the same way, e.g. %s", r.RawPath, g[0].Name, g[0].RawPath, g[0].RawPath)
			}
		}
		// The routes that say which requests are theirs are tried first,
		// in file order; the one that does not takes the rest.
		ordered := make([]*Route, 0, len(g))
		for _, r := range g {
			if r.When != nil {
				ordered = append(ordered, r)
			}
		}
		for _, r := range g {
			if r.When == nil {
				ordered = append(ordered, r)
			}
		}
		for _, r := range g {
			r.Group = ordered
		}
	}
}

func (l *loader) route(name string, n *yaml.Node, path string) *Route {
	r := &Route{Name: name, Validate: ValidateAfter, Format: l.cfg.Format, Unmatched: l.cfg.Unmatched, Mode: l.cfg.Mode}
	var fields, errs *yaml.Node
	var methodNode, bodyNode *yaml.Node
	pairs := l.mapping(n, path, routeKeys, "a route mapping with method: and path:")
	if pairs == nil {
		return nil
	}
	for _, kv := range pairs {
		p := join(path, kv.key)
		switch kv.key {
		case "description":
			r.Description = l.description(kv.val, p, "Change a ticket's status")
		case "method":
			methodNode = kv.val
			if s, ok := l.scalar(kv.val, p, "PATCH"); ok {
				switch up := strings.ToUpper(s); {
				case s != up && contains(methods, up):
					// Methods are case-sensitive: "get" is not GET.
					l.errorf(l.deref(kv.val), p, "method %q must be upper case: %s", s, up)
				case !MethodToken(s):
					l.errorf(l.deref(kv.val), p, "method %q is not an HTTP method token: letters, digits and !#$%%&'*+-.^_`|~ only, e.g. PATCH or PROPFIND", s)
				default:
					r.Method = s
				}
			}
		case "path":
			if s, ok := l.scalar(kv.val, p, "/tickets/{ticket_id}"); ok {
				if err := checkTemplate(s); err != nil {
					l.errorf(l.deref(kv.val), p, "%v", err)
				} else {
					r.RawPath, r.Path = s, decodeTemplate(s)
				}
			}
		case "handshake":
			r.Handshake = l.handshake(kv.val, p)
		case "when":
			r.When, r.whenGiven = l.when(kv.val, p), true
		case "body":
			if v, ok := l.choice(kv.val, p, encodingChoices); ok {
				r.Body = Encoding(v)
				bodyNode = l.deref(kv.val)
			}
		case "validate":
			if v, ok := l.choice(kv.val, p, modeChoices); ok {
				r.Validate = Mode(v)
			}
		case "format":
			if v, ok := l.choice(kv.val, p, formatChoices); ok {
				r.Format = BodyFormat(v)
			}
		case "unmatched":
			if v, ok := l.choice(kv.val, p, policyChoices); ok {
				r.Unmatched, r.UnmatchedPos = Policy(v), Pos{kv.keyNode.Line, kv.keyNode.Column}
			}
		case "mode":
			if v, ok := l.choice(kv.val, p, enforcementChoices); ok {
				r.Mode = Enforcement(v)
			}
		case "repeats":
			if off, ok := l.off(kv.val); ok {
				r.RepeatsOff = off
			} else {
				l.errorf(l.deref(kv.val), p, "must be off, to never tell a caller to stop repeating a failing call on this route; the counts are set in limits.repeats; found %s", describe(l.deref(kv.val)))
			}
		case "fields":
			fields = kv.val
		case "errors":
			errs = kv.val
		}
	}
	if methodNode == nil {
		l.errorf(n, join(path, "method"), "missing; every route names its HTTP method, e.g. method: PATCH")
	}
	if !containsPair(pairs, "path") {
		l.errorf(n, join(path, "path"), "missing; every route names its path template, e.g. path: /tickets/{ticket_id}")
	}
	if fields != nil {
		for _, kv := range l.mapping(fields, join(path, "fields"), nil, "a mapping of field names to constraints, e.g. {status: {enum: [open, closed]}}") {
			if f := l.field(r, kv.key, kv.val, join(path, "fields."+kv.key)); f != nil {
				f.Pos = Pos{kv.keyNode.Line, kv.keyNode.Column}
				r.Fields = append(r.Fields, f)
			}
		}
	}
	l.encoding(r, bodyNode, path)
	if errs != nil {
		l.errorRules(r, errs, join(path, "errors"))
	}
	return r
}

// whenKeys are the keys of a route's when:, one place and equals.
var whenKeys = []string{"json", "form", "xml", "query", "equals"}

// when reads a route's when: the request member, and the value it must
// hold, by which the route takes its requests from the others of its
// method and path.
func (l *loader) when(n *yaml.Node, path string) *When {
	const eg = "{json: method, equals: torrent-get}"
	pairs := l.mapping(n, path, whenKeys, "a when mapping, e.g. "+eg)
	if pairs == nil {
		return nil
	}
	w := &When{}
	var places []string
	seenEquals := false
	for _, kv := range pairs {
		p := join(path, kv.key)
		s, ok := l.scalar(kv.val, p, "method")
		if !ok {
			return nil
		}
		switch kv.key {
		case "equals":
			w.Equals, seenEquals = s, true
		default:
			places = append(places, kv.key)
			if s == "" {
				l.errorf(l.deref(kv.val), p, "must not be empty; name the request member that tells the route's requests apart, e.g. when: %s", eg)
				return nil
			}
			w.Key = s
			switch kv.key {
			case "json":
				w.In = InBody
			case "form":
				w.In = InForm
			case "xml":
				if err := checkXMLPath(s); err != nil {
					l.errorf(l.deref(kv.val), p, "%v", err)
					return nil
				}
				w.In = InXML
			default:
				w.In = InQuery
			}
		}
	}
	switch {
	case len(places) != 1:
		l.errorf(l.deref(n), path, "must name one place, json, form, xml or query, and the value it holds, e.g. when: %s", eg)
		return nil
	case !seenEquals:
		l.errorf(l.deref(n), join(path, "equals"), "missing; say the value that makes a request this route's, e.g. when: %s", eg)
		return nil
	}
	return NewWhen(w.In, w.Key, w.Equals)
}

// locationOf is where the body fields of a route whose body is e live.
func locationOf(e Encoding) Location {
	switch e {
	case EncodingForm, EncodingMultipart:
		return InForm
	case EncodingXML:
		return InXML
	}
	return InBody
}

// encodingOf is the body a field in l makes its route's, or JSON.
func encodingOf(l Location) Encoding {
	switch l {
	case InForm:
		return EncodingForm
	case InXML:
		return EncodingXML
	}
	return EncodingJSON
}

// noun names the members a body of the location holds.
func (l Location) noun() string {
	switch l {
	case InForm:
		return "form members"
	case InXML:
		return "XML elements"
	}
	return "JSON members"
}

// noun names a body of the encoding.
func (e Encoding) noun() string {
	switch e {
	case EncodingForm, EncodingMultipart:
		return "a form"
	case EncodingXML:
		return "XML"
	}
	return "JSON"
}

// xmlStep is one step of an XML path: an element's local name and, from
// 1, which of its siblings of that name; 0 is the first.
var xmlStep = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*(\[[1-9][0-9]{0,5}\])?$`)

// checkXMLPath checks the path of an XML field or when: element names
// separated by slashes, each with an optional 1-based index.
func checkXMLPath(s string) error {
	for i, step := range strings.Split(s, "/") {
		if !xmlStep.MatchString(step) {
			return fmt.Errorf("xml path %q: step %d, %q, must be an element's local name with an optional index from 1, e.g. methodCall/params/param[2]/value", s, i+1, step)
		}
	}
	return nil
}

// handshakeKeys are the keys of a route's handshake:.
var handshakeKeys = []string{"status", "header", "call", "token"}

// handshake reads a route's handshake: the status and the response header
// by which the upstream hands out the token it wants on every call.
func (l *loader) handshake(n *yaml.Node, path string) *Handshake {
	const eg = "{status: 409, header: X-Transmission-Session-Id}"
	pairs := l.mapping(n, path, handshakeKeys, "a handshake mapping, e.g. "+eg)
	if pairs == nil {
		return nil
	}
	h := &Handshake{}
	for _, kv := range pairs {
		p := join(path, kv.key)
		switch kv.key {
		case "status":
			if v, ok := l.integer(kv.val, p, 400, 499, "409"); ok {
				h.Status = int(v)
			}
		case "header":
			if s, ok := l.scalar(kv.val, p, "X-Transmission-Session-Id"); ok {
				if !headerName.MatchString(s) {
					l.errorf(l.deref(kv.val), p, "header %q is not a header name: letters, digits and dashes, e.g. X-Transmission-Session-Id", s)
				}
				h.Header = http.CanonicalHeaderKey(s)
			}
		case "call":
			h.Call = l.handshakeCall(kv.val, p)
		case "token":
			if s, ok := l.scalar(kv.val, p, "crumb"); ok {
				h.Token = s
			}
		}
	}
	if !containsPair(pairs, "header") {
		l.errorf(l.deref(n), join(path, "header"), "missing; a handshake names the header the token goes in, e.g. handshake: %s", eg)
		return nil
	}
	switch {
	case h.Call == nil && containsPair(pairs, "call"):
		return nil
	case h.Call == nil && !containsPair(pairs, "status"):
		l.errorf(l.deref(n), join(path, "status"), "missing; a handshake names the status the upstream hands its token out with, e.g. handshake: %s, or the call that hands it out, e.g. handshake: {call: {method: GET, path: /crumbIssuer/api/json}, token: crumb, header: Jenkins-Crumb}", eg)
		return nil
	case h.Call == nil && h.Token != "":
		l.errorf(l.deref(n), join(path, "token"), "reads the token from the answer of call:, which this handshake has none of; drop token:, or name the call, e.g. call: {method: GET, path: /crumbIssuer/api/json}")
		return nil
	case h.Call != nil && h.Status == 0:
		h.Status = http.StatusForbidden // the usual refusal of a stale CSRF token
	}
	if h.Status == 0 || h.Header == "" {
		return nil
	}
	return h
}

// handshakeCall reads a handshake's call: the method and path of the
// upstream call that hands the token out.
func (l *loader) handshakeCall(n *yaml.Node, path string) *HandshakeCall {
	const eg = "{method: GET, path: /crumbIssuer/api/json}"
	pairs := l.mapping(n, path, []string{"method", "path"}, "a call mapping, e.g. "+eg)
	if pairs == nil {
		return nil
	}
	c := &HandshakeCall{}
	for _, kv := range pairs {
		p := join(path, kv.key)
		s, ok := l.scalar(kv.val, p, "GET")
		if !ok {
			return nil
		}
		switch kv.key {
		case "method":
			if !MethodToken(s) {
				l.errorf(l.deref(kv.val), p, "method %q is not an HTTP method token, e.g. GET", s)
				return nil
			}
			c.Method = s
		case "path":
			if !strings.HasPrefix(s, "/") || TargetFault(s) != nil {
				l.errorf(l.deref(kv.val), p, "path %q must be a request target starting with /, e.g. /crumbIssuer/api/json", s)
				return nil
			}
			c.Path = s
		}
	}
	if c.Method == "" || c.Path == "" {
		l.errorf(l.deref(n), path, "must name the method and the path, e.g. call: %s", eg)
		return nil
	}
	return c
}

// encoding settles how the route's body is written: as body: says, else
// as a form when a field is in: form, else as JSON; and refuses fields of
// the other encoding, which no one body can hold.
func (l *loader) encoding(r *Route, bodyNode *yaml.Node, path string) {
	if r.Body == "" {
		r.Body = EncodingJSON
		for _, f := range r.Fields {
			if f.In == InForm || f.In == InXML {
				r.Body = encodingOf(f.In)
				break
			}
		}
		for _, f := range r.Fields {
			if r.Body != EncodingJSON && f.In == InBody && !f.inGiven {
				f.In = locationOf(r.Body) // in the body like the field that says so
			}
		}
	}
	own := locationOf(r.Body)
	for _, f := range r.Fields {
		p := join(path, "fields."+f.Name+".in")
		if f.In != InBody && f.In != InForm && f.In != InXML || f.In == own {
			if f.In == InXML {
				if err := checkXMLPath(f.Key); err != nil {
					l.errorfAt(f.Pos, join(path, "fields."+f.Name+".key"), "%v", err)
				}
			}
			continue
		}
		if bodyNode != nil {
			l.errorfAt(f.Pos, p, "the route's body is %s (body: %s), which has no %s; write in: %s, or body: %s", r.Body.noun(), r.Body, f.In.noun(), own, encodingOf(f.In))
		} else {
			l.errorfAt(f.Pos, p, "another field is in: %s, and one body cannot be %s and %s; put every body field in: %s", own, r.Body.noun(), encodingOf(f.In).noun(), own)
		}
	}
}

// TemplateVariables returns the variable names of a mux path template, in
// order: {ticket_id} and {id:[0-9]{3}} are ticket_id and id.
func TemplateVariables(tpl string) []string { return templateVars(tpl) }

// templateVars returns the variable names of a mux path template.
func templateVars(tpl string) []string {
	var names []string
	for _, v := range templatePatterns(tpl) {
		names = append(names, v.name)
	}
	return names
}

// templateShape blanks the variable names of a template, keeping their
// patterns, so that templates that route alike compare equal and two that
// mux tells apart by their patterns (/events/{id:[0-9]+} and
// /events/{slug:[a-z-]+}) do not.
func templateShape(tpl string) string {
	return fillTemplate(tpl, func(_, pattern string) string {
		if pattern == "[^/]+" {
			pattern = "" // mux's own, written out
		}
		return "{" + pattern + "}"
	})
}

func checkTemplate(s string) error {
	if !strings.HasPrefix(s, "/") {
		return fmt.Errorf("path %q must start with /, e.g. /tickets/{ticket_id}", s)
	}
	if err := mux.NewRouter().Path(s).GetError(); err != nil {
		// mux says e.g. `mux: unbalanced braces in "/t/{id"`.
		why := strings.TrimPrefix(err.Error(), "mux: ")
		why = strings.TrimSuffix(why, " in "+strconv.Quote(s))
		why = strings.TrimPrefix(why, "error parsing regexp: ")
		return fmt.Errorf("path %q is not a valid template: %s; variables look like {ticket_id} or {id:[0-9]+}", s, why)
	}
	for _, v := range templatePatterns(s) {
		if v.raw != v.name {
			// mux names the variable with its spaces, and no field
			// named without them would ever be found.
			return fmt.Errorf("path %q: variable {%s} has spaces around its name; write {%s}", s, v.raw, v.name)
		}
	}
	vars := templateVars(s)
	for i, v := range vars {
		if !plainName.MatchString(v) {
			return fmt.Errorf("path %q: variable {%s} must be a plain name, e.g. {ticket_id}", s, v)
		}
		if contains(vars[:i], v) {
			return fmt.Errorf("path %q names {%s} twice; each variable appears once", s, v)
		}
	}
	if f := templateFault(s); f != nil {
		return fmt.Errorf("path %q holds %v%s", s, f, templateFix(s, f, vars))
	}
	return nil
}

// templateFix says how to mend a template's character fault: percent-encode
// it, or take the segment that holds it as a variable; for a "?", the path
// without its query.
func templateFix(s string, f *CharFault, vars []string) string {
	if s[f.off] == '?' {
		return "; e.g. " + s[:f.off]
	}
	if f.Fixed == "" {
		return ""
	}
	fix := "; percent-encode it, e.g. " + f.Fixed
	start := strings.LastIndexByte(s[:f.off], '/') + 1
	end := len(s)
	if i := strings.IndexByte(s[f.off:], '/'); i >= 0 {
		end = f.off + i
	}
	if strings.ContainsAny(s[start:end], "{}") {
		return fix
	}
	// The variable is named after the segment before, as in
	// /label/{label}/values, unless that is no plain name or taken.
	name := "value"
	if prev := s[:max(start-1, 0)]; prev != "" {
		prev = prev[strings.LastIndexByte(prev, '/')+1:]
		if plainName.MatchString(prev) && !contains(vars, prev) {
			name = prev
		}
	}
	return fix + ", or take the segment as a variable, e.g. " + s[:start] + "{" + name + "}" + s[end:]
}

// closestName suggests the option a misspelt name meant: the nearest by
// edit distance, else the one option it abbreviates ("rfc3339" for
// "rfc3339-utc"), else "".
func closestName(s string, options []string) string {
	if c := suggest.Closest(s, options); c != "" {
		return c
	}
	if len(s) < 3 {
		return ""
	}
	found := ""
	for _, o := range options {
		if strings.HasPrefix(strings.ToLower(o), strings.ToLower(s)) {
			if found != "" {
				return ""
			}
			found = o
		}
	}
	return found
}

// MethodToken reports whether s is an HTTP method as RFC 9110 defines one,
// a token: the standard methods, and extensions such as WebDAV's PROPFIND
// and MKCOL.
func MethodToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
