package draft

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rewrite"
)

// snakeName is the form the loader requires of route names and codes.
var snakeName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// versionSegment is a path segment that names an API version or prefix,
// not a resource: api, v1, v2beta.
var versionSegment = regexp.MustCompile(`^(api|rest|v[0-9]+[a-z0-9]*)$`)

// snake spells s in snake_case: camelCase, hyphens, dots and spaces become
// underscores, anything else not a letter or digit is dropped, and a name
// that would start with a digit gains an "n".
func snake(s string) string {
	var b strings.Builder
	prev := ' '
	sep := false
	for _, r := range s {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				sep = true
			}
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(unicode.ToLower(r))
		default:
			sep = true
		}
		prev = r
	}
	out := b.String()
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "n" + out
	}
	return out
}

// singular guesses the singular of an English plural noun in snake_case,
// reading only its last word: categories is category, boxes box, tickets
// ticket; status, address and analysis stay as they are.
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies") && len(s) > 3:
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"), strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "shes"):
		return s[:len(s)-2]
	case plural(s):
		return s[:len(s)-1]
	}
	return s
}

// plural reports whether s reads as a plural noun: it ends in s, but not
// in ss, us or is.
func plural(s string) bool {
	return len(s) > 1 && strings.HasSuffix(s, "s") &&
		!strings.HasSuffix(s, "ss") && !strings.HasSuffix(s, "us") && !strings.HasSuffix(s, "is")
}

// segment is one segment of a path template.
type segment struct {
	text  string
	isVar bool
	slash bool // a variable whose pattern takes a slash
}

func segments(tpl string) []segment {
	var out []segment
	for _, s := range strings.Split(strings.Trim(tpl, "/"), "/") {
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			name, re, _ := strings.Cut(s[1:len(s)-1], ":")
			out = append(out, segment{text: name, isVar: true, slash: strings.Contains(re, ".")})
			continue
		}
		out = append(out, segment{text: s})
	}
	return out
}

// routeName derives a route's name from its method and path template: a
// verb for the method and a noun for the resource, e.g. GET /tickets is
// list_tickets, GET /tickets/{ticket_id} get_ticket, PATCH of it
// update_ticket, POST /tickets create_ticket, and POST
// /tickets/{ticket_id}/assign assign_ticket. A resource below another
// takes the parent's name first: GET /customers/{id}/tickets is
// list_customer_tickets.
// readVerbs are the last segments that name a read rather than a thing.
var readVerbs = map[string]bool{"list": true, "search": true, "find": true, "lookup": true, "count": true}

func routeName(method, path string) string {
	var segs []segment
	for _, s := range segments(path) {
		if !s.isVar && versionSegment.MatchString(strings.ToLower(s.text)) {
			continue
		}
		segs = append(segs, s)
	}
	lastLit := -1
	for i, s := range segs {
		if !s.isVar && snake(s.text) != "" {
			lastLit = i
		}
	}
	if lastLit < 0 {
		noun := "root"
		if len(segs) > 0 {
			noun = "item"
		}
		return joinName(verbFor(method, true), noun)
	}
	noun := snake(segs[lastLit].text)
	item := lastLit < len(segs)-1 // a variable follows the noun
	if !item && lastLit >= 1 && !segs[lastLit-1].isVar && readVerbs[noun] {
		// A read named by a verb after its noun: GET /tags/list is
		// list_tags, GET /users/search is search_users.
		if other := snake(segs[lastLit-1].text); other != "" && method == "GET" {
			return joinName(noun, other)
		}
	}
	// The parent: the literal before a variable that precedes the noun.
	parent := ""
	if lastLit >= 2 && segs[lastLit-1].isVar && !segs[lastLit-2].isVar {
		parent = singular(snake(segs[lastLit-2].text))
	}
	if !item && !plural(noun) && parent != "" {
		// An action on an item: POST /tickets/{id}/assign.
		if method == "POST" {
			return joinName(noun, parent)
		}
		return joinName(verbFor(method, true), parent, noun)
	}
	if item {
		return joinName(verbFor(method, true), parent, singular(noun))
	}
	switch method {
	case "GET":
		if plural(noun) {
			return joinName("list", parent, noun)
		}
		return joinName("get", parent, noun)
	case "POST":
		return joinName("create", parent, singular(noun))
	}
	return joinName(verbFor(method, false), parent, noun)
}

