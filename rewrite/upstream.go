package rewrite

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Upstream is the upstream's error response as signpost examined it.
type Upstream struct {
	Status int
	Header http.Header
	Body   *rules.Body // the decoded body; nil when it was not read
}

// MaxUpstreamMessage is the longest upstream message a wrapped body quotes.
const MaxUpstreamMessage = 200

// upstreamDetail returns the upstream's own short message of a 4xx (see
// shortMessage) when it tells the agent nothing it must not be told, or
// could mistake for the upstream's words: no secret, no hidden value of
// route, and nothing the request carried (see echoes). Otherwise, and for
// a 5xx, it returns "".
func upstreamDetail(up *Upstream, route *rules.Route, req *Request) string {
	if up.Status >= 500 {
		return ""
	}
	msg := shortMessage(up)
	if msg == "" || redact.String(msg) != msg || echoes(msg, route, req) {
		return ""
	}
	return msg
}

// sharedRun is the most characters in a row an upstream message may share
// with a value the request carried, where it does not hold the whole value
// as a word: a longer run is the request's text coming back, cut or not.
const sharedRun = 12

// echoes reports whether msg holds a hidden value of route, or a value the
// request carried: any value, as a whole word in any case, or sharedRun
// characters in a row of one (of a value, a body's key or the path). Text
// the agent sent coming back in upstream_message would read as the
// upstream's own words, and a hidden value is never shown.
func echoes(msg string, route *rules.Route, req *Request) bool {
	lower := strings.ToLower(msg)
	runs := make(map[string]bool, len(lower))
	for i := 0; i+sharedRun <= len(lower); i++ {
		runs[lower[i:i+sharedRun]] = true
	}
	found := false
	whole := func(v string) {
		if v = strings.ToLower(strings.TrimSpace(v)); v != "" && !found {
			found = hasWord(lower, v) || sharesRun(runs, v)
		}
	}
	part := func(v string) {
		if !found {
			found = sharesRun(runs, strings.ToLower(v))
		}
	}
	if route != nil {
		for _, f := range route.Fields {
			for _, h := range f.Hidden {
				whole(h)
			}
			if req != nil && f.In == rules.InHeader {
				if v := req.Value(f); v.Exists() {
					whole(v.String())
				}
			}
		}
	}
	if req == nil {
		return found
	}
	for _, v := range req.Vars {
		whole(v)
	}
	q := req.Query
	if q == nil {
		q, _ = url.ParseQuery(req.RawQuery)
	}
	for k, vs := range q {
		part(k)
		for _, v := range vs {
			whole(v)
		}
	}
	for _, seg := range strings.Split(req.Path, "/") {
		part(seg)
	}
	if len(req.Body) > 0 && rules.IsJSON(req.Body) {
		var walk func(v gjson.Result)
		walk = func(v gjson.Result) {
			v.ForEach(func(k, m gjson.Result) bool {
				if k.Type == gjson.String {
					part(k.Str)
				}
				switch {
				case m.IsObject() || m.IsArray():
					walk(m)
				case m.Type == gjson.String:
					whole(m.Str)
				case m.Type == gjson.Number:
					whole(m.Raw)
				}
				return !found
			})
		}
		walk(gjson.ParseBytes(req.Body))
	}
	return found
}

// hasWord reports whether s holds w where neither end of it touches a
// letter or digit: "p1" is in "priority p1 is closed", "open" is not in
// "reopen".
func hasWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[j+len(w):])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		i = j + 1
	}
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// sharesRun reports whether v holds one of runs, the sharedRun-byte
// stretches of a message.
func sharesRun(runs map[string]bool, v string) bool {
	for i := 0; i+sharedRun <= len(v); i++ {
		if runs[v[i:i+sharedRun]] {
			return true
		}
	}
	return false
}

// shortMessage returns the upstream's own message when it is safe and
// useful to quote: one line of at most MaxUpstreamMessage characters from a
// JSON "error" or "message" string, or from a plain-text body, that reads as
// a sentence (see quotable).
func shortMessage(up *Upstream) string {
	if up.Body == nil || len(up.Body.Raw) == 0 {
		return ""
	}
	raw := up.Body.Raw
	var msg string
	if rules.IsJSON(raw) {
		for _, key := range []string{"error", "message"} {
			if v := gjson.GetBytes(raw, key); v.Type == gjson.String {
				msg = v.Str
				break
			}
		}
	} else {
		mt, _, _ := mime.ParseMediaType(up.Header.Get("Content-Type"))
		if mt != "text/plain" {
			return ""
		}
		msg = string(raw)
	}
	msg = strings.TrimSpace(msg)
	if msg == "" || !utf8.ValidString(msg) || utf8.RuneCountInString(msg) > MaxUpstreamMessage || !quotable(msg) {
		return ""
	}
	return msg
}

