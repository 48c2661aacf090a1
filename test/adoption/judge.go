// Package adoption judges the answers an agent gets to a wrong call: the
// bare API's and signpost's, side by side, by written criteria.
//
// Each body is classified as one of four verdicts:
//
//   - false: it blames a field that was right (a field it names is not at
//     fault in the call, or is not in the call at all), or it states a
//     constraint the API does not have (an enum, a pattern or a format
//     that a value the API accepts breaks);
//   - actionable: it names a field at fault and says what to send there
//     (did_you_mean, a next_call, or a message with a requirement in it:
//     "must", "expected", "valid …", "one of", "e.g.", "is required",
//     "should", "try");
//   - partly: it names a field at fault without saying what to send, or
//     it carries the upstream's own words (for signpost, as Kept judges
//     them) without naming a field;
//   - not: none of these, nothing to act on.
//
// A field is named by a JSON member "field", the fields of an "errors"
// list or of "unlisted", or a parameter name quoted in any text of the
// body (`invalid parameter "step"`).
//
// A method mistake, with no field at fault, is actionable when the body
// blames no field and says what to send (the methods the path allows).
//
// Signpost's body must also keep what the bare body said (Kept): its
// machine codes (any case) and every significant word of its message, or
// else a truer and more precise statement: a named field at fault whose
// stated constraint rejects the value sent and accepts every value the API
// accepts. The code alone is not enough where the body says more: a code
// such as Prometheus's bad_data, shared by all its 400s, tells the agent
// less than the message beside it.
package adoption

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"gopkg.in/yaml.v3"
)

// Part is one value of a call the API reads: a query parameter, a member
// of the body, a header, or a stretch of the path.
type Part struct {
	// Name is the API's own name for the value: "step", "name", "digest".
	Name string
	// In is where it lives: "path", "query", "body" or "header".
	In string
	// Value is the value sent; "" for one left out.
	Value string
	// Aliases are other names the API's documentation or messages use for
	// it, e.g. "match" for "match[]", "tag" for "reference".
	Aliases []string
	// Valid are values the API accepts here; none of them was in the
	// observed traffic.
	Valid []string
}

func (p Part) names() []string { return append([]string{p.Name}, p.Aliases...) }

// Mistake is one wrong call and what is wrong in it.
type Mistake struct {
	Name   string
	Method string
	// Path is the path as sent, with its query.
	Path  string
	Parts []Part
	// Fault names the parts at fault, by Part.Name; empty when no value
	// is (a wrong method).
	Fault []string
}

func (m Mistake) part(name string) (Part, bool) {
	for _, p := range m.Parts {
		for _, n := range p.names() {
			if strings.EqualFold(n, name) {
				return p, true
			}
		}
	}
	return Part{}, false
}

func (m Mistake) atFault(p Part) bool { return slices.Contains(m.Fault, p.Name) }

// Verdict is what one body gives an agent to act on.
type Verdict int

// The verdicts, from best to worst.
const (
	Actionable Verdict = iota
	Partly
	Not
	False
)

func (v Verdict) String() string {
	return [...]string{"actionable", "partly", "not", "false"}[v]
}

// Judgement is a verdict with the reasons for it.
type Judgement struct {
	Verdict Verdict
	Why     string
}

// Field is a drafted field's constraint.
type Field struct {
	In      string   `yaml:"in"`
	Key     string   `yaml:"key"`
	Enum    []string `yaml:"enum"`
	Pattern string   `yaml:"pattern"`
	Format  string   `yaml:"format"`
}

// Route is one drafted route.
type Route struct {
	Name   string
	Method string           `yaml:"method"`
	Path   string           `yaml:"path"`
	Fields map[string]Field `yaml:"fields"`
}

// Rules are the routes of a drafted rule file, to find which route a call
// meets and what its fields declare.
type Rules struct {
	Routes []*Route
	router *mux.Router
}

