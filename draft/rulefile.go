package draft

import (
	"fmt"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules/rulefile"
)

// renderRules writes the rule file: a header saying what it is and how to
// review it, then one route per operation.
func renderRules(doc *observe.Document, routes, unproven []*routeDraft, skipped []string, merged int, o Options) []byte {
	w := &rulefile.Writer{}
	var requests, errs int64
	for _, op := range doc.Operations {
		requests += op.Requests
		for _, e := range op.Errors {
			errs += e.Count
		}
	}
	w.Comment(0, "Draft rules, written by signpost draft from traffic observe mode saw")
	since := "an unrecorded time"
	if !doc.Since.IsZero() {
		since = doc.Since.UTC().Format(time.RFC3339)
	}
	w.Comment(0, fmt.Sprintf("since %s: %s to %s, and %s no rule explained.",
		since, count(requests, "request"), count(int64(len(doc.Operations)), "operation"), count(errs, "upstream error")))
	if d := doc.Dropped; d.Operations+d.Errors+d.Values+d.Callers > 0 {
		w.Comment(0, fmt.Sprintf("The record's bounds forgot %d operations, %d errors, %d values and %d pending recoveries:",
			d.Operations, d.Errors, d.Values, d.Callers))
		w.Comment(0, "what follows rests on the rest.")
	}
	if merged > 0 {
		w.Comment(0, fmt.Sprintf("%s under paths that differ only in a name (a label, a repository) are drafted", count(int64(merged), "more operation")))
		w.Comment(0, "as the route of their template.")
	}
	for _, s := range skipped {
		w.Comment(0, "Left out: "+s)
	}
	w.Comment(0, "")
	w.Comment(0, "Review it before serving it. Above each inference, a comment gives its evidence:")
	w.Comment(0, "requests, values seen, recoveries. Lines commented out had too little evidence")
	w.Comment(0, fmt.Sprintf("(fewer than %d observations) or two readings as likely: confirm them, then", o.MinEvidence))
	w.Comment(0, "uncomment. Codes and messages are guesses from the upstream's own words; reword")
	w.Comment(0, "them for the agent. As written, the file passes signpost check, and the drafted")
	w.Comment(0, "tests pass with signpost test.")
	if o.Upstream != "" {
		w.Line(0, "upstream: "+rulefile.BlockScalar(o.Upstream))
	} else {
		w.Comment(0, "upstream: give the API's base URL here, e.g. upstream: http://127.0.0.1:8081, or pass --upstream")
	}
	w.Blank()
	w.Line(0, "routes:")
	for i, r := range routes {
		if i > 0 {
			w.Blank()
		}
		renderRoute(w, r)
	}
	if len(unproven) > 0 {
		w.Blank()
		w.Comment(2, "Calls that never succeeded: no route is drafted for them, since nothing shows the")
		w.Comment(2, "API serves them; signpost answers them by naming the routes there are. Uncomment one")
		w.Comment(2, "whose path is right, and write its error rules once calls succeed.")
	}
	for _, r := range unproven {
		w.Blank()
		renderUnproven(w, r)
	}
	return w.Bytes()
}

// renderUnproven writes a route no call of which succeeded, commented out:
// its name, method and path, which serve as they are once uncommented, and
// the errors it met.
func renderUnproven(w *rulefile.Writer, r *routeDraft) {
	op := r.op
	w.Comment(2, fmt.Sprintf("%s %s: %s, none successful", op.Method, op.Path, count(op.Requests, "request")))
	for i := range op.Errors {
		w.Comment(2, fmt.Sprintf("met %d %s: %s", op.Errors[i].Status, textNote(&op.Errors[i]), count(op.Errors[i].Count, "time")))
	}
	w.Inactive(2, r.name+":")
	w.Inactive(2, "  method: "+rulefile.Scalar(op.Method))
	w.Inactive(2, "  path: "+rulefile.BlockScalar(op.Path))
	if wh := op.When; wh != nil {
		w.Inactive(2, "  when: "+rulefile.FlowMap(rulefile.Pair(wh.In, rulefile.Scalar(wh.Key)), rulefile.Pair("equals", rulefile.Scalar(wh.Equals))))
	}
}

