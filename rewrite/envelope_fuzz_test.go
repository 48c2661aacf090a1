package rewrite_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// FuzzEnvelopes renders an answer, from any code, message and received
// text, as a JSON-RPC error response and as an XML-RPC fault: the first
// must be valid JSON naming the call's id, its message the answer's; the
// second a well-formed XML document whose faultString is the message.
func FuzzEnvelopes(f *testing.F) {
	f.Add("invalid_status", "allowed values: open, closed", "OPEN", "status", `7`)
	f.Add("x", "a <b> & \"c\" \u2028 \x01", "]]></string>", "", `"id-1"`)
	f.Add("", "", "", "", `null`)
	f.Fuzz(func(t *testing.T, code, message, received, field, id string) {
		if !utf8.ValidString(message) || !gjson.Valid(id) {
			t.Skip()
		}
		e := &rewrite.Error{Status: 400, Code: code, Field: field, Message: message, Received: rewrite.Received(rules.Text(received), 64)}
		rpc := e.AppendJSONRPC(nil, []byte(id), 0)
		if !gjson.ValidBytes(rpc) {
			t.Fatalf("JSON-RPC answer is not JSON: %s", rpc)
		}
		if got, want := gjson.GetBytes(rpc, "id").Raw, gjson.Parse(id).Raw; got != want {
			t.Errorf("id %s, want %s", got, want)
		}
		if got := gjson.GetBytes(rpc, "error.message").Str; got != strings.ToValidUTF8(message, "\uFFFD") && got != message {
			t.Errorf("message %q, want %q", got, message)
		}
		fault := e.AppendXMLRPC(nil, 0)
		d := xml.NewDecoder(bytes.NewReader(fault))
		var faultString string
		inString, afterName := false, false
		for {
			tok, err := d.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("the fault is not well-formed XML: %v\n%s", err, fault)
				}
				break
			}
			switch tk := tok.(type) {
			case xml.StartElement:
				inString = afterName && tk.Name.Local == "string"
			case xml.CharData:
				if inString {
					faultString += string(tk)
				}
				afterName = afterName || string(tk) == "faultString"
			case xml.EndElement:
				if inString && tk.Name.Local == "string" {
					if faultString != xmlText(message) {
						t.Errorf("faultString %q, want %q", faultString, message)
					}
					return
				}
			}
		}
	})
}

// xmlText is s as XML reads it back: what XML 1.0 can carry of it.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	var out string
	_ = xml.Unmarshal([]byte("<a>"+b.String()+"</a>"), &out)
	return out
}
