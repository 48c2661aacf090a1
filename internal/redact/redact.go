// Package redact keeps what an upstream error tells the operator from the
// agent: the headers that name the upstream's software, version or host,
// which a body signpost writes drops, and the secrets an upstream body or
// an error may carry, which log lines mask.
package redact

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// maxLogged bounds the upstream body a log line carries.
const maxLogged = 2048

// revealingHeaders name the software, framework, version, host or debug
// handle behind the upstream. A rewritten or wrapped error drops them, and
// its log line keeps them; an error passed through keeps them, like a
// success.
var revealingHeaders = []string{
	"Server", "X-Powered-By", "X-Aspnet-Version", "X-Aspnetmvc-Version", "X-Runtime",
	"X-Version", "X-Generator", "X-Backend-Server", "X-Server", "X-Served-By", "X-Host",
	"X-Hostname", "X-Backend", "X-Instance", "X-Node", "X-Pod-Name", "X-Sourcefiles",
	"X-Debug-Token", "X-Debug-Token-Link",
}

// revealing holds revealingHeaders, to look a response's few headers up
// in rather than look each of them up in the response.
var revealing = func() map[string]bool {
	m := make(map[string]bool, len(revealingHeaders))
	for _, k := range revealingHeaders {
		m[k] = true
	}
	return m
}()

// Revealed returns the revealing headers h holds, masked, for a log line;
// nil when it holds none.
func Revealed(h http.Header) map[string]string {
	var out map[string]string
	for k, vs := range h {
		if revealing[k] && len(vs) > 0 {
			if out == nil {
				out = make(map[string]string)
			}
			out[k] = String(strings.Join(vs, ", "))
		}
	}
	return out
}

// Conceal drops the revealing headers from h.
func Conceal(h http.Header) {
	for k := range h {
		if revealing[k] {
			delete(h, k)
		}
	}
}

// A secret pattern is masked where it matches, once any of its triggers
// (lower case) occurs in the text: most error bodies hold none, and then
// no expression runs.
type secretPattern struct {
	triggers []string
	re       *regexp.Regexp
	with     string // the replacement, in regexp.Expand syntax
}

// masked replaces a secret's value in a log line. It holds no quote or
// backslash, so that it stands in a JSON string as it is.
const masked = "[masked]"

