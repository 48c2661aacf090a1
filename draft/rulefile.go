package draft

import (
	"fmt"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/observe"
)

// renderRules writes the rule file: a header saying what it is and how to
// review it, then one route per operation.
func renderRules(doc *observe.Document, routes []*routeDraft, skipped []string, o Options) []byte {
	w := &writer{}
	var requests, errs int64
	for _, op := range doc.Operations {
		requests += op.Requests
		for _, e := range op.Errors {
			errs += e.Count
		}
	}
	w.comment(0, "Draft rules, written by signpost draft from traffic observe mode saw")
	since := "an unrecorded time"
	if !doc.Since.IsZero() {
		since = doc.Since.UTC().Format(time.RFC3339)
	}
	w.comment(0, fmt.Sprintf("since %s: %s to %s, and %s no rule explained.",
		since, count(requests, "request"), count(int64(len(doc.Operations)), "operation"), count(errs, "upstream error")))
	if d := doc.Dropped; d.Operations+d.Errors+d.Values+d.Callers > 0 {
		w.comment(0, fmt.Sprintf("The record's bounds forgot %d operations, %d errors, %d values and %d pending recoveries:",
			d.Operations, d.Errors, d.Values, d.Callers))
		w.comment(0, "what follows rests on the rest.")
	}
	for _, s := range skipped {
		w.comment(0, "Left out: "+s)
	}
	w.comment(0, "")
	w.comment(0, "Review it before serving it. Above each inference, a comment gives its evidence:")
	w.comment(0, "requests, values seen, recoveries. Lines commented out had too little evidence")
	w.comment(0, fmt.Sprintf("(fewer than %d observations) or two readings as likely: confirm them, then", o.MinEvidence))
	w.comment(0, "uncomment. Codes and messages are guesses from the upstream's own words; reword")
	w.comment(0, "them for the agent. As written, the file passes signpost check, and the drafted")
	w.comment(0, "tests pass with signpost test.")
	if o.Upstream != "" {
		w.line(0, false, "upstream: "+blockScalar(o.Upstream))
	} else {
		w.comment(0, "upstream: give the API's base URL here, e.g. upstream: http://127.0.0.1:8081, or pass --upstream")
	}
	w.blank()
	w.line(0, false, "routes:")
	for i, r := range routes {
		if i > 0 {
			w.blank()
		}
		renderRoute(w, r)
	}
	return []byte(w.b.String())
}

func renderRoute(w *writer, r *routeDraft) {
	op := r.op
	kinds := "no error unexplained"
	if n := len(op.Errors); n > 0 {
		kinds = fmt.Sprintf("%d %s of error unexplained", n, map[bool]string{true: "kind", false: "kinds"}[n == 1])
	}
	w.comment(2, fmt.Sprintf("%s %s: %s, %d successful; %s", op.Method, op.Path, count(op.Requests, "request"), op.Successes, kinds))
	if r.nameNote != "" {
		w.comment(2, r.nameNote)
	}
	w.line(2, false, r.name+":")
	w.line(4, false, "method: "+scalar(op.Method))
	w.line(4, false, "path: "+blockScalar(op.Path))

	var declared, notes []*fieldDraft
	for _, f := range r.fields {
		if f.declared() {
			declared = append(declared, f)
		} else {
			notes = append(notes, f)
		}
	}
	if len(declared) > 0 {
		w.line(4, false, "fields:")
	} else if len(notes) > 0 {
		w.comment(4, "fields: none with enough evidence to declare")
	}
	for _, f := range declared {
		renderField(w, r, f)
	}
	for _, f := range notes {
		w.comment(6, f.evidence)
		if f.kind != "" {
			if f.why != "" {
				w.comment(6, f.why)
			}
			w.line(6, true, f.name+": "+flowMap(f.constraint()))
			commentAliases(w, f)
		}
	}

	active := false
	for _, d := range r.rules {
		active = active || d.active
	}
	if active {
		w.line(4, false, "errors:")
	} else if len(r.rules) > 0 {
		w.comment(4, "errors: none seen often enough to write; confirm these")
	}
	for _, d := range r.rules {
		renderRule(w, d)
	}
}