// verbFor is the verb of a method on one item (item) or on a collection.
func verbFor(method string, item bool) string {
	switch method {
	case "GET":
		if item {
			return "get"
		}
		return "list"
	case "POST":
		if item {
			return "update"
		}
		return "create"
	case "PUT":
		return "replace"
	case "PATCH":
		return "update"
	case "DELETE":
		return "delete"
	}
	return snake(method)
}

func joinName(words ...string) string {
	var kept []string
	for _, w := range words {
		if w != "" {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, "_")
}

// methodOrder ranks methods as the draft lists them.
func methodOrder(m string) int {
	switch m {
	case "GET":
		return 0
	case "POST":
		return 1
	case "PUT":
		return 2
	case "PATCH":
		return 3
	case "DELETE":
		return 4
	case "HEAD":
		return 5
	case "OPTIONS":
		return 6
	}
	return 7
}

// nameRoutes names each operation: its declared route when it has a
// snake_case one, else a derived name, made unique with a number. Declared
// names are taken first, so a derived name never displaces one. notes
// says, per operation, why its name is not the derived one.
func nameRoutes(ops []*observe.Operation) (names, notes []string) {
	names = make([]string, len(ops))
	notes = make([]string, len(ops))
	taken := map[string]string{} // name -> "METHOD /path"
	for i, op := range ops {
		if op.Route != "" && snakeName.MatchString(op.Route) && taken[op.Route] == "" {
			names[i] = op.Route
			taken[op.Route] = op.Method + " " + op.Path
		}
	}
	for i, op := range ops {
		if names[i] != "" {
			continue
		}
		base := routeName(op.Method, op.Path)
		if op.When != nil {
			base = snake(op.When.Equals) // an RPC endpoint's operation: its method
		}
		if !snakeName.MatchString(base) {
			base = "route"
		}
		if op.Route != "" {
			notes[i] = "declared as " + strconv.Quote(op.Route) + ", which is not a free snake_case name"
		}
		name := base
		for n := 2; taken[name] != ""; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		if name != base {
			notes[i] = "named " + name + ": " + base + " is " + taken[base]
		}
		names[i] = name
		taken[name] = op.Method + " " + op.Path
	}
	return names, notes
}

// reservedCodes are signpost's own codes, its front's refusals included: a
// rule must not reuse one, or its answers could not be told from
// signpost's.
var reservedCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range append(rewrite.OwnCodes(), front.RefusalCodes()...) {
		m[c] = true
	}
	return m
}()

// textCode makes a code of an upstream's text that reads as words: the
// name it quotes or spells as code, invalid_generator_url for
// "0.generatorURL in body must be of type uri", else its first words
// without numbers, "No such ticket" no_such_ticket.
func textCode(text string) string {
	if m := identInText.FindStringSubmatch(text); m != nil {
		name := snake(cmp.Or(m[1], m[2]))
		if name != "" && name[0] >= 'a' && name[0] <= 'z' {
			if requiredText.MatchString(text) {
				return "missing_" + name
			}
			return "invalid_" + name
		}
	}
	var words []string
	for _, w := range strings.FieldsFunc(snake(text), func(r rune) bool { return r == '_' }) {
		if w[0] < 'a' || w[0] > 'z' || (w[0] == 'n' && len(w) > 1 && w[1] >= '0' && w[1] <= '9') {
			continue // a number, or a word snake had to prefix
		}
		if words = append(words, w); len(words) == 4 {
			break
		}
	}
	return strings.Join(words, "_")
}

// identInText finds a name an error's text spells as code: camelCase or
// snake_case, alone or at the end of a dotted path (items.0.dueAt), or a
// parameter it quotes (parameter "step").
var identInText = regexp.MustCompile(`(?:^|[\s.(\[])([a-z]+[A-Z][A-Za-z0-9]*|[a-z]+_[a-z0-9_]+)\b|(?i:parameter|field|argument|property)\s+["'` + "`" + `]([A-Za-z_][A-Za-z0-9_]*)["'` + "`" + `]`)

// idNoun is what a field naming an id names: ticket for ticket_id and
// ticketId, "" for id alone.
func idNoun(field string) string {
	s := snake(field)
	for _, suf := range []string{"_id", "_uuid", "_key", "_slug", "_number"} {
		if strings.HasSuffix(s, suf) {
			return strings.TrimSuffix(s, suf)
		}
	}
	if s == "id" || s == "uuid" {
		return ""
	}
	return s
}
