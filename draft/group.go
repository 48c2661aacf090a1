package draft

import (
	"cmp"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/signpost-proxy/signpost/observe"
	"github.com/tidwall/gjson"
)

// errGroup is one error of an operation, or several whose texts differ
// only in the values they quote, their numbers or what follows their
// first ": ": `invalid parameter "query": 1:5: parse error: …` and
// `invalid parameter "query": 1:14: …` are one error, drafted as one rule.
type errGroup struct {
	// err is the group as one error: counts summed, recoveries and
	// prerequisites merged, the most frequent member's text and sample.
	err observe.Error
	// members counts the distinct texts grouped.
	members int
	// pattern is the regex that finds every member's text, without
	// anchors, or "" when the text is matched exactly; received is set
	// when it captures the value the upstream quoted.
	pattern  string
	received bool
	// prefix is the text before the first part that varies: what every
	// member says alike.
	prefix string
	// said is the text, less its received value, when nothing else
	// varies: the value sent goes at said[at:], in place of its quotes.
	said string
	at   int
}

// token is a part of an error's text: literal text, a quoted value, or a
// run of digits.
type token struct {
	text string
	kind byte // 'l' literal, 'q' quoted (text holds the quotes), 'n' digits
}

// tokenize splits an error's text into literal text, quoted values and
// runs of digits, and tells where the head ends: at the first ": " outside
// quotes, after which an upstream typically says what went wrong in words
// of the moment (-1 when there is none).
func tokenize(text string) (toks []token, head int) {
	head = -1
	lit := 0
	flush := func(i int) {
		if i > lit {
			toks = append(toks, token{text: text[lit:i], kind: 'l'})
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			end := strings.IndexByte(text[i+1:], c)
			if end < 0 || (c == '\'' && i > 0 && wordByte(text[i-1])) {
				i++ // an apostrophe, or a quote never closed
				continue
			}
			flush(i)
			toks = append(toks, token{text: text[i : i+end+2], kind: 'q'})
			i += end + 2
			lit = i
		case '0' <= c && c <= '9' && (i == 0 || !wordByte(text[i-1]) || '0' <= text[i-1] && text[i-1] <= '9'):
			j := i
			for j < len(text) && '0' <= text[j] && text[j] <= '9' {
				j++
			}
			if j < len(text) && wordByte(text[j]) {
				i = j // digits inside a word, such as sha256 or v2
				continue
			}
			flush(i)
			toks = append(toks, token{text: text[i:j], kind: 'n'})
			i, lit = j, j
		case c == ':' && i+1 < len(text) && text[i+1] == ' ' && head < 0:
			flush(i + 2)
			i += 2
			lit = i
			head = len(toks)
		default:
			i++
		}
	}
	flush(len(text))
	return toks, head
}

// stem is what errors of one group share: the head of the text with its
// numbers and the quoted values its request sent blanked, or the whole
// text so blanked when it has no head. A quoted value the request did not
// send, such as a parameter's name, stays: `invalid parameter "step"` and
// `invalid parameter "query"` are two errors.
func stem(text string, sent map[string]bool) string {
	toks, head := tokenize(text)
	if head >= 0 {
		toks = toks[:head]
	}
	var b strings.Builder
	for _, t := range toks {
		switch {
		case t.kind == 'q' && sent[t.unquoted()]:
			b.WriteString(t.text[:1] + "\x00" + t.text[:1])
		case t.kind == 'n':
			b.WriteString("\x01")
		default:
			b.WriteString(t.text)
		}
	}
	if head >= 0 {
		b.WriteString("\x02")
	}
	return b.String()
}

// groupErrors gathers an operation's errors into groups, most frequent
// first: errors of one status and JSON path whose texts share a stem. tpl
// is the operation's path template, whose variables are values sent.
func groupErrors(tpl string, errs []observe.Error) []*errGroup {
	type key struct {
		status int
		json   string
		stem   string
	}
	byKey := map[key][]*observe.Error{}
	var order []key
	for i := range errs {
		e := &errs[i]
		k := key{e.Status, e.JSON, stem(e.Text, requestValues(tpl, e.Sample))}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], e)
	}
	var out []*errGroup
	for _, k := range order {
		members := byKey[k]
		g := generalise(tpl, members)
		if g == nil {
			// The members' texts share no pattern that finds them all:
			// each is drafted alone.
			for _, e := range members {
				out = append(out, generalise(tpl, []*observe.Error{e}))
			}
			continue
		}
		out = append(out, g)
	}
	slices.SortStableFunc(out, func(a, b *errGroup) int { return cmp.Compare(b.err.Count, a.err.Count) })
	return out
}

