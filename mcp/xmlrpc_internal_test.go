package mcp

import (
	"testing"
	"unicode/utf8"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// FuzzXMLRPCFault reads back, as signpost's own body, every fault signpost
// writes, whatever its message, code and received value; and reads any
// other bytes without a panic.
func FuzzXMLRPCFault(f *testing.F) {
	f.Add("invalid_name", "no process is named \"x\"", "x", []byte(`<methodResponse><fault><value><struct></struct></value></fault></methodResponse>`))
	f.Add("c", "a < b & c", "]]>", []byte(`<methodResponse><params/></methodResponse>`))
	f.Fuzz(func(t *testing.T, code, message, received string, other []byte) {
		_, _ = xmlrpcFault(other)
		if !utf8.ValidString(code) || !utf8.ValidString(message) || !utf8.ValidString(received) || code == "" || !xmlSafe(code+message+received) {
			t.Skip()
		}
		e := &rewrite.Error{Status: 400, Code: code, Field: "name", Message: message, Received: rewrite.Received(rules.Text(received), 64)}
		body, isFault := xmlrpcFault(e.AppendXMLRPC(nil, 10))
		if !isFault {
			t.Fatalf("signpost's fault read as none")
		}
		if got := gjson.GetBytes(body, "message").Str; got != message {
			t.Errorf("message %q, want %q", got, message)
		}
		if got := gjson.GetBytes(body, "error").Str; got != code {
			t.Errorf("error %q, want %q", got, code)
		}
		if got := gjson.GetBytes(body, "received").Str; got != gjson.GetBytes(e.JSON(), "received").Str {
			t.Errorf("received %q, want %q", got, gjson.GetBytes(e.JSON(), "received").Str)
		}
	})
}

// xmlSafe reports whether XML 1.0 carries s as it is: no control
// character but tab, newline and carriage return, which it reads as
// newline.
func xmlSafe(s string) bool {
	for _, r := range s {
		if r < ' ' || r == 0xFFFE || r == 0xFFFF || r >= 0xD800 && r <= 0xDFFF {
			return false
		}
	}
	return true
}