func renderRoute(w *rulefile.Writer, r *routeDraft) {
	op := r.op
	kinds := "no error unexplained"
	if n := len(op.Errors); n > 0 {
		kinds = fmt.Sprintf("%d %s of error unexplained", n, map[bool]string{true: "kind", false: "kinds"}[n == 1])
	}
	w.Comment(2, fmt.Sprintf("%s %s: %s, %d successful; %s", op.Method, op.Path, count(op.Requests, "request"), op.Successes, kinds))
	if r.nameNote != "" {
		w.Comment(2, r.nameNote)
	}
	w.Line(2, r.name+":")
	w.Line(4, "method: "+rulefile.Scalar(op.Method))
	w.Line(4, "path: "+rulefile.BlockScalar(op.Path))
	if wh := op.When; wh != nil {
		w.Line(4, "when: "+rulefile.FlowMap(rulefile.Pair(wh.In, rulefile.Scalar(wh.Key)), rulefile.Pair("equals", rulefile.Scalar(wh.Equals))))
	}

	var declared, notes []*fieldDraft
	for _, f := range r.fields {
		if f.declared() {
			declared = append(declared, f)
		} else {
			notes = append(notes, f)
		}
	}
	if len(declared) > 0 {
		w.Line(4, "fields:")
	} else if len(notes) > 0 {
		w.Comment(4, "fields: none with enough evidence to declare")
	}
	for _, f := range declared {
		renderField(w, r, f)
	}
	for _, f := range notes {
		w.Comment(6, f.evidence)
		if f.kind != "" {
			if f.why != "" {
				w.Comment(6, f.why)
			}
			w.Inactive(6, f.name+": "+rulefile.FlowMap(f.constraint()...))
			commentAliases(w, f)
		}
	}

	active := false
	for _, d := range r.rules {
		active = active || d.active
	}
	if active {
		w.Line(4, "errors:")
	} else if len(r.rules) > 0 {
		w.Comment(4, "errors: none seen often enough to write; confirm these")
	}
	for _, d := range r.rules {
		renderRule(w, d)
	}
}

// constraint is the field's mapping, aliases aside.
func (f *fieldDraft) constraint() []rulefile.KV {
	var pairs []rulefile.KV
	if f.in != "" {
		pairs = append(pairs, rulefile.Pair("in", rulefile.Scalar(f.in)))
	}
	if f.key != "" {
		pairs = append(pairs, rulefile.Pair("key", rulefile.Scalar(f.key)))
	}
	switch f.kind {
	case "enum":
		pairs = append(pairs, rulefile.Pair("enum", rulefile.FlowList(f.enum)))
	case "const":
		pairs = append(pairs, rulefile.Pair("const", rulefile.Scalar(f.constant)))
	case "format":
		pairs = append(pairs, rulefile.Pair("format", rulefile.Scalar(f.format)))
	case "pattern":
		pairs = append(pairs, rulefile.Pair("pattern", rulefile.Scalar(f.pattern)), rulefile.Pair("example", rulefile.Scalar(f.example)))
	}
	return pairs
}

// renderField writes a declared field: its constraint when active, else
// the field alone, with the constraint commented out beside it.
func renderField(w *rulefile.Writer, r *routeDraft, f *fieldDraft) {
	w.Comment(6, f.evidence)
	var where []rulefile.KV
	if f.in != "" {
		where = append(where, rulefile.Pair("in", rulefile.Scalar(f.in)))
	}
	if f.key != "" {
		where = append(where, rulefile.Pair("key", rulefile.Scalar(f.key)))
	}
	bare := func() {
		if len(where) == 0 {
			w.Line(6, f.name+":")
		} else {
			w.Line(6, f.name+": "+rulefile.FlowMap(where...))
		}
	}
	if !f.active || f.kind == "" {
		if f.kind != "" {
			w.Comment(6, f.why)
			w.Inactive(6, f.name+": "+rulefile.FlowMap(f.constraint()...))
			commentAliases(w, f)
		}
		bare()
		return
	}
	cases := r.caseOnly[f.name]
	if len(f.aliases) == 0 && len(cases) == 0 {
		w.Line(6, f.name+": "+rulefile.FlowMap(f.constraint()...))
		return
	}
	w.Line(6, f.name+":")
	for _, p := range f.constraint() {
		w.Line(8, p.Key+": "+p.Value)
	}
	if len(cases) > 0 {
		w.Comment(8, "recoveries also changed only the case ("+strings.Join(cases, ", ")+"): signpost suggests by case already")
	}
	written := false
	for _, a := range f.aliases {
		written = written || a.active
	}
	if written {
		w.Line(8, "aliases:")
	} else if len(f.aliases) > 0 {
		w.Comment(8, "aliases: none seen often enough; confirm these")
	}
	for _, a := range f.aliases {
		note := fmt.Sprintf("%s sent %s, then %s: %s", count(a.count, "recovery"), commentValue(a.from), commentValue(a.to), "an alias")
		if a.why != "" {
			note += "; " + a.why
		}
		w.Comment(10, note)
		alias := rulefile.Scalar(a.from) + ": " + rulefile.Scalar(a.to)
		if a.active {
			w.Line(10, alias)
		} else {
			w.Inactive(10, alias)
		}
	}
}

