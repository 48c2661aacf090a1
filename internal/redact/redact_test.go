package redact

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRedact masks each kind of secret an upstream error or an echoed value
// may carry, and leaves the operator's other clues (hosts, SQL, paths,
// tenant ids) as they are.
func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"key AKIAIOSFODNN7EXAMPLE denied", "key AKIA[masked] denied"},
		{"temporary ASIAY34FZKBOKMUTVV7A", "temporary ASIA[masked]"},
		{"Authorization: Bearer abc.def-ghi_jkl", "Authorization: [masked] [masked]"},
		{"sent bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "sent bearer [masked jwt]"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "jwt [masked jwt]"},
		{"dial postgres://svc:hunter2@db-7.internal:5432/tickets", "dial postgres://svc:[masked]@db-7.internal:5432/tickets"},
		{`{"password":"hunter2","user":"ada"}`, `{"password":"[masked]","user":"ada"}`},
		{"db_password=hunter2 host=db-7", "db_password=[masked] host=db-7"},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [masked]"},
		{"X-Api-Key: 0123456789abcdef", "X-Api-Key: [masked]"},
		{"token ghp_0123456789abcdefghij0123456789abcdef", "token ghp_[masked]"},
		{"slack xoxb-1234-5678-abcdefgh", "slack xoxb-[masked]"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- after", "[masked private key] after"},
		{"-----BEGIN PRIVATE KEY-----\nMIIEow cut", "[masked private key]"},
		{"tenant_id=4471 at 10.0.3.17 in /srv/app/Main.java:212", "tenant_id=4471 at 10.0.3.17 in /srv/app/Main.java:212"},
		{"SELECT * FROM tickets WHERE id = 7", "SELECT * FROM tickets WHERE id = 7"},
		{"", ""},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestRedactJSONStaysJSON checks that a masked JSON value is still JSON,
// so that the log line keeps its type.
func TestRedactJSONStaysJSON(t *testing.T) {
	got := JSON([]byte(`{"api_key":"AKIAIOSFODNN7EXAMPLE","n":1}`))
	raw, ok := got.(json.RawMessage)
	if !ok || !json.Valid(raw) || strings.Contains(string(raw), "IOSFODNN7") {
		t.Errorf("redactJSON = %v (%T), want valid JSON without the key", got, got)
	}
}

// TestRedactEmbeddedJSON masks the secrets of a JSON text quoted inside a
// JSON string, at one level and deeper, and keeps the text JSON.
func TestRedactEmbeddedJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"error":"bad request","request":"{\"password\":\"hunter2\",\"token\":\"abc\"}"}`,
			`{"error":"bad request","request":"{\"password\":\"[masked]\",\"token\":\"[masked]\"}"}`},
		{`{"e":"{\"r\":\"{\\\"password\\\":\\\"hunter2\\\"}\"}"}`,
			`{"e":"{\"r\":\"{\\\"password\\\":\\\"[masked]\\\"}\"}"}`},
		{`["{\"api_key\": \"hunter2\"}", 1]`, `["{\"api_key\": \"[masked]\"}", 1]`},
		{`"{\"password\":\"hunter2\"}"`, `"{\"password\":\"[masked]\"}"`},
		{`{"error":"rejected {\"password\":\"hunter2\"} as sent"}`, `{"error":"rejected {\"password\":\"[masked]\"} as sent"}`},
		{`{"request":"{\"user\":\"ada\",\"note\":\"caf\u00e9 \\\\ ok\"}","token":"x"}`,
			`{"request":"{\"user\":\"ada\",\"note\":\"caf\u00e9 \\\\ ok\"}","token":"[masked]"}`},
	} {
		got := String(tc.in)
		if got != tc.want {
			t.Errorf("String(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
		if strings.Contains(got, "hunter2") || !json.Valid([]byte(got)) {
			t.Errorf("String(%s) = %s: want valid JSON without the secret", tc.in, got)
		}
		if clipped := Clip([]byte(tc.in)); clipped != got {
			t.Errorf("Clip(%s) = %s; want %s, as String masks it", tc.in, clipped, got)
		}
	}
}

// TestRedactJSONValues masks the whole value of a key named like a
// credential, whatever its type, and keeps the text JSON: each string and
// number in it becomes "[masked]"; null, true and false, which hold no
// secret, stay.
func TestRedactJSONValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"password":null}`, `{"password":null}`},
		{`{"password": null, "user": "ada"}`, `{"password": null, "user": "ada"}`},
		{`{"token":12345,"remember":true}`, `{"token":"[masked]","remember":true}`},
		{`{"pin_token":-1.5e3,"api_key":false}`, `{"pin_token":"[masked]","api_key":false}`},
		{`{"password":"correct horse battery staple"}`, `{"password":"[masked]"}`},
		{`{"password":"a,b\"c d"}`, `{"password":"[masked]"}`},
		{`{"password":""}`, `{"password":""}`},
		{`{"Authorization":"Bearer sk_live_0123456789abcdef"}`, `{"Authorization":"Bearer [masked]"}`},
		{`{"api_keys":["k1",2,null,{"name":"ci"}]}`, `{"api_keys":["[masked]","[masked]",null,{"name":"[masked]"}]}`},
		{`{"token":{"access":"a1","refresh":"r1","expires_in":3600},"user":"ada"}`,
			`{"token":{"access":"[masked]","refresh":"[masked]","expires_in":"[masked]"},"user":"ada"}`},
		{`{"user":{"name":"ada","password":"hunter2"}}`, `{"user":{"name":"ada","password":"[masked]"}}`},
		{`{"error":"token=hunter2 expired","n":[1,{"secret":"s"}]}`, `{"error":"token=[masked] expired","n":[1,{"secret":"[masked]"}]}`},
		{`{"ghp_0123456789abcdefghij":1}`, `{"ghp_[masked]":1}`},
		{`{"error":"token expired","\u0070assword":"hunter2"}`, `{"error":"token expired","\u0070assword":"[masked]"}`},
		// Not JSON: the patterns mask it.
		{`{"password":"x"} trailing`, `{"password":"[masked]"} trailing`},
		{`{"password":null`, `{"password":[masked]`},
	} {
		got := String(tc.in)
		if got != tc.want {
			t.Errorf("String(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
		if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
			t.Errorf("String(%s) = %s: JSON no longer", tc.in, got)
		}
	}
	if got, ok := JSON([]byte(`{"password":null,"token":"abc"}`)).(json.RawMessage); !ok || string(got) != `{"password":null,"token":"[masked]"}` {
		t.Errorf("JSON of a null password = %s (%T); want the JSON with the token masked", got, got)
	}
}

