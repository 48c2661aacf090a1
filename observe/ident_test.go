package observe

import (
	"strings"
	"testing"
)

// TestIdentify picks what names an error: a JSON member, an HTML title or
// heading, or a first line, masked and cut.
func TestIdentify(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	for _, tc := range []struct {
		name, body, ct string
		path, text     string
	}{
		{"error", `{"error":"ticket is closed"}`, "application/json", "error", "ticket is closed"},
		{"nested message", `{"error":{"message":"bad status","code":"E12"}}`, "", "error.message", "bad status"},
		{"nested code only", `{"error":{"code":"E12"}}`, "", "error.code", "E12"},
		{"message before detail", `{"detail":"d","message":"m"}`, "", "message", "m"},
		{"detail", `{"status":409,"detail":"conflict"}`, "", "detail", "conflict"},
		{"title", `{"type":"about:blank","title":"Not Found"}`, "", "title", "Not Found"},
		{"error_description", `{"error_description":"expired"}`, "", "error_description", "expired"},
		{"errors array", `{"errors":[{"message":"name is required"}]}`, "", "errors.0.message", "name is required"},
		{"numeric code skipped", `{"code":42,"reason":"nope"}`, "", "reason", "nope"},
		{"empty error skipped", `{"error":"","message":"m"}`, "", "message", "m"},
		{"first string member", `{"n":1,"why":"quota"}`, "", "why", "quota"},
		{"member needing escape", `{"a.b":"x"}`, "", `a\.b`, "x"},
		{"no string member", `{"n":1}`, "", "", `{"n":1}`},
		{"html title", "<!DOCTYPE html>\n<html><head><title>\n  502 Bad   Gateway &amp; co\n</title></head></html>", "text/html", "", "502 Bad Gateway &amp; co"},
		{"html h1", "<html><body><H1 class=x>Service <b>Unavailable</b></H1></body></html>", "text/html; charset=utf-8", "", "Service Unavailable"},
		{"html by content type", "oops <h1>Down</h1>", "text/html", "", "Down"},
		{"html neither", "<html><body>\n<p>x</p></body></html>", "text/html", "", "<html><body>"},
		{"text first line", "\n\n  Internal error  \nat Main.java:12\n", "text/plain", "", "Internal error"},
		{"invalid json is text", `{"error": oops`, "application/json", "", `{"error": oops`},
		{"empty", "", "", "", ""},
		{"cut", `{"error":"` + long + `"}`, "", "error", strings.Repeat("é", 100)},
		{"cut text", "x" + long, "", "", "x" + strings.Repeat("é", 99)},
		{"masked", `{"error":"invalid token sk_live_abcdefghijklmnop"}`, "", "error", "invalid token sk_live_[masked]"},
	} {
		path, text := identify([]byte(tc.body), tc.ct)
		if path != tc.path || text != tc.text {
			t.Errorf("%s: identify(%q) = %q, %q; want %q, %q", tc.name, tc.body, path, text, tc.path, tc.text)
		}
	}
}