// commentAliases lists, for an enum written commented out, the aliases
// recoveries suggest for it.
func commentAliases(w *rulefile.Writer, f *fieldDraft) {
	if len(f.aliases) == 0 {
		return
	}
	var parts []string
	for _, a := range f.aliases {
		parts = append(parts, fmt.Sprintf("%s → %s (%s)", commentValue(a.from), commentValue(a.to), count(a.count, "recovery")))
	}
	w.Comment(6, "recoveries suggest aliases: "+strings.Join(parts, ", "))
}

// renderRule writes an error rule, commented out when it awaits
// confirmation.
func renderRule(w *rulefile.Writer, d *ruleDraft) {
	for _, e := range d.evidence {
		w.Comment(6, e)
	}
	if !d.active {
		w.Comment(6, "commented out: "+d.why)
	}
	if !d.verified {
		w.Comment(6, "the match does not hold for the error's sample, so no test is drafted; check it with signpost explain")
	}
	off := !d.active
	// put writes a line of the rule: the first at the list's indent, the
	// rest below it; a rule commented out keeps its shape behind the #.
	put := func(first bool, commented bool, text string) {
		sub := "  "
		if first {
			sub = ""
		}
		switch {
		case off:
			w.Inactive(6, sub+text)
		case commented:
			w.Inactive(6+len(sub), text)
		default:
			w.Line(6+len(sub), text)
		}
	}
	put(true, false, "- match: "+rulefile.FlowMap(d.match()...))
	put(false, false, "code: "+rulefile.BlockScalar(d.code))
	if d.fieldOK {
		put(false, false, "field: "+rulefile.BlockScalar(d.field))
	} else if d.fieldNote != "" && d.noteField != nil && !d.noteField.declared() {
		// Uncommented, the line would name a field the route lacks.
		w.Comment(8, strings.Replace(d.fieldNote, "  # ", ", not declared: ", 1))
	} else if d.fieldNote != "" {
		put(false, true, d.fieldNote)
	}
	if d.message != "" {
		put(false, false, "message: "+rulefile.BlockScalar(d.message))
	}
	if d.nextOK {
		put(false, false, "next_call: "+rulefile.BlockScalar(d.nextCall))
	} else if d.nextNote != "" {
		put(false, true, d.nextNote)
	}
	if d.retryable {
		put(false, false, "retryable: true")
	} else if d.retryNote != "" {
		put(false, true, d.retryNote)
	}
}

// match is the rule's match mapping.
func (d *ruleDraft) match() []rulefile.KV {
	pairs := []rulefile.KV{rulefile.Pair("status", fmt.Sprint(d.status))}
	switch {
	case d.json != "" && d.regex != "":
		pairs = append(pairs, rulefile.Pair("json", rulefile.Scalar(d.json)), rulefile.Pair("regex", rulefile.Scalar(d.regex)))
	case d.json != "":
		pairs = append(pairs, rulefile.Pair("json", rulefile.Scalar(d.json)), rulefile.Pair("equals", rulefile.Scalar(d.equals)))
	default:
		pairs = append(pairs, rulefile.Pair("body", rulefile.Scalar(d.body)))
	}
	return pairs
}
