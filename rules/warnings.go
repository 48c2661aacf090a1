package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/signpost-proxy/signpost/internal/redact"
)

// DefaultMessageTokens is the most tokens a rule's message may cost before
// check warns: past it, an error body starts to compete with the agent's
// task for attention.
const DefaultMessageTokens = 60

// Warnings returns what check reports beside problems, in file order: rules
// that can never match because an earlier rule of the route takes every
// response they would, declared fields that nothing uses, and messages
// longer than the token budget, unmatched: passthrough, which relays what
// an upstream error tells, and fields holding a credential a body would
// echo.
func (c *Config) Warnings() Problems {
	var out Problems
	warn := func(pos Pos, path, format string, args ...any) {
		out = append(out, Problem{File: c.File, Line: pos.Line, Column: pos.Column, Path: path,
			Message: fmt.Sprintf(format, args...), Warning: true})
	}
	used := map[*Field]bool{}
	for _, r := range c.Routes {
		for _, e := range r.Errors {
			used[e.Field] = true
			if e.NextCall != nil {
				for _, a := range e.NextCall.Args {
					used[a.From] = true
				}
			}
		}
	}
	for _, r := range c.Routes {
		for i, e := range r.Errors {
			path := fmt.Sprintf("routes.%s.errors[%d]", r.Name, i)
			for _, earlier := range r.Errors[:i] {
				if earlier.Match.covers(&e.Match) {
					warn(e.Pos, path, "can never match: errors[%d] (line %d) takes every response it would; move this rule above it or narrow that one", earlier.Index, earlier.Pos.Line)
					break
				}
			}
			if n := Tokens(e.Message); n > DefaultMessageTokens {
				warn(e.Pos, path+".message", "costs %d tokens in every error it answers, over %d; say the rule and the next step in fewer words", n, DefaultMessageTokens)
			}
		}
		for _, f := range r.Fields {
			if used[f] || f.Required || f.Enum != nil || f.Format != nil || f.Pattern != nil || f.MaxLength > 0 || f.Lookup != nil || f.Description != "" {
				continue
			}
			warn(f.Pos, fmt.Sprintf("routes.%s.fields.%s", r.Name, f.Name),
				"is declared but nothing uses it: no constraint, and no error rule or call names it; give it one, e.g. {required: true}, or drop it")
		}
	}
	out = append(out, c.unreachable()...)
	c.passthroughWarnings(warn)
	c.credentialWarnings(used, warn)
	slices.SortStableFunc(out, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return out
}

// covers reports whether every response m2 matches, m matches too, as far
// as can be told without running them: m's statuses include m2's, and m
// asks nothing of the body that m2 does not ask as well.
func (m *Match) covers(m2 *Match) bool {
	for i := range m.Status {
		if m2.Status[i]&^m.Status[i] != 0 {
			return false
		}
	}
	if m.Body != nil && (m2.Body == nil || m.Body.String() != m2.Body.String()) {
		return false
	}
	if m.JSON == "" {
		return true
	}
	if m.JSON != m2.JSON {
		return false
	}
	switch {
	case m.Equals != nil:
		return m2.Equals != nil && *m.Equals == *m2.Equals
	case m.Contains != nil:
		return m2.Contains != nil && strings.Contains(*m2.Contains, *m.Contains) ||
			m2.Equals != nil && strings.Contains(*m2.Equals, *m.Contains)
	case m.Regex != nil:
		return m2.Regex != nil && m.Regex.String() == m2.Regex.String()
	}
	return true // m asks only that the path exists, which any condition on it implies
}

// passthroughWarnings warns where the file or a route sets unmatched:
// passthrough: an error no rule matches then reaches the agent as the
// upstream wrote it, with whatever secrets, hosts and stack traces it holds.
func (c *Config) passthroughWarnings(warn func(pos Pos, path, format string, args ...any)) {
	const why = "passes errors no rule matches to the agent as the upstream wrote them, secrets, internal hosts and stack traces included; use wrap, which quotes only a short line that is safe"
	if c.Unmatched == Passthrough && c.UnmatchedPos.Line > 0 {
		warn(c.UnmatchedPos, "unmatched", why)
	}
	for _, r := range c.Routes {
		if r.Unmatched == Passthrough && r.UnmatchedPos.Line > 0 {
			warn(r.UnmatchedPos, "routes."+r.Name+".unmatched", why)
		}
	}
}

// credentialWarnings warns on each field named like a credential
// (Authorization, X-Api-Key, password) that an error rule or a call names,
// to echo it: bodies mask such a value whole, so the agent never sees
// what it sent there.
func (c *Config) credentialWarnings(used map[*Field]bool, warn func(pos Pos, path, format string, args ...any)) {
	for _, r := range c.Routes {
		for _, f := range r.Fields {
			if !redact.CredentialName(f.Key) && !redact.CredentialName(f.Name) {
				continue
			}
			if used[f] {
				warn(f.Pos, fmt.Sprintf("routes.%s.fields.%s", r.Name, f.Name),
					"holds a credential (%s %s), which bodies never echo: received shows it masked, as \"Bearer [masked]\" or \"[masked]\"; say in a message what a valid one looks like", f.In, f.Key)
			}
		}
	}
}