// secretPatterns are the secrets an upstream error or an echoed value may
// carry: cloud and service keys, bearer and basic credentials, passwords
// in URLs, JSON web tokens, private keys, and the value of any key or
// field named like a credential, its quotes escaped or not, as in a JSON
// text quoted in a string.
var secretPatterns = []secretPattern{
	{[]string{"-----begin"}, regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), "[masked private key]"},
	{[]string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}, regexp.MustCompile(`\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{12,}`), "${1}" + masked},
	{[]string{"eyj"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), "[masked jwt]"},
	{[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "sk_live_", "sk_test_", "rk_live_", "aiza"},
		regexp.MustCompile(`\b(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|sk_live_|sk_test_|rk_live_|AIza)[A-Za-z0-9_-]{8,}`), "${1}" + masked},
	{[]string{"bearer", "basic", "digest", "negotiate"}, regexp.MustCompile(`(?i)\b(bearer|basic|digest|negotiate)(\s+)[A-Za-z0-9._~+/=-]{6,}`), "${1}${2}" + masked},
	{[]string{"://"}, regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"\\]*):[^\s@/"\\]+@`), "${1}:" + masked + "@"},
	{[]string{"pass", "pwd", "secret", "token", "key", "auth", "session", "cookie", "credential", "signature"},
		regexp.MustCompile(`(?i)\b([A-Za-z0-9_-]*` + credentialWord + `[A-Za-z0-9_-]*)((?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?)([^\s"'&,;{}\[\]\\]+)`), "${1}${2}" + masked},
}

// credentialWord is what a key, header or field named like a credential
// holds: password, secret, token, api_key, authorization, cookie, ...
const credentialWord = `(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth(?:orization)?|session[_-]?id|cookie|credentials?|signature)`

// credentialName finds credentialWord as a word of a name, so that
// "author" is not taken for "auth".
var credentialName = regexp.MustCompile(`(?:^|[^a-z])` + credentialWord + `(?:$|[^a-z])`)

// CredentialName reports whether a header, parameter or key of this name
// holds a credential, as the logs judge a key=value pair, the words of the
// name taken apart: Authorization, Proxy-Authorization, Cookie, X-Api-Key,
// password, session_id, accessToken, but not author.
func CredentialName(name string) bool {
	if !anyTrigger(name) {
		return false
	}
	var b strings.Builder
	prev := ' '
	for _, r := range name {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			b.WriteByte('_') // camelCase: accessToken is access_token
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return credentialName.MatchString(b.String())
}

// authScheme is an authentication scheme that opens a credential.
var authScheme = regexp.MustCompile(`(?i)^(bearer|basic|digest|negotiate|token|apikey)\s+\S`)

// Credential masks a credential's whole value, keeping only the
// authentication scheme that opens it, which says what kind was sent:
// "Bearer sk_live_…" becomes "Bearer [masked]", any other value "[masked]".
// An empty value stays empty.
func Credential(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if m := authScheme.FindStringSubmatch(v); m != nil {
		return m[1] + " " + masked
	}
	return masked
}

// String masks the secrets in s, for a log line. A JSON text is masked
// value by value and stays JSON, a JSON text quoted in one of its strings
// too (see maskJSON); any other text where the patterns match.
func String(s string) string {
	return mask(s, 0)
}

// mask is String for a text held depth arrays, objects and strings deep.
func mask(s string, depth int) string {
	if !anyTrigger(s) {
		return s // most texts: no expression runs, nothing is allocated
	}
	if m, ok := maskJSON(s, depth); ok {
		return m
	}
	return patterns(s)
}

// patterns masks s where the secret patterns match.
func patterns(s string) string {
	var lower string
	for _, p := range secretPatterns {
		if lower == "" {
			lower = strings.ToLower(s)
		}
		for _, t := range p.triggers {
			if strings.Contains(lower, t) {
				s = p.re.ReplaceAllString(s, p.with)
				lower = ""
				break
			}
		}
	}
	return s
}

// anyTrigger reports whether s may hold a trigger of a pattern, in any
// case; a text with a byte beyond ASCII is taken to, as its lower case
// may hold one that its bytes do not (the Kelvin sign lowers to k). One
// pass: at each byte, only the triggers that begin with it are tried.
func anyTrigger(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return true
		}
		for _, t := range triggersFrom[c|0x20] {
			if i+len(t) <= len(s) && strings.EqualFold(s[i:i+len(t)], t) {
				return true
			}
		}
	}
	return false
}

// triggersFrom lists every pattern's triggers by their first byte, in
// either case.
var triggersFrom = func() (by [256][]string) {
	for _, p := range secretPatterns {
		for _, t := range p.triggers {
			by[t[0]|0x20] = append(by[t[0]|0x20], t)
		}
	}
	return by
}()

// JSON masks the secrets in an echoed JSON value; should masking
// ever leave it invalid, it is logged as a string. A JSON string, the
// usual value, is returned as the Go string it holds, which a JSON log
// writes back the same without a second pass through encoding/json.
func JSON(raw []byte) any {
	s := String(string(raw))
	if len(s) >= 2 && s[0] == '"' {
		if v := gjson.Parse(s); v.Type == gjson.String && len(v.Raw) == len(s) && json.Valid([]byte(s)) {
			return v.Str
		}
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}

// clipWindow is how far past maxLogged a body is masked before it is
// cut, so that a secret across the cut is masked whole.
const clipWindow = 512

// Clip returns b masked and cut to maxLogged bytes, marked when
// cut. The text after the window's last separator is dropped first, so no
// part of a secret the window cut in two is logged. A JSON body that is not
// cut stays JSON.
func Clip(b []byte) string {
	if len(b) <= maxLogged {
		return String(string(b))
	}
	w := b[:min(len(b), maxLogged+clipWindow)]
	if i := bytes.LastIndexAny(w, " \t\r\n\",;&<>{}[]()"); i > 0 {
		w = w[:i]
	}
	s := String(string(w))
	if len(s) > maxLogged {
		s = s[:maxLogged]
	}
	return s + "…[+" + strconv.Itoa(len(b)-len(s)) + " bytes]"
}
