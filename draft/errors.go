package draft

import (
	"cmp"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules/rulefile"
	"github.com/tidwall/gjson"
)

// maxText is how much of an error's identifying text the record keeps: a
// text this long may have been cut, so it is matched as a prefix.
const maxText = 200

// ruleDraft is what the draft says of one upstream error of a route.
type ruleDraft struct {
	err      *observe.Error
	group    *errGroup
	active   bool   // written, not commented out
	why      string // why it is commented out
	evidence []string

	status int
	json   string // the gjson path, for a JSON body
	equals string // the text at json, when it was not cut
	regex  string // a prefix of the text at json, when it may have been cut
	body   string // a regex on a body that is not JSON
	// verified is set when the match holds for the error's sample, which
	// is then a test case.
	verified bool

	code    string
	field   string // the field blamed, when declared and trusted
	fieldOK bool
	// fieldNote is a field: line written commented out, with why, about
	// noteField; a plain comment when that field is not declared, since
	// the line would not load uncommented.
	fieldNote string
	noteField *fieldDraft
	// encoding is the change of Content-Type recoveries made, when the
	// body's encoding is at fault rather than a field.
	encoding  *observe.Blame
	message   string
	nextCall  string
	nextOK    bool
	nextNote  string
	retryable bool   // write retryable: true
	retryNote string // a retryable: line written commented out, with why
}

// routeRef is what an error rule needs of the other routes: their names
// and the fields and path variables a call could pass.
type routeRef struct {
	name   string
	args   []string // path variables and declared fields, in path then field order
	method string
	path   string
}

