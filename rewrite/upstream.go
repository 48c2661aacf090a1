package rewrite

import (
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Upstream is the upstream's error response as signpost examined it.
type Upstream struct {
	// Status is the status the caller gets: the upstream's, unless the
	// rule that matched answers another, as for an error carried in a 2xx.
	Status int
	// Sent is the upstream's own status when the caller gets another.
	Sent   int
	Header http.Header
	Body   *rules.Body // the decoded body; nil when it was not read
}

// MaxUpstreamMessage is the most characters of the upstream's message a
// body quotes; a longer one is cut with a visible marker, as received is.
const MaxUpstreamMessage = 200

// maxUpstreamText is the longest text of the upstream's a body may quote
// from at all: past it, the text is a dump, not a message.
const maxUpstreamText = 1 << 10

// maxUpstreamDetail is the most entries upstream_detail lists.
const maxUpstreamDetail = 10

// Said is what the upstream's own error body told the caller, as far as it
// is safe to show: its machine code, its message and the details it
// attached (the first error of an errors array, and each entry's detail).
// The bare API would have shown all of it; signpost keeps what holds no
// secret, no hidden value of the route, and nothing of the operator's
// (markup, stack traces, paths, hosts). A value the request carried may
// come back in it: it is the caller's own.
type Said struct {
	Code    string
	Message string
	Detail  []string
}

// upstreamSaid reads up's body for what it said (see Said). The message is
// kept only where message reports it is wanted (nil: always). A 5xx says
// nothing the caller may see: its cause is the operator's.
func upstreamSaid(up *Upstream, route *rules.Route, req *Request, message func(string) bool) Said {
	if up == nil || up.Status >= 500 || up.Body == nil || len(up.Body.Raw) == 0 || len(up.Body.Raw) > 64<<10 {
		return Said{}
	}
	raw := up.Body.Raw
	var code, msg string
	var details []string
	if up.Body.IsJSON() {
		code, msg, details = jsonSaid(raw, up.Status)
	} else {
		mt, _, _ := mime.ParseMediaType(up.Header.Get("Content-Type"))
		if mt != "text/plain" {
			return Said{}
		}
		msg = unsafe.String(unsafe.SliceData(raw), len(raw)) // a view; copied if kept
	}
	s := safeText{route: route, req: req}
	var out Said
	if code != "" && redact.String(code) == code && !s.holdsPrivate(code) {
		out.Code = code
	}
	if msg = strings.TrimSpace(msg); msg != "" && (message == nil || message(msg)) && s.safe(msg) {
		out.Message = strings.Clone(msg)
	}
	for _, d := range details {
		if len(out.Detail) == maxUpstreamDetail {
			break
		}
		if d = strings.TrimSpace(d); d != "" && d != out.Message && !slices.Contains(out.Detail, d) && s.safe(d) {
			out.Detail = append(out.Detail, d)
		}
	}
	return out
}

// otherWord is what the upstream said instead of its success word, when
// rule matched by not_equals (a JSON RPC's result: "method name not
// recognized" where "success" was due) and it is safe to show: the rule's
// author could not write it, so the answer keeps it.
func otherWord(rule *rules.ErrorRule, up *Upstream, req *Request) string {
	m := rule.Match
	if m.NotEquals == nil || up == nil || up.Body == nil || !rules.IsJSON(up.Body.Raw) {
		return ""
	}
	v := gjson.GetBytes(up.Body.Raw, m.JSON)
	w := strings.TrimSpace(v.Str)
	if v.Type != gjson.String || w == "" || len(w) > maxUpstreamText {
		return ""
	}
	if s := (safeText{route: rule.Route(), req: req}); !s.safe(w) {
		return ""
	}
	return w
}

// upstreamDetail returns the upstream's own message of a 4xx when it is
// safe to show (see Said), or "".
func upstreamDetail(up *Upstream, route *rules.Route, req *Request) string {
	return upstreamSaid(up, route, req, nil).Message
}

// Members of a JSON error body that hold its machine code and its message,
// in the order they are looked for: the shapes of Prometheus, OAuth 2.0,
// Google's and JSON-RPC's nested error object, the Docker registry's and
// GraphQL's errors array, RFC 9457 problem details.
var (
	codeMembers    = []string{"errorType", "error_code", "errorCode", "code", "error.code", "error.status", "errors.0.code", "errors.0.extensions.code"}
	messageMembers = []string{"error_description", "message", "error.message", "errors.0.message", "detail", "errorMessage", "msg"}
)

// jsonSaid finds the code, the message and the details of a JSON error
// body. An "error" string that reads as an identifier (channel_not_found,
// NOT_FOUND) is a code; any other is the message. A numeric code that only
// repeats the status is no code.
//
// The body is read in place, through a string sharing its bytes (its
// buffer is charged to the proxy's budget and taken back once the error is
// answered), and only what is found is copied out; msg is left a view of
// the body, for the caller to copy if it keeps it.
func jsonSaid(raw []byte, status int) (code, msg string, details []string) {
	defer func() {
		code = strings.Clone(code)
		for i := range details {
			details[i] = strings.Clone(details[i])
		}
	}()
	root := gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
	if !root.IsObject() {
		return "", "", nil
	}
	if e := root.Get("error"); e.Type == gjson.String {
		if identifier(e.Str) {
			code = e.Str
		} else {
			msg = e.Str
		}
	}
	for _, k := range codeMembers {
		if code != "" {
			break
		}
		switch v := root.Get(k); {
		case v.Type == gjson.String && identifier(v.Str):
			code = v.Str
		case v.Type == gjson.Number && v.Raw != strconv.Itoa(status) && isInteger(v.Raw):
			code = v.Raw
		}
	}
	for _, k := range messageMembers {
		if msg != "" {
			break
		}
		if v := root.Get(k); v.Type == gjson.String {
			msg = v.Str
		}
	}
	if errs := root.Get("errors"); errs.IsArray() {
		errs.ForEach(func(_, e gjson.Result) bool {
			details = append(details, detailOf(e.Get("detail"))...)
			if m := e.Get("message"); m.Type == gjson.String && m.Str != msg {
				details = append(details, m.Str)
			}
			return len(details) < 4*maxUpstreamDetail
		})
	}
	return code, msg, details
}

// detailOf turns an error's detail into text: a string as it is, each
// scalar member of an object as "key: value".
func detailOf(d gjson.Result) []string {
	switch {
	case d.Type == gjson.String:
		return []string{d.Str}
	case d.IsObject():
		var out []string
		d.ForEach(func(k, v gjson.Result) bool {
			if v.Type == gjson.String || v.Type == gjson.Number {
				out = append(out, k.String()+": "+v.String())
			}
			return len(out) < maxUpstreamDetail
		})
		return out
	}
	return nil
}

// identifier reports whether s reads as a machine code rather than prose:
// at most 64 letters, digits, '_', '-', '.' and ':', a letter or digit
// first, with an underscore or a dot, or in capitals (NOT_FOUND, bad_data,
// invalid_grant, E1001).
func identifier(s string) bool {
	if s == "" || len(s) > 64 || !isAlnum(s[0]) {
		return false
	}
	upper := true
	joined := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			upper = false
		case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		case c == '_' || c == '.':
			joined = true
		case c == '-' || c == ':':
		default:
			return false
		}
	}
	return joined || upper && len(s) > 1
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isInteger(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// safeText judges text of the upstream's against what a route keeps
// hidden and what a request carried.
type safeText struct {
	route   *rules.Route
	req     *Request
	carried []string // the request's values, longest first
	private []string // the request's credentials
	built   bool     // carried and private are listed
}

// safe reports whether s may be shown: one line of at most maxUpstreamText
// bytes of valid UTF-8, holding no secret (see redact), no hidden value of
// the route, no value of a header field (a credential, as often as not),
// and, once the request's own values are set aside, reading as prose (see
// quotable).
func (t *safeText) safe(s string) bool {
	if len(s) > maxUpstreamText || !utf8.ValidString(s) || redact.String(s) != s || t.holdsPrivate(s) {
		return false
	}
	return quotable(t.withoutCarried(s))
}

// sharedRun is the most characters in a row a text may share with a
// private value (hidden, or a header's), where it does not hold the whole
// value as a word: a longer run is that value, cut or not.
const sharedRun = 12

// holdsPrivate reports whether s holds a hidden value of the route, the
// value of one of its header fields or of a credential header the request
// sent (Authorization, Cookie, an API key's), as a whole word in any case
// or by sharedRun characters in a row.
func (t *safeText) holdsPrivate(s string) bool {
	lower := strings.ToLower(s)
	holds := func(v string) bool {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			return false
		}
		if hasWord(lower, v) {
			return true
		}
		for i := 0; i+sharedRun <= len(v); i++ {
			if strings.Contains(lower, v[i:i+sharedRun]) {
				return true
			}
		}
		return false
	}
	if t.route != nil {
		for _, f := range t.route.Fields {
			for _, h := range f.Hidden {
				if holds(h) {
					return true
				}
			}
			if t.req != nil && f.In == rules.InHeader {
				if v := t.req.Value(f); v.Exists() && holds(v.String()) {
					return true
				}
			}
		}
	}
	if !t.built {
		t.build()
	}
	for _, v := range t.private {
		if holds(v) {
			return true
		}
	}
	return false
}