// constraint is the field's mapping, aliases aside.
func (f *fieldDraft) constraint() []kv {
	var pairs []kv
	if f.in != "" {
		pairs = append(pairs, kv{"in", scalar(f.in)})
	}
	if f.key != "" {
		pairs = append(pairs, kv{"key", scalar(f.key)})
	}
	switch f.kind {
	case "enum":
		pairs = append(pairs, kv{"enum", flowList(f.enum)})
	case "format":
		pairs = append(pairs, kv{"format", scalar(f.format)})
	case "pattern":
		pairs = append(pairs, kv{"pattern", scalar(f.pattern)}, kv{"example", scalar(f.example)})
	}
	return pairs
}

// renderField writes a declared field: its constraint when active, else
// the field alone, with the constraint commented out beside it.
func renderField(w *writer, r *routeDraft, f *fieldDraft) {
	w.comment(6, f.evidence)
	var where []kv
	if f.in != "" {
		where = append(where, kv{"in", scalar(f.in)})
	}
	if f.key != "" {
		where = append(where, kv{"key", scalar(f.key)})
	}
	bare := func() {
		if len(where) == 0 {
			w.line(6, false, f.name+":")
		} else {
			w.line(6, false, f.name+": "+flowMap(where))
		}
	}
	if !f.active || f.kind == "" {
		if f.kind != "" {
			w.comment(6, f.why)
			w.line(6, true, f.name+": "+flowMap(f.constraint()))
			commentAliases(w, f)
		}
		bare()
		return
	}
	cases := r.caseOnly[f.name]
	if len(f.aliases) == 0 && len(cases) == 0 {
		w.line(6, false, f.name+": "+flowMap(f.constraint()))
		return
	}
	w.line(6, false, f.name+":")
	for _, p := range f.constraint() {
		w.line(8, false, p.k+": "+p.v)
	}
	if len(cases) > 0 {
		w.comment(8, "recoveries also changed only the case ("+strings.Join(cases, ", ")+"): signpost suggests by case already")
	}
	written := false
	for _, a := range f.aliases {
		written = written || a.active
	}
	if written {
		w.line(8, false, "aliases:")
	} else if len(f.aliases) > 0 {
		w.comment(8, "aliases: none seen often enough; confirm these")
	}
	for _, a := range f.aliases {
		note := fmt.Sprintf("%s sent %s, then %s: %s", count(a.count, "recovery"), commentValue(a.from), commentValue(a.to), "an alias")
		if a.why != "" {
			note += "; " + a.why
		}
		w.comment(10, note)
		w.line(10, !a.active, scalar(a.from)+": "+scalar(a.to))
	}
}

// commentAliases lists, for an enum written commented out, the aliases
// recoveries suggest for it.
func commentAliases(w *writer, f *fieldDraft) {
	if len(f.aliases) == 0 {
		return
	}
	var parts []string
	for _, a := range f.aliases {
		parts = append(parts, fmt.Sprintf("%s → %s (%s)", commentValue(a.from), commentValue(a.to), count(a.count, "recovery")))
	}
	w.comment(6, "recoveries suggest aliases: "+strings.Join(parts, ", "))
}

// renderRule writes an error rule, commented out when it awaits
// confirmation.
func renderRule(w *writer, d *ruleDraft) {
	for _, e := range d.evidence {
		w.comment(6, e)
	}
	if !d.active {
		w.comment(6, "commented out: "+d.why)
	}
	if !d.verified {
		w.comment(6, "the match does not hold for the error's sample, so no test is drafted; check it with signpost explain")
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
			w.line(6, true, sub+text)
		default:
			w.line(6+len(sub), commented, text)
		}
	}
	put(true, false, "- match: "+flowMap(d.match()))
	put(false, false, "code: "+blockScalar(d.code))
	if d.fieldOK {
		put(false, false, "field: "+blockScalar(d.field))
	} else if d.fieldNote != "" {
		put(false, true, d.fieldNote)
	}
	if d.message != "" {
		put(false, false, "message: "+blockScalar(d.message))
	}
	if d.nextOK {
		put(false, false, "next_call: "+blockScalar(d.nextCall))
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
func (d *ruleDraft) match() []kv {
	pairs := []kv{{"status", fmt.Sprint(d.status)}}
	switch {
	case d.json != "" && d.regex != "":
		pairs = append(pairs, kv{"json", scalar(d.json)}, kv{"regex", scalar(d.regex)})
	case d.json != "":
		pairs = append(pairs, kv{"json", scalar(d.json)}, kv{"equals", scalar(d.equals)})
	default:
		pairs = append(pairs, kv{"body", scalar(d.body)})
	}
	return pairs
}