// quotable reports whether an upstream message reads as a sentence a
// caller may see, rather than something of the operator's: letters, digits,
// spaces and the punctuation of prose (. , ; : ! ? ' " ( ) - and their
// typographic forms) only, so no markup, path, URL, address, assignment
// (tenant_id=) or JSON; no dot or colon joined to the next character, as in
// a host, an IP address, a file, a port or a class name; no code-like
// token of 16 characters or more with a digit (keys, hashes, card numbers);
// and none of the words of a stack trace or a database error.
//
// A parser's diagnostic passes too: a position of digits alone joined by
// colons (1:7: parse error) and one character of code quoted on its own
// (unexpected "}").
func quotable(s string) bool {
	prev := ' '
	position := false // the word so far is digits and colons, a digit first
	for i, r := range s {
		switch {
		case r == ' ' || r == '(':
			position = false
		case unicode.IsDigit(r) && prev == ':' && position:
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if prev == '.' || prev == ':' {
				return false
			}
			position = unicode.IsDigit(r) && (position || prev == ' ' || prev == '(' || i == 0)
		case strings.ContainsRune(proseMarks, r):
			if (prev == '.' || prev == ':') && r != '.' && r != ')' && r != '"' {
				return false
			}
			position = position && r == ':'
		case quotedChar(s, i, prev):
		default:
			return false
		}
		prev = r
	}
	if digitRun(s) >= 12 {
		return false // a card or account number, written in groups
	}
	sql := 0
	for word := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
		w := strings.ToLower(word)
		if utf8.RuneCountInString(w) >= 16 && strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			return false // a key, a hash, an id from a database
		}
		if internalWords[w] || strings.HasPrefix(w, "ora-") || className(word) {
			return false
		}
		if sqlWords[w] {
			sql++
		}
	}
	return sql < 2
}

// quotedChar reports whether the rune at byte i of s is one character of
// ASCII punctuation quoted on its own ("}", '{'), as a parser names the
// character it did not expect. Markup brackets and the backslash are never
// quoted.
func quotedChar(s string, i int, prev rune) bool {
	c := s[i]
	return (prev == '"' || prev == '\'') && i+1 < len(s) && rune(s[i+1]) == prev &&
		c > ' ' && c < 0x7f && !unicode.IsLetter(rune(c)) && !unicode.IsDigit(rune(c)) && c != '\\' && c != '<' && c != '>'
}

// className reports whether a word reads as the name of an exception or
// error class: NumberFormatException, TypeError.
func className(word string) bool {
	w := strings.ToLower(word)
	if strings.Contains(w, "exception") {
		return true
	}
	if !strings.HasSuffix(w, "error") || w == "error" {
		return false
	}
	for i := 1; i < len(word); i++ {
		if unicode.IsLower(rune(word[i-1])) && unicode.IsUpper(rune(word[i])) {
			return true // CamelCase, as class names are written
		}
	}
	return false
}

// digitRun returns the most digits in one run of s made of digits and the
// spaces and dashes that group them.
func digitRun(s string) int {
	most, n := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			n++
			most = max(most, n)
		case r == ' ' || r == '-':
		default:
			n = 0
		}
	}
	return most
}

// proseMarks is the punctuation a quotable message may hold besides spaces.
const proseMarks = ".,;:!?'\"()-‘’“”–—"

// internalWords name what belongs in a log: stack traces, runtimes,
// databases and their errors. One is enough to keep a message unquoted.
var internalWords = map[string]bool{
	"exception": true, "traceback": true, "stacktrace": true, "goroutine": true, "panic": true,
	"panicked": true, "segfault": true, "segmentation": true, "pointer": true, "dereference": true,
	"nullpointerexception": true, "errno": true, "java": true, "python": true, "golang": true,
	"sql": true, "sqlstate": true, "syntax": true, "constraint": true, "relation": true,
	"schema": true, "column": true, "postgres": true, "postgresql": true, "mysql": true,
	"sqlite": true, "oracle": true, "mongodb": true, "redis": true, "jdbc": true, "odbc": true,
	"localhost": true, "hostname": true, "stack": true, "debug": true, "internal": true,
}

// sqlWords are the keywords of a statement; two in one message mean it
// quotes SQL.
var sqlWords = map[string]bool{
	"select": true, "insert": true, "update": true, "delete": true, "from": true, "where": true,
	"into": true, "join": true, "values": true, "table": true, "drop": true, "alter": true,
}
