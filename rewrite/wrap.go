package rewrite

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// Codes of wrapped upstream errors, which no rule explains.
const (
	CodeRejected    = "upstream_rejected" // a 4xx
	CodeRateLimited = "rate_limited"      // a 429
	CodeFailed      = "upstream_failed"   // a 5xx
)

// MaxUpstreamMessage is the longest upstream message a wrapped body quotes.
const MaxUpstreamMessage = 200

// Wrap describes an upstream error that no rule matched, or whose body was
// too large to read: a generic code, the status kept, retryable derived
// from it. A 5xx on a request that is not idempotent may have taken effect,
// so it is not retryable: the caller is told to check first. The
// upstream's own words are quoted only when they are one short line from a
// 4xx; HTML, stack traces, multi-line text and 5xx bodies stay in the
// logs. route and req may be nil, when signpost knows neither.
func Wrap(up *Upstream, route *rules.Route, req *Request) *Error {
	status := up.Status
	phrase := strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		phrase += " " + t
	}
	e := &Error{Status: status, Retryable: rules.TransientStatus(status) && (status < 500 || req.idempotent())}
	switch {
	case status == http.StatusTooManyRequests:
		e.Code, e.Message = CodeRateLimited, "the upstream is limiting the rate of calls ("+phrase+"); wait, then repeat the call"
	case status >= 500 && e.Retryable:
		e.Code, e.Message = CodeFailed, "the upstream is unavailable for now ("+phrase+"); repeat the call shortly"
	case status >= 500:
		e.Code, e.Message = CodeFailed, "the upstream failed ("+phrase+"); the call may or may not have taken effect, so check before repeating it"
	default:
		e.Code, e.Message = CodeRejected, "the upstream rejected the call ("+phrase+") for a reason signpost has no rule for"
	}
	if e.Retryable {
		e.RetryAfter = retryAfter(up.Header, 0, timeNow())
	}
	if status < 500 {
		e.UpstreamMessage = shortMessage(up)
	}
	return e
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
func quotable(s string) bool {
	prev := ' '
	for _, r := range s {
		switch {
		case r == ' ':
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if prev == '.' || prev == ':' {
				return false
			}
		case strings.ContainsRune(proseMarks, r):
			if (prev == '.' || prev == ':') && r != '.' && r != ')' && r != '"' {
				return false
			}
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