// build lists once what the request carried: its values to set aside
// (carriedValues) and its credentials, which are never shown: the values
// of credential headers (Authorization, Cookie, an API key's), the scheme
// that opens one (Bearer, Basic) left out as no secret, and those of query
// parameters and JSON body members named as credentials (password, token).
func (t *safeText) build() {
	t.built = true
	t.carried = carriedValues(t.req)
	if t.req == nil {
		return
	}
	add := func(v string) {
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && redact.Credential(v) != "[masked]" {
			v = cred
		}
		if v != "" && len(t.private) < maxCarried {
			t.private = append(t.private, v)
		}
	}
	for name, vs := range t.req.Header {
		if redact.CredentialName(name) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	q := t.req.Query
	if q == nil {
		q, _ = url.ParseQuery(t.req.RawQuery)
	}
	for k, vs := range q {
		if redact.CredentialName(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	if len(t.req.Body) > 0 && rules.IsJSON(t.req.Body) {
		var walk func(v gjson.Result)
		walk = func(v gjson.Result) {
			v.ForEach(func(k, m gjson.Result) bool {
				switch {
				case m.IsObject() || m.IsArray():
					walk(m)
				case k.Type == gjson.String && redact.CredentialName(k.Str):
					add(m.String())
				}
				return len(t.private) < maxCarried
			})
		}
		walk(gjson.ParseBytes(t.req.Body))
	}
}

// maxCarried bounds how many of the request's values are set aside.
const maxCarried = 256

// withoutCarried returns s with each value the request carried (in the
// path, the query or a JSON body; keys too), matched in any ASCII case,
// replaced by a neutral word, so that quotable judges only the upstream's
// own words: a digest or a URL the caller sent is not the operator's.
func (t *safeText) withoutCarried(s string) string {
	if !t.built {
		t.build()
	}
	for _, v := range t.carried {
		s = replaceFold(s, v, "value")
	}
	// A parameter the caller sent, assigned (try ?step=XX), is the
	// caller's own too, not an assignment of the operator's.
	return strings.ReplaceAll(s, "value=", "value is ")
}

// carriedValues lists the values req carried, two bytes or longer, longest
// first: path variables and segments, query keys and values, a JSON body's
// keys and scalar values.
func carriedValues(req *Request) []string {
	if req == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if len(v) >= 2 && len(v) <= maxUpstreamText && !seen[v] && len(out) < maxCarried {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, v := range req.Vars {
		add(v)
	}
	for _, seg := range strings.Split(req.Path, "/") {
		add(seg)
		if u, err := url.PathUnescape(seg); err == nil {
			add(u)
		}
	}
	q := req.Query
	if q == nil {
		q, _ = url.ParseQuery(req.RawQuery)
	}
	for k, vs := range q {
		add(k)
		for _, v := range vs {
			add(v)
		}
	}
	if len(req.Body) > 0 && rules.IsJSON(req.Body) {
		var walk func(v gjson.Result)
		walk = func(v gjson.Result) {
			v.ForEach(func(k, m gjson.Result) bool {
				if k.Type == gjson.String {
					add(k.Str)
				}
				switch {
				case m.IsObject() || m.IsArray():
					walk(m)
				case m.Type == gjson.String:
					add(m.Str)
				case m.Type == gjson.Number:
					add(m.Raw)
				}
				return len(out) < maxCarried
			})
		}
		walk(gjson.ParseBytes(req.Body))
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// replaceFold replaces every occurrence of old in s that stands as a word
// (neither end touching a letter or digit), matched in any ASCII case,
// with new. A value met inside a longer token is left: setting it aside
// could split a key into pieces that each look harmless.
func replaceFold(s, old, new string) string {
	if len(old) > len(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+len(old) <= len(s); {
		if strings.EqualFold(s[i:i+len(old)], old) && wordEdge(s, i, i+len(old)) {
			b.WriteString(s[last:i])
			b.WriteString(new)
			i += len(old)
			last = i
			continue
		}
		i++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// wordEdge reports whether s[i:j] touches no letter or digit on either
// side.
func wordEdge(s string, i, j int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[j:])
	return !wordRune(before) && !wordRune(after)
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
		if wordEdge(s, j, j+len(w)) {
			return true
		}
		i = j + 1
	}
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
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
		case r == '<' && angleToken(s, i):
			// A parser's token in angle brackets (unexpected <by>,
			// <EOF>): one word, no slash, so no tag that closes.
		case r == '>' && prev != ' ' && angleOpen(s, i):
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

// angleToken reports whether s[i], a '<', opens a token of letters,
// digits and underscores closed by '>', as parsers name what they met.
func angleToken(s string, i int) bool {
	j := i + 1
	for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
		j++
	}
	return j > i+1 && j < len(s) && s[j] == '>'
}

// angleOpen reports whether s[i], a '>', closes a token angleToken opened.
func angleOpen(s string, i int) bool {
	j := i - 1
	for j >= 0 && (isAlnum(s[j]) || s[j] == '_') {
		j--
	}
	return j >= 0 && j < i-1 && s[j] == '<'
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

// keepSaid sets on e what the upstream said of an error no rule explains:
// its code, its message and its details.
func (e *Error) keepSaid(up *Upstream, route *rules.Route, req *Request) {
	said := upstreamSaid(up, route, req, nil)
	e.UpstreamCode, e.UpstreamMessage, e.UpstreamDetail = said.Code, said.Message, said.Detail
}

// keepSaidBeyond sets on e, the answer of rule, what the upstream said that
// the rule's answer does not: its code, unless it is the rule's own in
// other dress (NOT_FOUND for not_found) or the one the rule matches, and
// its details, but the value already in received. The rule's message
// stands for the upstream's: its author wrote it to say more (and may
// quote the upstream's with {upstream}).
func (e *Error) keepSaidBeyond(rule *rules.ErrorRule, up *Upstream, req *Request, sent gjson.Result) {
	said := upstreamSaid(up, rule.Route(), req, func(string) bool { return false })
	if w := otherWord(rule, up, req); w != "" && !strings.Contains(e.Message, w) {
		e.UpstreamMessage = w
	}
	if said.Code != "" && !sameCode(said.Code, e.Code) && !matchesCode(rule.Match, said.Code) {
		e.UpstreamCode = said.Code
	}
	for _, d := range said.Detail {
		if !sent.Exists() || d != sent.String() {
			e.UpstreamDetail = append(e.UpstreamDetail, d)
		}
	}
}

// matchesCode reports whether m, a rule's match, is written for code: the
// rule was made for that code, and its own code stands for it.
func matchesCode(m rules.Match, code string) bool {
	return m.Equals != nil && strings.EqualFold(*m.Equals, code) ||
		m.Contains != nil && strings.Contains(code, *m.Contains) ||
		m.Regex != nil && m.Regex.MatchString(code)
}

// sameCode reports whether two codes differ only in case and in how their
// words are joined.
func sameCode(a, b string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '-' || r == '.' || r == ' ' {
				return '_'
			}
			return unicode.ToLower(r)
		}, s)
	}
	return norm(a) == norm(b)
}
