package rules

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// simplePattern is a pattern of the kind most ids and codes are declared
// with, such as ^T-[0-9]+$ or ^[a-z]{2}-[0-9]{4,8}$: anchored at both
// ends, a sequence of runes and classes, each repeated. When every
// repeated step of variable length is followed by one that must match and
// shares no rune with it, taking as many runes as a step allows is the
// only way the whole can match, so a single pass decides it, with a few
// dozen instructions where regexp's machinery runs thousands. Checking a
// field is on the path of every rewritten error.
type simplePattern struct {
	re    *regexp.Regexp // what the steps were compiled from
	steps []patternStep
}

// patternStep matches between min and max runes (max -1: no bound), each
// within one of the inclusive ranges lo-hi, listed as pairs.
type patternStep struct {
	ranges   []rune
	min, max int
}

// compileSimple returns re as a simplePattern, or nil when re is not of
// that kind and regexp must match it.
func compileSimple(re *regexp.Regexp) *simplePattern {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil || tree.Op != syntax.OpConcat || len(tree.Sub) < 2 {
		return nil
	}
	subs := tree.Sub
	if subs[0].Op != syntax.OpBeginText || subs[len(subs)-1].Op != syntax.OpEndText {
		return nil
	}
	p := &simplePattern{re: re}
	for _, s := range subs[1 : len(subs)-1] {
		switch s.Op {
		case syntax.OpLiteral:
			if s.Flags&syntax.FoldCase != 0 {
				return nil
			}
			for _, r := range s.Rune {
				p.steps = append(p.steps, patternStep{ranges: []rune{r, r}, min: 1, max: 1})
			}
		case syntax.OpPlus, syntax.OpStar, syntax.OpQuest, syntax.OpRepeat:
			ranges := oneRune(s.Sub[0])
			if ranges == nil || s.Flags&syntax.NonGreedy != 0 {
				return nil
			}
			step := patternStep{ranges: ranges, min: s.Min, max: s.Max}
			switch s.Op {
			case syntax.OpPlus:
				step.min, step.max = 1, -1
			case syntax.OpStar:
				step.min, step.max = 0, -1
			case syntax.OpQuest:
				step.min, step.max = 0, 1
			}
			p.steps = append(p.steps, step)
		default:
			if ranges := oneRune(s); ranges != nil {
				p.steps = append(p.steps, patternStep{ranges: ranges, min: 1, max: 1})
				continue
			}
			return nil
		}
	}
	// A step of variable length must be followed by one that must match
	// and shares no rune with it, or be the last.
	for i, s := range p.steps {
		if s.min == s.max || i == len(p.steps)-1 {
			continue
		}
		next := p.steps[i+1]
		if next.min == 0 || overlap(s.ranges, next.ranges) {
			return nil
		}
	}
	return p
}

// oneRune returns the ranges of a node that matches exactly one rune, or
// nil.
func oneRune(s *syntax.Regexp) []rune {
	switch s.Op {
	case syntax.OpLiteral:
		if len(s.Rune) == 1 && s.Flags&syntax.FoldCase == 0 {
			return []rune{s.Rune[0], s.Rune[0]}
		}
	case syntax.OpCharClass:
		if len(s.Rune) > 0 {
			return s.Rune
		}
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case syntax.OpAnyChar:
		return []rune{0, utf8.MaxRune}
	}
	return nil
}

func overlap(a, b []rune) bool {
	for i := 0; i < len(a); i += 2 {
		for j := 0; j < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}

func (s *patternStep) has(r rune) bool {
	for i := 0; i < len(s.ranges); i += 2 {
		if s.ranges[i] <= r && r <= s.ranges[i+1] {
			return true
		}
	}
	return false
}

// MatchString reports whether the whole of v matches. Bytes that are not
// UTF-8 read as U+FFFD, one per byte, as regexp reads them.
func (p *simplePattern) MatchString(v string) bool {
	i := 0
	for k := range p.steps {
		s := &p.steps[k]
		n := 0
		for (s.max < 0 || n < s.max) && i < len(v) {
			r, w := rune(v[i]), 1
			if r >= utf8.RuneSelf {
				r, w = utf8.DecodeRuneInString(v[i:])
			}
			if !s.has(r) {
				break
			}
			i += w
			n++
		}
		if n < s.min {
			return false
		}
	}
	return i == len(v)
}