// ParseRules reads the routes of a rule file.
func ParseRules(data []byte) (*Rules, error) {
	var file struct {
		Routes map[string]*Route `yaml:"routes"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	r := &Rules{router: mux.NewRouter()}
	for name, rt := range file.Routes {
		rt.Name = name
		r.Routes = append(r.Routes, rt)
	}
	slices.SortFunc(r.Routes, func(a, b *Route) int { return strings.Compare(a.Name, b.Name) })
	for _, rt := range r.Routes {
		m := r.router.NewRoute().Path(rt.Path).Name(rt.Name)
		if rt.Method != "" {
			m.Methods(rt.Method)
		}
		if m.GetError() != nil {
			return nil, fmt.Errorf("route %s: path %q: %v", rt.Name, rt.Path, m.GetError())
		}
	}
	return r, nil
}

// Match returns the route a call meets, as gorilla/mux matches the
// templates, and the values of its path variables; nil when none does.
func (r *Rules) Match(method, target string) (*Route, map[string]string) {
	if r == nil {
		return nil, nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, nil
	}
	req := &http.Request{Method: method, URL: u, Host: "127.0.0.1"}
	var m mux.RouteMatch
	if !r.router.Match(req, &m) || m.Route == nil {
		return nil, nil
	}
	name := m.Route.GetName()
	for _, rt := range r.Routes {
		if rt.Name == name {
			return rt, m.Vars
		}
	}
	return nil, nil
}

// body is what the judge reads of one answer.
type body struct {
	raw    []byte
	doc    any      // the decoded JSON, nil for another body
	texts  []string // every string in it, or the whole text
	fields []string // the fields it names in members
}

func read(b []byte) body {
	out := body{raw: b}
	if json.Unmarshal(b, &out.doc) != nil {
		out.doc = nil
		if s := strings.TrimSpace(string(b)); s != "" {
			out.texts = []string{s}
		}
		return out
	}
	walk(out.doc, func(s string) { out.texts = append(out.texts, s) })
	if o, ok := out.doc.(map[string]any); ok {
		if f, ok := o["field"].(string); ok {
			out.fields = append(out.fields, f)
		}
		if list, ok := o["errors"].([]any); ok {
			for _, e := range list {
				if e, ok := e.(map[string]any); ok {
					if f, ok := e["field"].(string); ok {
						out.fields = append(out.fields, f)
					}
				}
			}
		}
		if list, ok := o["unlisted"].([]any); ok {
			for _, f := range list {
				if f, ok := f.(string); ok {
					out.fields = append(out.fields, f)
				}
			}
		}
	}
	return out
}

func walk(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case []any:
		for _, e := range v {
			walk(e, f)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walk(v[k], f)
		}
	}
}

// member returns a top-level member of a JSON object body.
func (b body) member(name string) any {
	if o, ok := b.doc.(map[string]any); ok {
		return o[name]
	}
	return nil
}

// named is a field a body names, and the part of the call it stands for.
type named struct {
	name  string
	part  Part
	found bool
	// partial is set when a path variable covers only some of the part's
	// text: its constraint cannot be held against the part's values.
	partial bool
	def     *Field
}

// namedFields lists the fields a body names, each resolved to a part of
// the call: through the drafted route's field (its key, or the text its
// path variable matched), else by the part's name or aliases.
func namedFields(b body, m Mistake, route *Route, vars map[string]string) []named {
	var out []named
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		n := named{name: name}
		key := name
		in := ""
		if route != nil {
			if f, ok := route.Fields[name]; ok {
				n.def = &f
				if f.Key != "" {
					key = f.Key
				}
				in = f.In
			}
			if v, ok := vars[key]; ok && (in == "" || in == "path") {
				n.part, n.found, n.partial = pathPart(m, v)
				out = append(out, n)
				return
			}
		}
		if p, ok := m.part(key); ok {
			n.part, n.found = p, true
		} else if p, ok := m.part(name); ok {
			n.part, n.found = p, true
		}
		out = append(out, n)
	}
	for _, f := range b.fields {
		add(f)
	}
	// A parameter's name quoted in the text: `invalid parameter "step"`.
	for _, p := range m.Parts {
		for _, n := range p.names() {
			q := strconv.Quote(n)
			if slices.ContainsFunc(b.texts, func(s string) bool { return strings.Contains(s, q) }) {
				add(n)
			}
		}
	}
	return out
}

// pathPart finds the path part whose text a path variable matched: the
// one equal to it, else the one holding it.
func pathPart(m Mistake, v string) (Part, bool, bool) {
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	for _, p := range m.Parts {
		if p.In == "path" && p.Value == v {
			return p, true, false
		}
	}
	for _, p := range m.Parts {
		if p.In == "path" && v != "" && strings.Contains(p.Value, v) {
			return p, true, true
		}
	}
	return Part{}, false, false
}

// constraint is one rule a body states for a field.
type constraint struct {
	what  string
	check func(string) bool
}

var (
	enumText    = regexp.MustCompile(`allowed values: ([^;]+)`)
	patternText = regexp.MustCompile(`must match the pattern (\S+?)(?:,? e\.g\.|;| in |$)`)
)

// formats are the rule file's named formats, each as the API would have
// to read it for the constraint to be true.
var formats = map[string]func(string) bool{
	"rfc3339-utc": func(s string) bool {
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil && strings.HasSuffix(s, "Z")
	},
	"rfc3339": func(s string) bool { _, err := time.Parse(time.RFC3339Nano, s); return err == nil },
	"date":    func(s string) bool { _, err := time.Parse(time.DateOnly, s); return err == nil },
	"uuid":    regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`).MatchString,
	"email":   regexp.MustCompile(`^[^@\s]+@[^@\s]+$`).MatchString,
	"integer": func(s string) bool { _, err := strconv.ParseInt(s, 10, 64); return err == nil },
	"number":  func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil },
	"boolean": func(s string) bool { return s == "true" || s == "false" },
}

