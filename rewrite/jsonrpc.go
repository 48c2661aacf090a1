package rewrite

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// The JSON-RPC 2.0 error codes signpost answers with when the upstream
// gave none of its own.
const (
	RPCInvalidParams = -32602 // a declared field is at fault
	RPCServerError   = -32000 // any other refusal: the range left to servers
)

// RPCCode is the integer code of the JSON-RPC error the upstream answered
// with (its error.code), or 0 when it answered none.
func RPCCode(up *Upstream) int {
	if up == nil || up.Body == nil || len(up.Body.Raw) == 0 {
		return 0
	}
	c := gjson.GetBytes(up.Body.Raw, "error.code")
	if c.Type != gjson.Number {
		return 0
	}
	n, err := strconv.Atoi(c.Raw)
	if err != nil {
		return 0
	}
	return n
}

// RequestID returns the id of a JSON-RPC call, as the request wrote it (a
// string, a number or null), or null when the body is not one call: the
// answer must name the call it answers, and null is what JSON-RPC names
// a call it could not read by.
func RequestID(req *Request) []byte {
	if req == nil || !req.bodyObject() {
		return null
	}
	switch id := gjson.Get(req.text, "id"); id.Type {
	case gjson.String, gjson.Number:
		return []byte(id.Raw)
	}
	return null
}

var null = []byte("null")

// AppendJSONRPC appends e to b as a JSON-RPC 2.0 error response to the
// call with this id: code is the upstream's, else RPCInvalidParams for a
// field at fault, else RPCServerError; message is e's message; data holds
// signpost's members (error, field, received, did_you_mean, next_call,
// retryable, ...), so that a JSON-RPC client reads the error as one and an
// agent finds everything signpost's own format says.
func (e *Error) AppendJSONRPC(b, id []byte, code int) []byte {
	if code == 0 {
		code = RPCServerError
		if e.Field != "" || len(e.Errors) > 0 {
			code = RPCInvalidParams
		}
	}
	o := openObject(b)
	o.str("jsonrpc", "2.0")
	o.raw("id", id)
	o.member("error")
	eo := openObject(o.b)
	eo.member("code")
	eo.b = strconv.AppendInt(eo.b, int64(code), 10)
	eo.str("message", e.Message)
	eo.member("data")
	d := openObject(eo.b)
	d.str("error", e.Code)
	e.members(&d, "")
	eo.b = d.bytes()
	o.b = eo.bytes()
	return o.bytes()
}
