package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"
	"github.com/signpost-proxy/signpost/suggest"
	"gopkg.in/yaml.v3"
)

// MaxFileSize is the largest rule file Load reads.
const MaxFileSize = 4 << 20

// maxNodes bounds the YAML nodes one load visits, so that aliases that
// expand exponentially fail fast instead of exhausting memory.
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
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read the rule file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the rule file: %v", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("the rule file is larger than %d MiB; split large value sets out of it", MaxFileSize>>20)
	}
	return data, nil
}

// Parse validates and compiles a rule file held in memory; file names it in
// problems.
func Parse(file string, data []byte) (*Config, error) {
	l := &loader{file: file}
	cfg := l.parse(data)
	if len(l.problems) > 0 {
		return nil, l.problems
	}
	return cfg, nil
}

type loader struct {
	file     string
	problems Problems
	visits   int
	cfg      *Config
}

func (l *loader) errorf(n *yaml.Node, path, format string, args ...any) {
	p := Problem{File: l.file, Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	l.problems = append(l.problems, p)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (l *loader) parse(data []byte) *Config {
	if i := invalidUTF8(data); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		col := 1 + i - (bytes.LastIndexByte(data[:i], '\n') + 1)
		l.problems = append(l.problems, Problem{File: l.file, Line: line, Column: col,
			Message: fmt.Sprintf("byte 0x%02x is not valid UTF-8; save the rule file as UTF-8", data[i])})
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p := Problem{File: l.file, Message: "YAML syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Column = 1
			p.Message = "YAML syntax: " + m[2]
		}
		l.problems = append(l.problems, p)
		return nil
	}
	if len(doc.Content) == 0 {
		l.errorf(nil, "", "the rule file is empty; it needs at least a routes: mapping, e.g.\n%s", exampleFile)
		return nil
	}
	cfg := &Config{File: l.file, Listen: DefaultListen, Admin: DefaultAdmin,
		Limits: Limits{ErrorBody: DefaultErrorBody, RequestBody: DefaultRequestBody, Received: DefaultReceived}}
	l.cfg = cfg
	root := doc.Content[0]
	var routes *yaml.Node
	for _, kv := range l.mapping(root, "", topKeys, "a mapping with routes:") {
		switch kv.key {
		case "upstream":
			cfg.Upstream = l.upstream(kv.val, kv.key)
		case "listen":
			cfg.Listen = l.address(kv.val, kv.key, DefaultListen)
		case "admin":
			cfg.Admin = l.address(kv.val, kv.key, DefaultAdmin)
		case "limits":
			l.limits(kv.val, kv.key, &cfg.Limits)
		case "routes":
			routes = kv.val
		}
	}
	if routes == nil {
		if root.Kind == yaml.MappingNode {
			l.errorf(root, "routes", "missing; a rule file declares at least one route, e.g.\n%s", exampleFile)
		}
		return cfg
	}
	l.routes(routes, "routes")
	return cfg
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
	topKeys   = []string{"upstream", "listen", "admin", "limits", "routes"}
	limitKeys = []string{"error_body", "request_body", "received"}
	routeKeys = []string{"method", "path", "fields", "errors"}
	fieldKeys = []string{"in", "key", "required", "enum", "format", "pattern", "example", "min", "max", "max_length"}
	ruleKeys  = []string{"match", "code", "field", "message", "retryable"}
	matchKeys = []string{"status", "json", "equals", "contains", "regex", "body"}
	methods   = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
	locations = []string{string(InBody), string(InQuery), string(InPath), string(InHeader)}
)

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

func (l *loader) overBudget(n *yaml.Node, path string) bool {
	if l.visits <= maxNodes {
		return false
	}
	if l.visits < math.MaxInt {
		l.errorf(n, path, "the file expands to more than %d YAML nodes (aliases nested too deep?); write the repeated parts out once", maxNodes)
		l.visits = math.MaxInt
	}
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
			l.errorf(k, path, "keys must be plain names; found %s", describe(k))
			continue
		}
		if first, dup := seen[key]; dup {
			l.errorf(k, join(path, key), "duplicate key %q; first set at line %d", key, first.Line)
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
	v = l.deref(v)
	var sources []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, s := range v.Content {
			sources = append(sources, l.deref(s))
		}
	}
	var out []pair
	for _, s := range sources {
		if s.Kind != yaml.MappingNode {
			l.errorf(k, join(path, "<<"), "a merge key takes an alias of a mapping, e.g. <<: *defaults; found %s", describe(s))
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
	if s := suggest.Closest(key, allowed); s != "" {
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
		return "a mapping"
	case yaml.SequenceNode:
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

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000_000}, {"B", 1}}

// size reads a byte count written as a whole number or with a unit:
// 65536, 64KiB, 1MiB.
func (l *loader) size(n *yaml.Node, path string, lo, hi int64, example string) int64 {
	n = l.deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, ok := l.integer(n, path, lo, hi, example)
		if ok {
			return v
		}
		return 0
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		s := strings.TrimSpace(n.Value)
		for _, u := range sizeUnits {
			if num, ok := strings.CutSuffix(s, u.suffix); ok {
				v, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
				if err != nil || v < 0 || v > hi/u.mult+1 {
					break
				}
				if v*u.mult < lo || v*u.mult > hi {
					l.errorf(n, path, "%s is out of range; must be from %s to %s, e.g. %s", s, bytesText(lo), bytesText(hi), example)
					return 0
				}
				return v * u.mult
			}
		}
	}
	l.errorf(n, path, "must be a size in bytes, e.g. %s or 65536; found %s", example, describe(n))
	return 0
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
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
		return nil, fmt.Errorf("%q is not an upstream base URL; must be an absolute http or https URL without query, e.g. http://127.0.0.1:8081", s)
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
		}
	}
}