// TestRedactEscapedText masks a secret quoted with escaped quotes in a
// text that is not JSON, such as a JSON body cut for the log.
func TestRedactEscapedText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`error: {\"password\":\"hunter2\"}`, `error: {\"password\":\"[masked]\"}`},
		{`{"r":"{\\\"token\\\": \\\"hunter2\\\"`, `{"r":"{\\\"token\\\": \\\"[masked]\\\"`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
	}
	body := `{"error":"bad request","request":"{\"note\":\"` + strings.Repeat("x", maxLogged) + `\",\"password\":\"hunter2\"}"}`
	if got := Clip([]byte(body)); strings.Contains(got, "hunter") {
		t.Errorf("Clip of a long body with an embedded password: …%s", got[max(0, len(got)-80):])
	}
	body = `{"request":"{\"password\":\"hunter2\"}","pad":"` + strings.Repeat("y", 3*maxLogged) + `"}`
	if got := Clip([]byte(body)); !strings.HasPrefix(got, `{"request":"{\"password\":\"[masked]\"}"`) {
		t.Errorf("Clip of a long body = %.80s…; want the embedded password masked", got)
	}
}

// plainTrigger is anyTrigger's reference: each pattern's triggers looked
// for in the lower-cased text.
func plainTrigger(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	for _, p := range secretPatterns {
		for _, tr := range p.triggers {
			if strings.Contains(strings.ToLower(s), tr) {
				return true
			}
		}
	}
	return false
}