// generalise makes one group of errors that share a stem: a part that
// varies among them, or a quoted value the request sent, becomes a part of
// the pattern that takes any value, the first quoted value sent captured
// as received. A tail (what follows the first ": ") that varies in more
// than its values is taken whole: captured when it is each request's
// value, as in "bad matcher format: job=~". It returns nil when the
// pattern would not find every member's text.
func generalise(tpl string, members []*observe.Error) *errGroup {
	g := &errGroup{err: merged(members), members: len(members)}
	first := members[0]
	toks, head := tokenize(first.Text)
	all := make([][]token, len(members))
	for i, e := range members {
		all[i], _ = tokenize(e.Text)
	}
	sent := requestValues(tpl, first.Sample)
	tails := make([]string, len(members))
	for i, e := range members {
		tails[i] = tailOf(e.Text)
	}
	end := len(toks)
	if head >= 0 && (!aligned(all) || allSent(tpl, members, tails)) {
		end = head
	}
	var b, said strings.Builder
	varied, others := false, false
	for i, t := range toks[:end] {
		same := true
		for _, m := range all[1:] {
			same = same && i < len(m) && m[i].text == t.text
		}
		part := regexp.QuoteMeta(t.text)
		switch {
		case t.kind == 'q' && sent[t.unquoted()] && !g.received:
			g.received = true
			part = regexp.QuoteMeta(t.text[:1]) + "(?P<received>" + t.body() + ")" + regexp.QuoteMeta(t.text[:1])
		case t.kind == 'q' && (!same || sent[t.unquoted()]):
			part = regexp.QuoteMeta(t.text[:1]) + t.body() + regexp.QuoteMeta(t.text[:1])
		case t.kind == 'n' && (!same || position(toks, i)):
			// A number that varies, or a parser's position (1:45), which
			// the next call's error holds another of, is matched as any.
			part = t.body()
		}
		switch {
		case part == regexp.QuoteMeta(t.text):
			said.WriteString(t.text)
		case strings.Contains(part, "(?P<received>"):
			g.at = said.Len()
		default:
			others = true
		}
		if part != regexp.QuoteMeta(t.text) {
			varied = true
		}
		if !varied {
			g.prefix += t.text
		}
		b.WriteString(part)
	}
	if end < len(toks) {
		if allSent(tpl, members, tails) && !g.received {
			g.received = true
			b.WriteString("(?P<received>.*)")
		} else {
			b.WriteString(".*")
		}
		varied = true
		others = true
	}
	if g.received && !others {
		g.said = said.String()
	}
	if !varied {
		return g // matched exactly, as one text
	}
	g.pattern = b.String()
	re, err := regexp.Compile("^" + g.pattern)
	if err != nil {
		return nil
	}
	for _, e := range members {
		if !re.MatchString(e.Text) {
			return nil
		}
	}
	return g
}

// position reports whether toks[i], a number, is part of a parser's
// position: a line and a column joined by a colon (1:45).
func position(toks []token, i int) bool {
	joined := func(a, b int) bool {
		return a >= 0 && b < len(toks) && toks[a].kind == 'n' && toks[b].kind == 'n' && toks[a+1].text == ":"
	}
	return i+2 < len(toks) && joined(i, i+2) || i >= 2 && joined(i-2, i)
}

// aligned reports whether texts tokenized alike differ only in their
// quoted values and numbers: the same tokens, the same literal text.
func aligned(all [][]token) bool {
	for _, m := range all[1:] {
		if len(m) != len(all[0]) {
			return false
		}
		for i, t := range m {
			if t.kind != all[0][i].kind || t.kind == 'l' && t.text != all[0][i].text {
				return false
			}
		}
	}
	return true
}