// inferRule drafts the error rule for one upstream error of op.
func inferRule(r *routeDraft, g *errGroup, routes map[string]*routeRef, o Options) *ruleDraft {
	op := r.op
	e := &g.err
	d := &ruleDraft{err: e, group: g, status: e.Status, active: true}
	what := textNote(e)
	if g.members > 1 {
		what = fmt.Sprintf("%s and %d more texts alike but for the values they quote", what, g.members-1)
	}
	d.evidence = append(d.evidence, fmt.Sprintf("%d %s: %s (%s), first seen %s, last %s; %d recovered within the window",
		e.Status, what, count(e.Count, "time"), percentOf(e.Count, op.Requests, "requests"),
		e.FirstSeen.UTC().Format("2006-01-02T15:04:05Z"), e.LastSeen.UTC().Format("2006-01-02T15:04:05Z"), e.Recovered))
	if e.Count < int64(o.MinEvidence) {
		d.active, d.why = false, fmt.Sprintf("seen fewer than %d times; confirm it", o.MinEvidence)
	}
	if e.Status < 300 {
		// Enforced, the rule makes the route read its successes, and
		// answers what it matches as an error.
		d.active, d.why = false, fmt.Sprintf("an error carried in a %d; confirm that no success reads the same", e.Status)
	}
	d.matchFor(g)

	// The field blamed: the body's encoding when recoveries changed it;
	// else the field the error's text names, whatever else callers changed
	// on the way (they recompute timestamps and reword text on each
	// retry); else the one recoveries changed most, alone.
	var blame *observe.Blame
	named := namedField(r, e.Text)
	if enc := encodingChange(e); enc != nil {
		d.encoding = enc
		d.evidence = append(d.evidence, fmt.Sprintf("%d of %s changed the body's Content-Type%s: the encoding is at fault, not a field", enc.Count, count(e.Recovered, "recovery"), changeNote(enc.Changes)))
	} else if named != nil {
		blame = &observe.Blame{Field: named.obs.Name, In: named.obs.In}
		for _, b := range e.Blamed {
			if b.Field == named.obs.Name && b.In == named.obs.In {
				blame.Count, blame.Changes = b.Count, b.Changes
			}
		}
		d.field, d.fieldOK = named.name, true
		named.used = named.used || d.active
		var note string
		switch top := len(e.Blamed) > 0 && e.Blamed[0].Field == named.obs.Name && e.Blamed[0].In == named.obs.In; {
		case top:
			note = fmt.Sprintf("%d of %s changed %s%s", blame.Count, count(e.Recovered, "recovery"), blame.Field, changeNote(blame.Changes))
		case blame.Count > 0:
			note = fmt.Sprintf("the error names %s, which %d of %s changed%s; they also changed %s, as retries do",
				named.obs.Name, blame.Count, count(e.Recovered, "recovery"), changeNote(blame.Changes), e.Blamed[0].Field)
		case len(e.Blamed) > 0:
			note = fmt.Sprintf("the error names %s; recoveries changed %s, as retries do", named.obs.Name, e.Blamed[0].Field)
		default:
			note = fmt.Sprintf("the error names %s", named.obs.Name)
		}
		d.evidence = append(d.evidence, note)
	} else if len(e.Blamed) > 0 {
		blame = &e.Blamed[0]
		fd := r.field(blame.Field, blame.In)
		tied := len(e.Blamed) > 1 && e.Blamed[1].Count == blame.Count
		switch {
		case fd == nil || fd.credential:
			d.evidence = append(d.evidence, fmt.Sprintf("recoveries changed %s (%s), which the draft does not declare", blame.Field, count(blame.Count, "time")))
			blame = nil
		case tied:
			d.fieldNote = fmt.Sprintf("field: %s  # recoveries changed %s and %s equally often (%s each); choose one", fd.name, blame.Field, e.Blamed[1].Field, count(blame.Count, "time"))
			d.noteField = fd
			blame = nil
		case blame.Count < int64(o.MinEvidence):
			d.field = fd.name
			d.fieldNote = fmt.Sprintf("field: %s  # blamed by %s, fewer than %d; confirm it", fd.name, count(blame.Count, "recovery"), o.MinEvidence)
			d.noteField = fd
		default:
			d.field, d.fieldOK = fd.name, true
			fd.used = fd.used || d.active
			d.evidence = append(d.evidence, fmt.Sprintf("%d of %s changed %s%s", blame.Count, count(e.Recovered, "recovery"), blame.Field, changeNote(blame.Changes)))
		}
	}

	// The call that had to come first.
	var prereq *routeRef
	if len(e.Before) > 0 {
		b := e.Before[0]
		target := routes[b.Value]
		tied := len(e.Before) > 1 && e.Before[1].Count == b.Count
		switch {
		case target == nil || target.name == r.name:
			d.evidence = append(d.evidence, fmt.Sprintf("%s recovered after a success of %s, which the draft has no route for", count(b.Count, "caller"), b.Value))
		case tied:
			d.nextNote = fmt.Sprintf("next_call: %s  # as often preceded by %s; choose one", target.call(r), e.Before[1].Value)
		default:
			prereq = target
			d.nextCall = target.call(r)
			d.nextOK = b.Count >= int64(o.MinEvidence)
			d.evidence = append(d.evidence, fmt.Sprintf("%s succeeded once %s (%s) had: the call to make first", count(b.Count, "repeat"), b.Value, target.name))
			if !d.nextOK {
				d.nextNote = fmt.Sprintf("next_call: %s  # seen %s, fewer than %d; confirm it", d.nextCall, count(b.Count, "time"), o.MinEvidence)
			}
		}
	}
	if d.nextOK && d.active {
		for _, a := range strings.Split(strings.TrimSuffix(d.nextCall[strings.Index(d.nextCall, "(")+1:], ")"), ", ") {
			if fd := r.fieldNamed(a); fd != nil {
				fd.used = true
			}
		}
	}

	d.code = ruleCode(r, e, blame, prereq)
	d.message = ruleMessage(op.Method, e, g, prereq, d.fieldOK && r.fieldNamed(d.field).active)
	switch {
	case named != nil && e.Status < 500 && prereq == nil && named.kind != "enum" && d.message == "":
		// The upstream named the field and said what is wrong with it: its
		// words, rather than a constraint drafted from what callers sent.
		d.message = "{upstream}"
	}
	switch {
	case d.encoding != nil:
		d.code = "unsupported_body_encoding"
		d.message = "send the body as " + d.encoding.Changes[0].To + ", not " + cmp.Or(d.encoding.Changes[0].From, "without a Content-Type")
	case named != nil && e.Status < 500 && prereq == nil && requiredText.MatchString(e.Text):
		d.code = "missing_" + snake(named.name)
	}
	if e.Status >= 500 {
		d.retryFor(op, e, o)
	}
	return d
}

// requiredText is an error's text that says a value is missing.
var requiredText = regexp.MustCompile(`(?i)\b(required|missing|must be (given|set|provided)|no\b.*\b(provided|given))\b`)

// namedField returns the field of the route an error's text names, the
// first named when several are; nil when it names none.
func namedField(r *routeDraft, text string) *fieldDraft {
	var best *fieldDraft
	at := len(text)
	for _, f := range r.fields {
		if f.credential || f.obs.Kind == "" && f.obs.Seen == 0 {
			continue
		}
		if i := nameIndex(text, f.obs.Name); i >= 0 && i < at {
			best, at = f, i
		}
	}
	return best
}