var (
	snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	plainName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
)

func (l *loader) routes(n *yaml.Node, path string) {
	pairs := l.mapping(n, path, nil, "a mapping of route names to routes, e.g.\n"+exampleFile)
	if pairs == nil && l.deref(n).Kind == yaml.MappingNode {
		l.errorf(n, path, "is empty; declare at least one route, e.g.\n%s", exampleFile)
	}
	seen := map[string]string{}
	for _, kv := range pairs {
		p := join(path, kv.key)
		if !snakeCase.MatchString(kv.key) {
			l.errorf(kv.keyNode, p, "route name %q must be snake_case like the agent's tool name, e.g. update_ticket", kv.key)
		}
		r := l.route(kv.key, kv.val, p)
		if r == nil {
			continue
		}
		r.Pos = Pos{kv.keyNode.Line, kv.keyNode.Column}
		if r.Method != "" && r.Path != "" {
			k := r.Method + " " + templateShape(r.Path)
			if other, dup := seen[k]; dup {
				l.errorf(kv.keyNode, p, "%s %s is already routed as %q; each method and path belongs to one route", r.Method, r.Path, other)
			}
			seen[k] = r.Name
		}
		l.cfg.Routes = append(l.cfg.Routes, r)
	}
}

func (l *loader) route(name string, n *yaml.Node, path string) *Route {
	r := &Route{Name: name}
	var fields, errs *yaml.Node
	var methodNode *yaml.Node
	pairs := l.mapping(n, path, routeKeys, "a route mapping with method: and path:")
	if pairs == nil {
		return nil
	}
	for _, kv := range pairs {
		p := join(path, kv.key)
		switch kv.key {
		case "method":
			methodNode = kv.val
			if s, ok := l.scalar(kv.val, p, "PATCH"); ok {
				if !contains(methods, s) {
					if up := strings.ToUpper(s); contains(methods, up) {
						l.errorf(l.deref(kv.val), p, "method %q must be upper case: %s", s, up)
					} else {
						l.errorf(l.deref(kv.val), p, "unknown method %q; must be one of: %s", s, strings.Join(methods, ", "))
					}
				} else {
					r.Method = s
				}
			}
		case "path":
			if s, ok := l.scalar(kv.val, p, "/tickets/{ticket_id}"); ok {
				if err := checkTemplate(s); err != nil {
					l.errorf(l.deref(kv.val), p, "%v", err)
				} else {
					r.Path = s
				}
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
	if errs != nil {
		l.errorRules(r, errs, join(path, "errors"))
	}
	return r
}

// templateVars returns the variable names of a mux path template.
func templateVars(tpl string) []string {
	var vars []string
	depth, start := 0, 0
	for i := 0; i < len(tpl); i++ {
		switch tpl[i] {
		case '{':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case '}':
			depth--
			if depth == 0 {
				name, _, _ := strings.Cut(tpl[start:i], ":")
				vars = append(vars, strings.TrimSpace(name))
			}
		}
	}
	return vars
}

// templateShape blanks the variable names of a template so that templates
// that route alike compare equal.
func templateShape(tpl string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(tpl); i++ {
		switch c := tpl[i]; {
		case c == '{':
			if depth == 0 {
				b.WriteString("{}")
			}
			depth++
		case c == '}':
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func checkTemplate(s string) error {
	if !strings.HasPrefix(s, "/") {
		return fmt.Errorf("path %q must start with /, e.g. /tickets/{ticket_id}", s)
	}
	if err := mux.NewRouter().Path(s).GetError(); err != nil {
		return fmt.Errorf("path %q is not a valid template (%v); variables look like {ticket_id} or {id:[0-9]+}", s, err)
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
	return nil
}
