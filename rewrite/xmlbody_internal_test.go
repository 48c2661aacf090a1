package rewrite

import (
	"strings"
	"testing"
)

// TestXMLValue reads elements by their path of local names, indexed from
// 1, in any namespace, as their trimmed text.
func TestXMLValue(t *testing.T) {
	const call = `<?xml version="1.0"?>
<methodCall>
  <methodName>supervisor.getProcessInfo</methodName>
  <params>
    <param><value><string>web</string></value></param>
    <param><value><int>5</int></value></param>
    <param><value>plain</value></param>
  </params>
</methodCall>`
	const dav = `<?xml version="1.0" encoding="utf-8"?>
<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:x">
  <D:set><D:prop><Z:Author>Ada &amp; co</Z:Author></D:prop></D:set>
</D:propertyupdate>`
	for _, tc := range []struct {
		body, path string
		want       string
		ok         bool
	}{
		{call, "methodCall/methodName", "supervisor.getProcessInfo", true},
		{call, "methodCall/params/param[1]/value", "web", true},
		{call, "methodCall/params/param/value/string", "web", true},
		{call, "methodCall/params/param[2]/value", "5", true},
		{call, "methodCall/params/param[3]/value", "plain", true},
		{call, "methodCall/params/param[4]/value", "", false},
		{call, "methodResponse/params", "", false},
		{dav, "propertyupdate/set/prop/Author", "Ada & co", true},
		{`<a><b>1</b><c><b>2</b></c><b>3</b></a>`, "a/b[2]", "3", true},
		{`<a><b>1</b><c><b>2</b></c></a>`, "a/c/b", "2", true},
		{`<a><b>1</b>`, "a/b", "1", true}, // read before the break
		{`{"a":{"b":1}}`, "a/b", "", false},
	} {
		got, ok := xmlValue([]byte(tc.body), tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s in %.30q: %q %t, want %q %t", tc.path, tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

func TestXMLProblem(t *testing.T) {
	for body, want := range map[string]string{
		`<a><b>1</b></a>`:       "",
		`<a><b>1</a>`:           "is not well-formed XML (line 1)",
		"<a>\n<b>":              "is not well-formed XML (line 2)",
		`{"method":"x"}`:        "is JSON, not XML",
		`   `:                   "holds no XML element",
		`<?xml version="1.0"?>`: "holds no XML element",
	} {
		if got := xmlProblem([]byte(body)); got != want {
			t.Errorf("xmlProblem(%q) = %q, want %q", body, got, want)
		}
	}
}

// FuzzXMLValue reads any element path in any body: no panic, and a value
// found is trimmed text with no markup left in it.
func FuzzXMLValue(f *testing.F) {
	f.Add(`<methodCall><methodName>m</methodName><params><param><value><string>x</string></value></param></params></methodCall>`, "methodCall/params/param[1]/value")
	f.Add(`<a><b>1</b><b>2</b></a>`, "a/b[2]")
	f.Add(`<a><![CDATA[<b>]]></a>`, "a")
	f.Fuzz(func(t *testing.T, body, path string) {
		v, ok := xmlValue([]byte(body), path)
		if !ok && v != "" {
			t.Errorf("a value %q where no element was found", v)
		}
		if v != strings.TrimSpace(v) {
			t.Errorf("value %q is not trimmed", v)
		}
		_ = xmlProblem([]byte(body))
	})
}