// FuzzAnyTrigger holds the one-pass search to the plain one.
func FuzzAnyTrigger(f *testing.F) {
	for _, s := range []string{"", "Invalid status", "no such ticket", "AKIAIOSFODNN7EXAMPLE", "x-api-KEY", "Bearer abc",
		"-----BEGIN RSA PRIVATE KEY-----", "https://u:p@h", "ghp", "ghp_", "passwor", "PASS", "ak", "a", "kelvin \u212a", "caf\u00e9",
		"eyJhbGciOi", "ey", "xo", "xOx", "session", "credentia", "a://", ":/", "sk_live", "sk_live_", "ke", "ey j", "@UTH", "`uth",
		`{"request":"{\"password\":\"hunter2\"}"}`, `{\\\"pass\\\":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := anyTrigger(s), plainTrigger(s); got != want {
			t.Errorf("anyTrigger(%q) = %v; want %v", s, got, want)
		}
	})
}

// TestRedactJSONString checks that a JSON string comes back as the text
// it holds, escapes decoded, masked.
func TestRedactJSONString(t *testing.T) {
	for raw, want := range map[string]string{
		`"OPEN"`:                           "OPEN",
		`"caf\u00e9 \"x\""`:                `café "x"`,
		`"key AKIAIOSFODNN7EXAMPLE there"`: "key AKIA[masked] there",
	} {
		if got, ok := JSON([]byte(raw)).(string); !ok || got != want {
			t.Errorf("JSON(%s) = %q; want the string %q", raw, got, want)
		}
	}
	if got, ok := JSON([]byte(`"a" "b"`)).(json.RawMessage); ok {
		t.Errorf("JSON of two strings = %s; want no JSON value", got)
	}
}

// TestClipRedacted checks the cut: at most maxLogged bytes plus the
// marker, and a secret across the cut never logged in part.
func TestClipRedacted(t *testing.T) {
	key := "AKIAIOSFODNN7EXAMPLE"
	for _, at := range []int{maxLogged - 30, maxLogged - 10, maxLogged - 4, maxLogged, maxLogged + clipWindow - 8} {
		b := []byte(strings.Repeat("x", at) + " " + key + " " + strings.Repeat("y", 4000))
		got := Clip(b)
		if strings.Contains(got, "IOSF") || strings.Contains(got, "EXAMPLE") {
			t.Errorf("key at %d: logged in part: …%q", at, got[max(0, len(got)-80):])
		}
		body, _, ok := strings.Cut(got, "…[+")
		if !ok || len(body) > maxLogged {
			t.Errorf("key at %d: %d bytes before the marker (found %v), want at most %d", at, len(body), ok, maxLogged)
		}
	}
	if got := Clip([]byte("short AKIAIOSFODNN7EXAMPLE")); got != "short AKIA[masked]" {
		t.Errorf("Clip(short) = %q", got)
	}
}

// TestConceal drops the revealing headers and keeps the others.
func TestConceal(t *testing.T) {
	h := http.Header{"Server": {"Apache/2.4.1 (Debian)"}, "X-Powered-By": {"PHP/5.4"}, "X-Aspnet-Version": {"4.0.30319"},
		"Retry-After": {"5"}, "Content-Type": {"text/plain"}}
	got := Revealed(h)
	if len(got) != 3 || got["Server"] != "Apache/2.4.1 (Debian)" || got["X-Powered-By"] != "PHP/5.4" {
		t.Errorf("revealed = %v", got)
	}
	Conceal(h)
	if len(h) != 2 || h.Get("Retry-After") != "5" || h.Get("Content-Type") != "text/plain" {
		t.Errorf("after conceal: %v, want Retry-After and Content-Type alone", h)
	}
	if Revealed(http.Header{"Content-Type": {"x"}}) != nil {
		t.Error("revealed of a header without revealing ones is not nil")
	}
}

// TestCredentialName tells the names of headers, parameters and keys that
// hold a credential from the others.
func TestCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "X-Api-Key": true,
		"api_key": true, "apiKey": true, "X-Auth-Token": true, "accessToken": true, "password": true,
		"new_password": true, "session_id": true, "client_secret": true, "X-Signature": true,
		"author": false, "Idempotency-Key": false, "X-Tenant": false, "title": false, "keyword": false,
		"monkey": false, "tokenizer": false, "passage": false,
	} {
		if got := CredentialName(name); got != want {
			t.Errorf("CredentialName(%q) = %t, want %t", name, got, want)
		}
	}
}

// TestCredential masks a credential whole, keeping only its scheme.
func TestCredential(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer sk_live_51HxQkLm0123456789abcdef": "Bearer [masked]",
		"basic YWRhOmh1bnRlcjI=":                  "basic [masked]",
		"Token abc":                               "Token [masked]",
		"0123456789abcdef":                        "[masked]",
		"session=abc; theme=dark":                 "[masked]",
		"Bearer":                                  "[masked]",
		"":                                        "",
	} {
		if got := Credential(in); got != want {
			t.Errorf("Credential(%q) = %q, want %q", in, got, want)
		}
	}
}
