package rewrite

import (
	"bytes"
	"encoding/xml"
	"regexp"
	"strconv"

	"github.com/tidwall/gjson"
)

// XMLRPCContentType is the media type of an XML-RPC answer.
const XMLRPCContentType = "text/xml"

// faultCodeOf finds an XML-RPC fault's faultCode in a body.
var faultCodeOf = regexp.MustCompile(`<name>\s*faultCode\s*</name>\s*<value>\s*<(?:int|i4)>\s*(-?[0-9]{1,9})\s*</`)

// FaultCode is the faultCode of the XML-RPC fault the upstream answered
// with, or 0 when it answered none.
func FaultCode(up *Upstream) int {
	if up == nil || up.Body == nil {
		return 0
	}
	m := faultCodeOf.FindSubmatch(up.Body.Raw)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// AppendXMLRPC appends e to b as an XML-RPC fault response: faultCode is
// code, else RPCInvalidParams for a field at fault, else RPCServerError
// (the codes of the XML-RPC fault code interoperability convention, as
// JSON-RPC's); faultString is e's message; and the fault's struct holds
// signpost's other members beside them (error, field, received,
// did_you_mean, errors, next_call, retryable, ...), which clients such as
// Python's xmlrpc.client keep on the fault they raise.
func (e *Error) AppendXMLRPC(b []byte, code int) []byte {
	if code == 0 {
		code = RPCServerError
		if e.Field != "" || len(e.Errors) > 0 {
			code = RPCInvalidParams
		}
	}
	b = append(b, `<?xml version="1.0"?>`+"\n"+`<methodResponse><fault><value><struct>`...)
	b = append(b, `<member><name>faultCode</name><value><int>`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `</int></value></member><member><name>faultString</name><value><string>`...)
	b = appendXMLText(b, e.Message)
	b = append(b, `</string></value></member>`...)
	gjson.ParseBytes(e.JSON()).ForEach(func(k, v gjson.Result) bool {
		if k.Str != "message" {
			b = appendRPCMember(b, k.Str, v)
		}
		return true
	})
	return append(b, "</struct></value></fault></methodResponse>\n"...)
}

// appendRPCMember appends a struct member holding the JSON value v.
func appendRPCMember(b []byte, name string, v gjson.Result) []byte {
	b = append(b, "<member><name>"...)
	b = appendXMLText(b, name)
	b = append(b, "</name>"...)
	b = appendRPCValue(b, v)
	return append(b, "</member>"...)
}

// appendRPCValue appends the JSON value v as an XML-RPC value: an object as
// a struct, an array as an array, a whole number as an int (a double past
// its 32 bits), a string, a boolean; null as an empty string, which every
// client reads.
func appendRPCValue(b []byte, v gjson.Result) []byte {
	b = append(b, "<value>"...)
	switch {
	case v.IsObject():
		b = append(b, "<struct>"...)
		v.ForEach(func(k, m gjson.Result) bool {
			b = appendRPCMember(b, k.Str, m)
			return true
		})
		b = append(b, "</struct>"...)
	case v.IsArray():
		b = append(b, "<array><data>"...)
		v.ForEach(func(_, m gjson.Result) bool {
			b = appendRPCValue(b, m)
			return true
		})
		b = append(b, "</data></array>"...)
	case v.Type == gjson.Number:
		if n, err := strconv.ParseInt(v.Raw, 10, 32); err == nil {
			b = append(b, "<int>"...)
			b = strconv.AppendInt(b, n, 10)
			b = append(b, "</int>"...)
		} else {
			b = append(b, "<double>"...)
			b = strconv.AppendFloat(b, v.Num, 'g', -1, 64)
			b = append(b, "</double>"...)
		}
	case v.Type == gjson.True:
		b = append(b, "<boolean>1</boolean>"...)
	case v.Type == gjson.False:
		b = append(b, "<boolean>0</boolean>"...)
	default:
		b = append(b, "<string>"...)
		b = appendXMLText(b, v.Str)
		b = append(b, "</string>"...)
	}
	return append(b, "</value>"...)
}

// appendXMLText appends s escaped as XML character data.
func appendXMLText(b []byte, s string) []byte {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(s))
	return append(b, buf.Bytes()...)
}
