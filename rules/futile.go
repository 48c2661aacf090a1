package rules

import (
	"regexp"

	"gopkg.in/yaml.v3"
)

// futileCallText finds the call a futile rule names in its prose, as
// list_slots(room_id, date).
var futileCallText = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*\([^()]*\)`)

// futileCall resolves the call a futile rule names as what to do instead,
// and makes it the rule's next call unless the rule names one of its own:
// the agent gets it with the arguments filled, as a prerequisite call. An
// unknown route or argument is reported as next_call's are; an argument
// named alone that the failed route does not carry is left for the agent
// to fill (list_slots(room_id, date) from a booking that has no date).
func (l *loader) futileCall(p pendingRule, routes map[string]*Route, names []string) {
	e := p.rule
	text := futileCallText.FindString(e.Futile)
	if text == "" {
		return
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text, Line: p.node.Line, Column: p.node.Column}
	ref := l.callRef(n, join(p.path, "futile"), "list_slots(room_id, date)")
	if ref == nil {
		return
	}
	if target := routes[ref.name]; target != nil {
		kept := ref.args[:0]
		for _, a := range ref.args {
			takes := target.Field(a.name) != nil || contains(templateVars(target.Path), a.name)
			if takes && a.from == a.name && argumentField(p.route, a.from) == nil {
				continue
			}
			kept = append(kept, a)
		}
		ref.args = kept
	}
	c := l.resolve(ref, p.route, routes, names, nil)
	if c != nil && e.NextCall == nil {
		e.NextCall = c
	}
}