// formatNouns are the words a message states each format in.
var formatNouns = map[string]string{
	"an RFC 3339 timestamp in UTC":          "rfc3339-utc",
	"an RFC 3339 timestamp with its offset": "rfc3339",
	"a calendar date as YYYY-MM-DD":         "date",
	"a UUID in 8-4-4-4-12 hex form":         "uuid",
	"an email address":                      "email",
	"an integer":                            "integer",
	"a number":                              "number",
	"true or false":                         "boolean",
}

// constraints lists the rules a body states for a named field: those its
// drafted definition declares, and those its messages state.
func constraints(n named, b body) []constraint {
	var out []constraint
	if d := n.def; d != nil {
		if len(d.Enum) > 0 {
			out = append(out, enumConstraint(d.Enum))
		}
		if d.Pattern != "" {
			if re, err := regexp.Compile(d.Pattern); err == nil {
				out = append(out, constraint{"the pattern " + d.Pattern, re.MatchString})
			}
		}
		if f, ok := formats[d.Format]; ok {
			out = append(out, constraint{"the format " + d.Format, f})
		}
	}
	for _, msg := range fieldMessages(b, n.name) {
		if m := enumText.FindStringSubmatch(msg); m != nil {
			out = append(out, enumConstraint(strings.Split(m[1], ", ")))
		}
		if m := patternText.FindStringSubmatch(msg); m != nil {
			if re, err := regexp.Compile(m[1]); err == nil {
				out = append(out, constraint{"the pattern " + m[1], re.MatchString})
			}
		}
		for noun, f := range formatNouns {
			if strings.Contains(msg, "must be "+noun) {
				out = append(out, constraint{"the format " + f, formats[f]})
			}
		}
	}
	return out
}

func enumConstraint(values []string) constraint {
	return constraint{"one of " + strings.Join(values, ", "), func(s string) bool {
		return slices.ContainsFunc(values, func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), s) })
	}}
}

// fieldMessages are the messages a body gives for one field: the flat
// body's when it names the field, and its entry's in an errors list.
func fieldMessages(b body, field string) []string {
	var out []string
	o, ok := b.doc.(map[string]any)
	if !ok {
		return nil
	}
	if f, _ := o["field"].(string); f == field {
		if msg, ok := o["message"].(string); ok {
			out = append(out, msg)
		}
	}
	if list, ok := o["errors"].([]any); ok {
		for _, e := range list {
			if e, ok := e.(map[string]any); ok && e["field"] == field {
				if msg, ok := e["message"].(string); ok {
					out = append(out, msg)
				}
			}
		}
	}
	return out
}

// requirement is text that tells what to send.
var requirement = regexp.MustCompile(`(?i)\b(must|expected|valid \w+|one of|is required|should|try)\b|\be\.g\.|\ballows? (GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\b`)

// Answer is one response read to its end.
type Answer struct {
	Status int
	Body   []byte
}

