package observe

import (
	"strings"

	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/tidwall/gjson"
)

// namingPaths are the members of a JSON error body that name the error,
// tried in order; the first that holds a non-empty string wins.
var namingPaths = []string{
	"error", "error.message", "message", "detail", "title",
	"error_description", "code", "error.code", "errors.0.message",
}

// identify returns what identifies an error body: for JSON, the gjson path
// of the member that names it and its text; else an HTML page's title or
// first heading, or the body's first non-empty line, with no path. The
// text is masked and cut to textBytes; it may alias body.
func identify(body []byte, contentType string) (path, text string) {
	s := view(body)
	path, text = identifyRaw(s, contentType)
	return path, cut(redact.String(cut(text, maskWindow)), textBytes)
}

func identifyRaw(s, contentType string) (path, text string) {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" {
		return "", ""
	}
	if (t[0] == '{' || t[0] == '[') && gjson.Valid(s) {
		for _, p := range namingPaths {
			if v := gjson.Get(s, p); v.Type == gjson.String && strings.TrimSpace(v.Str) != "" {
				return p, v.Str
			}
		}
		gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
			if v.Type == gjson.String && strings.TrimSpace(v.Str) != "" {
				path, text = escapePath(k.Str), v.Str
				return false
			}
			return true
		})
		if path != "" {
			return path, text
		}
	}
	if i := strings.Index(t, "<name>faultString</name>"); i >= 0 && strings.HasPrefix(t, "<") {
		// An XML-RPC fault: its string names it.
		rest := t[i+len("<name>faultString</name>"):]
		if open := strings.Index(rest, "<string>"); open >= 0 {
			if end := strings.Index(rest[open:], "</string>"); end >= 0 {
				return "", strings.TrimSpace(rest[open+len("<string>") : open+end])
			}
		}
	}
	if t[0] == '<' || strings.Contains(strings.ToLower(contentType), "html") {
		if h := htmlElement(t, "title"); h != "" {
			return "", h
		}
		if h := htmlElement(t, "h1"); h != "" {
			return "", h
		}
	}
	return "", firstLine(t)
}

// firstLine returns the first line of s that is not blank, trimmed.
func firstLine(s string) string {
	for s != "" {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// htmlElement returns the text of the first element named tag in an HTML
// page, its inner tags dropped and its spaces collapsed; entities are left
// as they are.
func htmlElement(page, tag string) string {
	i := indexFold(page, "<"+tag)
	if i < 0 {
		return ""
	}
	rest := page[i+1+len(tag):]
	if rest == "" || (rest[0] != '>' && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' && rest[0] != '\r') {
		return "" // <titles>, <h10>: another element
	}
	open := strings.IndexByte(rest, '>')
	if open < 0 {
		return ""
	}
	rest = rest[open+1:]
	end := indexFold(rest, "</"+tag)
	if end < 0 {
		end = len(rest)
	}
	var b strings.Builder
	inTag, space := false, false
	for _, r := range rest[:end] {
		switch {
		case r == '<':
			inTag = true
		case r == '>' && inTag:
			inTag = false
		case inTag:
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			space = b.Len() > 0
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
		if b.Len() > maskWindow {
			break
		}
	}
	return b.String()
}

// indexFold is strings.Index for an ASCII lower-case sub, in any case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// escapePath escapes the characters gjson reads as path syntax in a
// member's name, so that the path names the member.
func escapePath(k string) string {
	if !strings.ContainsAny(k, `.*?|#@\!=<>%`) {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if strings.IndexByte(`.*?|#@\!=<>%`, k[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(k[i])
	}
	return b.String()
}