// encodingChange returns the change of the body's Content-Type that
// recoveries made, when at least half of them made it; else nil.
func encodingChange(e *observe.Error) *observe.Blame {
	for i, b := range e.Blamed {
		if b.In == "header" && strings.EqualFold(b.Field, "Content-Type") && len(b.Changes) > 0 && b.Count*2 >= e.Recovered {
			return &e.Blamed[i]
		}
	}
	return nil
}

// call renders a call of the route from route from: each argument a path
// variable or field of the target that from has under the same name.
func (t *routeRef) call(from *routeDraft) string {
	var args []string
	for _, a := range t.args {
		if from.hasArg(a) {
			args = append(args, a)
		}
	}
	return t.name + "(" + strings.Join(args, ", ") + ")"
}

// matchFor writes the match of an error, and checks it against the sample.
func (d *ruleDraft) matchFor(g *errGroup) {
	e := &g.err
	sample := e.Sample.ResponseBody
	if g.pattern != "" {
		if e.JSON != "" {
			d.json = e.JSON
			d.regex = "^" + g.pattern
			if len(e.Text) < maxText-4 && !strings.HasSuffix(g.pattern, ".*") {
				d.regex += "$"
			}
			d.verified = gjson.Valid(sample) && regexp.MustCompile(d.regex).MatchString(gjson.Get(sample, e.JSON).String())
			return
		}
		d.body = bodyPattern(g.pattern, e.ContentType, sample)
		d.verified = sample != "" && regexp.MustCompile(d.body).MatchString(sample)
		return
	}
	if e.JSON != "" {
		d.json = e.JSON
		v := gjson.Get(sample, e.JSON)
		if len(e.Text) >= maxText-4 {
			// Cut to 200 bytes, perhaps short of a rune: a prefix.
			d.regex = "^" + regexp.QuoteMeta(e.Text)
			d.verified = gjson.Valid(sample) && regexp.MustCompile(d.regex).MatchString(v.String())
		} else {
			d.equals = e.Text
			d.verified = gjson.Valid(sample) && v.Exists() && v.String() == e.Text
		}
		return
	}
	d.body = bodyRegex(e.Text, e.ContentType, sample)
	d.verified = sample != "" && regexp.MustCompile(d.body).MatchString(sample)
}

// bodyRegex is the regex that finds an identifying text in a body that is
// not JSON: an HTML page's title, else the body's first line, else the
// text anywhere; the first that holds for the sample, or, with no sample
// to try, the one the content type suggests.
func bodyRegex(text, contentType, sample string) string {
	return bodyPattern(regexp.QuoteMeta(text), contentType, sample)
}

// bodyPattern is bodyRegex for a pattern of the text rather than the text.
func bodyPattern(quoted, contentType, sample string) string {
	var candidates []string
	html := strings.Contains(strings.ToLower(contentType), "html") || strings.Contains(strings.ToLower(sample), "<title")
	if html {
		candidates = append(candidates, `(?i:<title>)\s*`+quoted+`\s*(?i:</title>)`)
	}
	candidates = append(candidates, `\A\s*`+quoted, quoted)
	if sample == "" {
		return candidates[0]
	}
	for _, c := range candidates {
		if regexp.MustCompile(c).MatchString(sample) {
			return c
		}
	}
	return candidates[0]
}

// ruleCode derives a rule's code from the field blamed and the status:
// invalid_status for a 400 blaming status, unknown_ticket for a 404
// blaming ticket_id, update_ticket_requires_assign_ticket for a refusal a
// call first cures, upstream_error for a 5xx; else the upstream's words.
func ruleCode(r *routeDraft, e *observe.Error, blame *observe.Blame, prereq *routeRef) string {
	code := ""
	var noun string
	if blame != nil {
		noun = snake(r.field(blame.Field, blame.In).name)
	}
	switch {
	case prereq != nil && e.Status < 500:
		code = r.name + "_requires_" + prereq.name
	case e.Status == http.StatusNotFound && blame != nil:
		n := idNoun(blame.Field)
		if n == "" {
			n = resourceNoun(r.op.Path)
		}
		code = "unknown_" + n
	case e.Status >= 500:
		switch e.Status {
		case http.StatusBadGateway:
			code = "bad_gateway"
		case http.StatusServiceUnavailable:
			code = "service_unavailable"
		case http.StatusGatewayTimeout:
			code = "gateway_timeout"
		default:
			code = "upstream_error"
		}
	case e.Status == http.StatusTooManyRequests:
		code = "too_many_requests"
	case e.Status == http.StatusUnauthorized && blame == nil:
		code = "unauthenticated"
	case e.Status == http.StatusForbidden && blame == nil:
		code = "forbidden"
	case e.Status == http.StatusConflict && blame != nil:
		code = "conflicting_" + noun
	case blame != nil:
		code = "invalid_" + noun
	default:
		code = textCode(e.Text)
	}
	if !snakeName.MatchString(code) {
		code = fmt.Sprintf("upstream_%d", e.Status)
	}
	if reservedCodes[code] {
		code = "api_" + code
	}
	return code
}