// Judge classifies one answer to m: the bare API's, with rules and bare
// nil, or signpost's, with the drafted rules it serves and the bare API's
// answer to the same call.
func Judge(m Mistake, rules *Rules, got Answer, bare *Answer) Judgement {
	b := read(got.Body)
	route, vars := rules.Match(m.Method, m.Path)
	names := namedFields(b, m, route, vars)
	var falses, right []string
	for _, n := range names {
		switch {
		case !n.found:
			falses = append(falses, fmt.Sprintf("names field %q, which the call does not carry", n.name))
			continue
		case !m.atFault(n.part):
			falses = append(falses, fmt.Sprintf("blames %q (the %s %s %q), which was right; at fault: %s",
				n.name, n.part.In, n.part.Name, n.part.Value, faultText(m)))
			continue
		}
		right = append(right, n.name)
	}
	for _, n := range names {
		if !n.found || n.partial {
			continue
		}
		for _, c := range constraints(n, b) {
			for _, v := range n.part.Valid {
				if !c.check(v) {
					falses = append(falses, fmt.Sprintf("states %s for %q; the API accepts %s %q, which breaks it",
						c.what, n.name, n.part.Name, v))
					break
				}
			}
		}
	}
	if len(falses) > 0 {
		slices.Sort(falses)
		return Judgement{False, strings.Join(slices.Compact(falses), "; ")}
	}
	toSend := ""
	if dym, ok := b.member("did_you_mean").([]any); ok && len(dym) > 0 {
		toSend = "did_you_mean"
	} else if b.member("next_call") != nil {
		toSend = "next_call"
	} else {
		for _, s := range b.texts {
			if w := requirement.FindString(s); w != "" {
				toSend = fmt.Sprintf("%q in %q", w, s)
				break
			}
		}
	}
	if len(right) > 0 && toSend != "" {
		return Judgement{Actionable, fmt.Sprintf("names %s, at fault, and says what to send (%s)", strings.Join(right, ", "), toSend)}
	}
	if len(right) > 0 {
		return Judgement{Partly, fmt.Sprintf("names %s, at fault, but not what to send", strings.Join(right, ", "))}
	}
	if len(m.Fault) == 0 && len(names) == 0 && toSend != "" {
		return Judgement{Actionable, fmt.Sprintf("no field is at fault, none is blamed, and it says what to send (%s)", toSend)}
	}
	if bare == nil {
		if said(b, got.Status, m) {
			return Judgement{Partly, "its own words, no field: " + strconv.Quote(clip(strings.Join(b.texts, " | ")))}
		}
		return Judgement{Not, "no field, and no word beyond its status: " + strconv.Quote(clip(strings.Join(b.texts, " | ")))}
	}
	if ok, why := Kept(m, rules, *bare, got); ok && len(b.texts) > 0 && said(read(bare.Body), bare.Status, m) {
		return Judgement{Partly, "the upstream's words, no field (" + why + ")"}
	}
	return Judgement{Not, "no field at fault, and not the upstream's words"}
}

func faultText(m Mistake) string {
	if len(m.Fault) == 0 {
		return "no field (the method)"
	}
	return strings.Join(m.Fault, ", ")
}

// upstreamSaid is what the bare body says: its machine codes and its
// message text.
func upstreamSaid(b body) (codes []string, message string) {
	o, _ := b.doc.(map[string]any)
	if o == nil {
		return nil, strings.Join(b.texts, " ")
	}
	// Prometheus: {"status":"error","errorType":"bad_data","error":"…"}.
	if c, ok := o["errorType"].(string); ok {
		codes = append(codes, c)
	}
	var msgs []string
	for _, k := range []string{"error", "message"} {
		if s, ok := o[k].(string); ok {
			msgs = append(msgs, s)
		}
	}
	// The registry: {"errors":[{"code":"…","message":"…","detail":…}]}.
	if list, ok := o["errors"].([]any); ok {
		for _, e := range list {
			if e, ok := e.(map[string]any); ok {
				if c, ok := e["code"].(string); ok {
					codes = append(codes, c)
				}
				if s, ok := e["message"].(string); ok {
					msgs = append(msgs, s)
				}
			}
		}
	}
	return codes, strings.Join(msgs, " ")
}

var wordRE = regexp.MustCompile(`[A-Za-z]+`)

