package rules

import (
	"cmp"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// Kinds of a template segment, most specific first.
const (
	segLiteral  = iota // no variable: /tickets
	segMixed           // a variable with text around it: /files/v{version}
	segVariable        // a variable alone: /{ticket_id}
	segRest            // a variable that can take slashes: /{path:.*}
)

// tplSegment is one segment of a path template, split at the slashes
// outside its variables.
type tplSegment struct {
	text    string
	kind    int
	pattern string // a lone variable's own pattern, "" for mux's [^/]+
}

// templateSegments splits a path template at the slashes that lie outside
// its variables' braces.
func templateSegments(tpl string) []tplSegment {
	var segs []tplSegment
	depth, start := 0, 1
	for i := 1; i <= len(tpl); i++ {
		if i < len(tpl) {
			switch tpl[i] {
			case '{':
				depth++
				continue
			case '}':
				depth--
				continue
			}
			if tpl[i] != '/' || depth > 0 {
				continue
			}
		}
		text := tpl[start:i]
		seg := tplSegment{text: text, kind: segLiteral}
		if open := strings.IndexByte(text, '{'); open >= 0 {
			seg.kind = segMixed
			if open == 0 && text[len(text)-1] == '}' && balancedOnce(text) {
				seg.kind = segVariable
				if _, p, ok := strings.Cut(text[1:len(text)-1], ":"); ok && p != "[^/]+" {
					seg.pattern = p
					if re, err := syntax.Parse(p, syntax.Perl); err == nil && mayHold(re, '/') {
						seg.kind = segRest
					}
				}
			}
		}
		segs = append(segs, seg)
		start = i + 1
	}
	return segs
}

// balancedOnce reports whether s, which starts with '{', closes its first
// brace only at its end: one variable fills the whole segment.
func balancedOnce(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 && i != len(s)-1 {
				return false
			}
		}
	}
	return depth == 0
}

// ComparePrecedence orders two routes of one method by which wins a path
// both match: segment by segment from the left, a literal segment beats
// one with text around a variable, which beats a variable alone, which
// beats a variable whose pattern can take a slash; then the template with
// fewer variables wins; then the route declared first. It returns a
// negative number when a wins, zero when only file order tells them apart.
func ComparePrecedence(a, b *Route) int {
	return precedenceOf(a).compare(precedenceOf(b))
}

// precedence is what ComparePrecedence compares of a route's template.
type precedence struct {
	kinds []int // each segment's kind
	vars  int
}

func precedenceOf(r *Route) precedence {
	segs := templateSegments(r.Path)
	p := precedence{kinds: make([]int, len(segs)), vars: len(templateVars(r.Path))}
	for i, s := range segs {
		p.kinds[i] = s.kind
	}
	return p
}

func (p precedence) compare(q precedence) int {
	for i := range min(len(p.kinds), len(q.kinds)) {
		if c := cmp.Compare(p.kinds[i], q.kinds[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(p.vars, q.vars)
}

// ByPrecedence returns routes in the order a router tries them: the most
// specific first (see ComparePrecedence), file order among equals.
func ByPrecedence(routes []*Route) []*Route {
	type ranked struct {
		r *Route
		p precedence
	}
	rs := make([]ranked, len(routes))
	for i, r := range routes {
		rs[i] = ranked{r, precedenceOf(r)}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return a.p.compare(b.p) })
	out := make([]*Route, len(rs))
	for i, r := range rs {
		out[i] = r.r
	}
	return out
}

// shadows reports whether every path b's template matches, a's matches
// too, as far as can be told from their segments: the same number of
// segments (or a ending in a variable that takes every rest), each of a's
// literal where b has the same literal, or a variable taking every value
// b's segment can hold.
func shadows(a, b []tplSegment) bool {
	for i, s := range a {
		if i == len(a)-1 && s.kind == segRest && len(b) >= len(a) && (s.pattern == ".*" || s.pattern == ".+" && b[i].pattern != ".*") {
			return true // takes the rest of every path, slashes and all
		}
		if i >= len(b) {
			return false
		}
		t := b[i]
		switch {
		case s.kind == segLiteral:
			if t.kind != segLiteral || t.text != s.text {
				return false
			}
		case s.kind == segMixed:
			if t.kind != segMixed || templateShape("/"+t.text) != templateShape("/"+s.text) {
				return false
			}
		case s.kind == segRest:
			if t.kind != segRest || t.pattern != s.pattern {
				return false
			}
		case !takesEvery(s.pattern, t):
			return false
		}
	}
	return len(a) == len(b)
}

// takesEvery reports whether a variable of pattern (mux's [^/]+ when "")
// alone in its segment matches every value segment t can hold.
func takesEvery(pattern string, t tplSegment) bool {
	switch t.kind {
	case segLiteral:
		if pattern == "" {
			return t.text != "" && !strings.Contains(t.text, "/")
		}
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		return err == nil && re.MatchString(t.text)
	case segVariable:
		if pattern == t.pattern {
			return true
		}
		return (pattern == "" || pattern == ".+" || pattern == ".*") && t.pattern != "" && neverSlashOrEmpty(t.pattern, pattern == ".*")
	}
	return false
}

// neverSlashOrEmpty reports whether pattern can match no string holding a
// slash, nor, unless empty is allowed, the empty string.
func neverSlashOrEmpty(pattern string, empty bool) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil || mayHold(re, '/') {
		return false
	}
	if empty {
		return true
	}
	full, err := regexp.Compile("^(?:" + pattern + ")$")
	return err == nil && !full.MatchString("")
}

// mayHold reports whether a regular expression can produce the rune r.
func mayHold(re *syntax.Regexp, r rune) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpLiteral:
		for _, l := range re.Rune {
			if l == r || re.Flags&syntax.FoldCase != 0 && strings.EqualFold(string(l), string(r)) {
				return true
			}
		}
		return false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= r && r <= re.Rune[i+1] {
				return true
			}
		}
		return false
	}
	for _, sub := range re.Sub {
		if mayHold(sub, r) {
			return true
		}
	}
	return false
}

// unreachable reports each route that no request can reach: another route
// of the same method wins every path it matches (see ComparePrecedence).
func (c *Config) unreachable() Problems {
	var out Problems
	segs := make([][]tplSegment, len(c.Routes))
	ranks := make([]precedence, len(c.Routes))
	for i, r := range c.Routes {
		segs[i], ranks[i] = templateSegments(r.Path), precedenceOf(r)
	}
	for j, b := range c.Routes {
		for i, a := range c.Routes {
			if i == j || a.Method != b.Method || a.When != nil {
				continue // a route with when: takes only some of its paths' requests
			}
			wins := ranks[i].compare(ranks[j])
			if wins > 0 || wins == 0 && i > j || !shadows(segs[i], segs[j]) {
				continue
			}
			fix := "narrow that one's path"
			if wins == 0 {
				fix = "declare this route above that one, or " + fix
			}
			out = append(out, Problem{File: c.File, Line: b.Pos.Line, Column: b.Pos.Column, Path: "routes." + b.Name + ".path", Warning: true,
				Message: fmt.Sprintf("can never be reached: %s %s (%s, line %d) takes every request for %s %s; %s",
					a.Method, a.written(), a.Name, a.Pos.Line, b.Method, b.written(), fix)})
			break
		}
	}
	return out
}