// allSent reports whether each member's tail is a value its request sent:
// the upstream quotes the value bare, as in "bad matcher format: job=~".
func allSent(tpl string, members []*observe.Error, tails []string) bool {
	for i, e := range members {
		if tails[i] == "" || !requestValues(tpl, e.Sample)[tails[i]] {
			return false
		}
	}
	return true
}

// tailOf is the text after the first ": " outside quotes.
func tailOf(text string) string {
	toks, head := tokenize(text)
	if head < 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range toks[head:] {
		b.WriteString(t.text)
	}
	return b.String()
}

func (t token) unquoted() string { return t.text[1 : len(t.text)-1] }

// body is the pattern of what a quoted value holds: anything but its quote.
func (t token) body() string {
	if t.kind == 'n' {
		return "[0-9]+"
	}
	return "[^" + regexp.QuoteMeta(t.text[:1]) + "]*"
}

// requestValues are the values a sample request sent: its path's values
// of the template's variables, its query values and the top-level values
// of a JSON body.
func requestValues(tpl string, s observe.Sample) map[string]bool {
	out := map[string]bool{}
	tsegs, psegs := strings.Split(strings.Trim(tpl, "/"), "/"), strings.Split(strings.Trim(s.Path, "/"), "/")
	if len(tsegs) == len(psegs) {
		for i, seg := range psegs {
			if strings.HasPrefix(tsegs[i], "{") {
				if v, err := url.PathUnescape(seg); err == nil && v != "" {
					out[v] = true
				}
			}
		}
	}
	if q, err := url.ParseQuery(s.Query); err == nil {
		for _, vs := range q {
			for _, v := range vs {
				if v != "" {
					out[v] = true
				}
			}
		}
	}
	if b := s.RequestBody; gjson.Valid(b) {
		gjson.Parse(b).ForEach(func(_, v gjson.Result) bool {
			if v.Type == gjson.String && v.Str != "" || v.Type == gjson.Number {
				out[v.String()] = true
			}
			return true
		})
	}
	return out
}

// merged is a group's members as one error: counts summed, first and last
// seen the earliest and the latest, recoveries' blamed fields and calls
// made first summed, the most frequent member's text and sample.
func merged(members []*observe.Error) observe.Error {
	e := *members[0]
	if len(members) == 1 {
		return e
	}
	e.Blamed, e.Before = nil, nil
	e.Count, e.Recovered = 0, 0
	blamed := map[[2]string]*observe.Blame{}
	var order [][2]string
	before := map[string]int64{}
	for _, m := range members {
		e.Count += m.Count
		e.Recovered += m.Recovered
		if m.FirstSeen.Before(e.FirstSeen) {
			e.FirstSeen = m.FirstSeen
		}
		if m.LastSeen.After(e.LastSeen) {
			e.LastSeen = m.LastSeen
		}
		for _, b := range m.Blamed {
			k := [2]string{b.Field, b.In}
			mb := blamed[k]
			if mb == nil {
				mb = &observe.Blame{Field: b.Field, In: b.In}
				blamed[k] = mb
				order = append(order, k)
			}
			mb.Count += b.Count
			mb.Changes = append(mb.Changes, b.Changes...)
		}
		for _, v := range m.Before {
			before[v.Value] += v.Count
		}
	}
	for _, k := range order {
		b := blamed[k]
		b.Changes = sumChanges(b.Changes)
		e.Blamed = append(e.Blamed, *b)
	}
	slices.SortStableFunc(e.Blamed, func(a, b observe.Blame) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Field, b.Field))
	})
	for v, n := range before {
		e.Before = append(e.Before, observe.Value{Value: v, Count: n})
	}
	slices.SortFunc(e.Before, func(a, b observe.Value) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
	return e
}

// sumChanges adds up the counts of equal changes, most frequent first.
func sumChanges(cs []observe.Change) []observe.Change {
	sum := map[[2]string]int64{}
	for _, c := range cs {
		sum[[2]string{c.From, c.To}] += c.Count
	}
	out := make([]observe.Change, 0, len(sum))
	for k, n := range sum {
		out = append(out, observe.Change{From: k[0], To: k[1], Count: n})
	}
	slices.SortFunc(out, func(a, b observe.Change) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out
}