// filler are words whose loss loses nothing.
var filler = []string{"the", "and", "for", "with", "this", "that", "page"}

// significant are the words of an upstream message that signpost must
// keep: of three letters or more, less filler, the words of the status's
// reason phrase (the status is kept), and the words of the call itself,
// which signpost never echoes as if the upstream said them.
func significant(message string, status int, call string) []string {
	drop := map[string]bool{}
	for _, w := range filler {
		drop[w] = true
	}
	for _, w := range wordRE.FindAllString(strings.ToLower(http.StatusText(status)), -1) {
		drop[w] = true
	}
	for _, w := range wordRE.FindAllString(strings.ToLower(call), -1) {
		drop[w] = true
	}
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(message), -1) {
		if len(w) >= 3 && !drop[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func words(texts []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range texts {
		for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
			out[w] = true
		}
	}
	return out
}

// Kept reports whether signpost's answer keeps what the bare answer
// said, and how: its machine codes (any case) and every significant word
// of its message, or else a truer, more precise statement (a named field
// at fault with a stated constraint that the value sent breaks and every
// value the API accepts meets). It reports false with what was lost.
func Kept(m Mistake, rules *Rules, bare, got Answer) (bool, string) {
	up, b := read(bare.Body), read(got.Body)
	if !said(up, bare.Status, m) {
		return true, "the upstream said nothing beyond its status"
	}
	codes, message := upstreamSaid(up)
	need := significant(message, bare.Status, callText(m))
	have, tokens := words(b.texts), codeTokens(b.texts)
	var lostCodes, missing []string
	for _, c := range codes {
		if !tokens[strings.ToLower(c)] {
			lostCodes = append(lostCodes, c)
		}
	}
	for _, w := range need {
		if !have[w] {
			missing = append(missing, w)
		}
	}
	if len(lostCodes) == 0 && len(missing) == 0 {
		var kept []string
		if len(codes) > 0 {
			kept = append(kept, "the code "+strings.Join(codes, ", "))
		}
		if len(need) > 0 {
			kept = append(kept, "the words of "+strconv.Quote(clip(message)))
		}
		return true, "keeps " + strings.Join(kept, " and ")
	}
	route, vars := rules.Match(m.Method, m.Path)
	for _, n := range namedFields(b, m, route, vars) {
		if !n.found || n.partial || !m.atFault(n.part) || len(n.part.Valid) == 0 {
			continue
		}
		// Every rule stated for the field must hold: the value sent breaks
		// it, and every value the API accepts meets it.
		cs := constraints(n, b)
		if len(cs) > 0 && all(cs, func(c constraint) bool { return !c.check(n.part.Value) && all(n.part.Valid, c.check) }) {
			var what []string
			for _, c := range cs {
				what = append(what, c.what)
			}
			return true, fmt.Sprintf("a truer statement: %s, %s, which %q breaks", n.name, strings.Join(what, "; "), n.part.Value)
		}
	}
	var lost []string
	if len(lostCodes) > 0 {
		lost = append(lost, "the code "+strings.Join(lostCodes, ", "))
	}
	if len(missing) > 0 {
		lost = append(lost, "the words "+strings.Join(missing, ", ")+" of "+strconv.Quote(clip(message)))
	}
	return false, "lost " + strings.Join(lost, " and ")
}

// said reports whether a bare body says anything beyond its status: a
// machine code, or a significant word.
func said(up body, status int, m Mistake) bool {
	codes, message := upstreamSaid(up)
	return len(codes) > 0 || len(significant(message, status, callText(m))) > 0
}

func callText(m Mistake) string { return m.Method + " " + m.Path + " " + values(m) }

var codeRE = regexp.MustCompile(`[A-Za-z0-9_]+`)

// codeTokens are the tokens of texts that a machine code may be, in lower
// case: MANIFEST_UNKNOWN and manifest_unknown are one code.
func codeTokens(texts []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range texts {
		for _, w := range codeRE.FindAllString(strings.ToLower(s), -1) {
			out[w] = true
		}
	}
	return out
}

func all[T any](vs []T, f func(T) bool) bool {
	for _, v := range vs {
		if !f(v) {
			return false
		}
	}
	return true
}

func values(m Mistake) string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Value + " ")
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