// resourceNoun is the singular of a path's last literal segment.
func resourceNoun(path string) string {
	noun := "item"
	for _, s := range segments(path) {
		if !s.isVar && !versionSegment.MatchString(strings.ToLower(s.text)) && snake(s.text) != "" {
			noun = singular(snake(s.text))
		}
	}
	return noun
}

// ruleMessage is what the agent reads when no field's rule says it: for a
// 4xx the upstream's own words (a call to make first is appended by the
// loader), for a 5xx a plain statement, since a 5xx body is never quoted.
// fieldRule is set when the rule names a field whose constraint is written:
// for a 400 or 422, which says the value is malformed, that field's rule is
// the message.
// A text that varies by the values quoted is said by the part all its
// texts share.
func ruleMessage(method string, e *observe.Error, g *errGroup, prereq *routeRef, fieldRule bool) string {
	if e.Status >= 500 {
		phrase := fmt.Sprint(e.Status)
		if t := http.StatusText(e.Status); t != "" {
			phrase += " " + t
		}
		return "the upstream failed (" + phrase + "); its answer gives no detail to act on"
	}
	if fieldRule && prereq == nil && (e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity) {
		return ""
	}
	if g.pattern != "" {
		// Texts that vary by the values quoted: their words with the value
		// sent in place of the one quoted, or the upstream's own words of
		// each when more than the value varies.
		if g.said != "" {
			return strings.NewReplacer("{", "{{", "}", "}}").Replace(g.said[:g.at]) + "{received}" +
				strings.NewReplacer("{", "{{", "}", "}}").Replace(g.said[g.at:])
		}
		return "{upstream}"
	}
	text := strings.TrimSpace(rulefile.OneLine(e.Text))
	if text == "" {
		return fmt.Sprintf("the upstream refused the call (%d) without saying why", e.Status)
	}
	text = strings.ToLower(text[:1]) + text[1:]
	// Braces are placeholders in a message; the upstream's are literal.
	text = strings.NewReplacer("{", "{{", "}", "}}").Replace(text)
	return text
}

// retryFor decides retryable: for a 5xx. signpost already calls an
// unmatched 5xx of a safe call worth one retry, and a rule without
// retryable: says not; so the draft writes retryable: true when callers
// recovered by repeating the same call, on a method that may be repeated,
// and otherwise proposes it commented out.
func (d *ruleDraft) retryFor(op *observe.Operation, e *observe.Error, o Options) {
	idempotent := map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "PUT": true, "DELETE": true}[op.Method]
	unchanged := len(e.Blamed) == 0
	switch {
	case !idempotent:
		d.retryNote = fmt.Sprintf("retryable: true  # not drafted: a %s the upstream failed may have taken effect", op.Method)
	case unchanged && e.Recovered >= int64(o.MinEvidence):
		d.retryable = true
		d.evidence = append(d.evidence, fmt.Sprintf("%s of %d by repeating the same call: retryable", count(e.Recovered, "recovery"), e.Count))
	case !unchanged:
		// Callers got past it by changing the call: repeating it as it
		// was is no remedy, and the rule says so by leaving retryable out.
	default:
		d.retryNote = fmt.Sprintf("retryable: true  # %s by repeating the same call, fewer than %d; confirm it", count(e.Recovered, "recovery"), o.MinEvidence)
	}
}

// textNote shows what identifies an error, for a comment.
func textNote(e *observe.Error) string {
	if e.JSON != "" {
		return fmt.Sprintf("%s = %s", e.JSON, commentValue(e.Text))
	}
	what := "body"
	if e.ContentType != "" {
		what = mediaType(e.ContentType)
	}
	return fmt.Sprintf("%s %s", what, commentValue(e.Text))
}

func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(t)
}

func changeNote(cs []observe.Change) string {
	if len(cs) == 0 {
		return ""
	}
	var parts []string
	for i, c := range cs {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s → %s (%d)", commentValue(c.From), commentValue(c.To), c.Count))
	}
	return ": " + strings.Join(parts, ", ")
}
