package mcp

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// DefaultMaxResult bounds the body a tool result carries: more than a
// model can use in one turn.
const DefaultMaxResult = 1 << 20

// result turns the pipeline's answer into a tool result. A success (status
// below 400) is the body as the upstream sent it; an error is a tool
// execution error, with signpost's body as the structured content and its
// Text rendering as the text, so that a model whose client shows only text
// reads the same facts. An error body signpost did not write (an
// unmatched: passthrough route) is given as it came, after its status.
func result(res *http.Response, max int64) *sdk.CallToolResult {
	body, err := readBody(res, max)
	if err != nil {
		return errorResult(err)
	}
	if rpc, isErr := rpcError(body); isErr {
		body = rpc
	} else if fault, isFault := xmlrpcFault(body); isFault {
		body = fault
	} else if res.StatusCode < http.StatusBadRequest {
		return success(res, body)
	}
	if text, ok := Text(body); ok {
		return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(body),
			Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	}
	text := strconv.Itoa(res.StatusCode) + " " + http.StatusText(res.StatusCode)
	if len(body) > 0 && utf8.Valid(body) {
		text += "\n" + string(body)
	}
	out := &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	if gjson.ValidBytes(body) && gjson.ParseBytes(body).IsObject() {
		out.StructuredContent = json.RawMessage(body)
	}
	return out
}

// success is a 1xx to 3xx answer: its body byte for byte as the text, and,
// when it is a JSON object, as the structured content too. A body that is
// not text is described, not sent.
func success(res *http.Response, body []byte) *sdk.CallToolResult {
	out := &sdk.CallToolResult{}
	switch {
	case len(body) == 0:
		out.Content = []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("the call succeeded: %d %s, with no body", res.StatusCode, http.StatusText(res.StatusCode))}}
	case !utf8.Valid(body):
		ctype, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
		if ctype == "" {
			ctype = "unknown type"
		}
		out.Content = []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("the call succeeded: %d %s, with %d bytes of %s, which are not text and are not shown",
			res.StatusCode, http.StatusText(res.StatusCode), len(body), ctype)}}
	default:
		out.Content = []sdk.Content{&sdk.TextContent{Text: string(body)}}
		if gjson.ValidBytes(body) && gjson.ParseBytes(body).IsObject() {
			out.StructuredContent = json.RawMessage(body)
		}
	}
	return out
}

// readBody reads an answer's body, decoding gzip, up to max bytes.
func readBody(res *http.Response, max int64) ([]byte, *rewrite.Error) {
	defer res.Body.Close()
	r := io.Reader(res.Body)
	switch enc := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			return nil, unreadable(res, "its gzip encoding is corrupt")
		}
		defer zr.Close()
		r = zr
	default:
		return nil, unreadable(res, "it is encoded as "+strconv.Quote(enc))
	}
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	switch {
	case errors.Is(err, errOverLimit) || int64(len(body)) > max:
		// Cut short on the wire or once decoded, it is over the bound.
		return nil, tooLarge(res, max)
	case err != nil:
		return nil, unreadable(res, "it broke off")
	}
	return body, nil
}

// unreadable describes an answer whose body cannot be read. A success may
// have taken effect, and the message says so.
func unreadable(res *http.Response, why string) *rewrite.Error {
	msg := fmt.Sprintf("the answer (%d %s) could not be read: %s", res.StatusCode, http.StatusText(res.StatusCode), why)
	if res.StatusCode < http.StatusBadRequest {
		msg += "; the call succeeded, so check its effect before repeating it"
	}
	return rewrite.Failure(http.StatusBadGateway, rewrite.CodeUnreadableResponse, msg, false)
}

// tooLarge describes an answer over the bound a result carries.
func tooLarge(res *http.Response, max int64) *rewrite.Error {
	msg := fmt.Sprintf("the answer (%d %s) is over %s, more than a tool result carries", res.StatusCode, http.StatusText(res.StatusCode), rules.SizeText(max))
	if res.StatusCode < http.StatusBadRequest {
		msg += "; the call succeeded, so ask for less (a narrower query, a smaller page) rather than repeating it"
	}
	return rewrite.Failure(http.StatusBadGateway, rewrite.CodeResponseTooLarge, msg, false)
}

// errorResult is a body signpost composed itself, as a tool error.
func errorResult(e *rewrite.Error) *sdk.CallToolResult {
	body := e.JSON()
	text, _ := Text(body)
	return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(body),
		Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// rpcError reads a JSON-RPC 2.0 error response, which travels in a
// success: when signpost wrote it, its data with the message back in, as
// signpost's own format says it; else the body as it is. isErr is false
// for any other body.
func rpcError(body []byte) (out []byte, isErr bool) {
	if !gjson.ValidBytes(body) {
		return nil, false
	}
	doc := gjson.ParseBytes(body)
	e := doc.Get("error")
	if !doc.IsObject() || doc.Get("jsonrpc").Str != "2.0" || !e.IsObject() {
		return nil, false
	}
	data := e.Get("data")
	if !data.IsObject() || data.Get("error").Type != gjson.String || e.Get("message").Type != gjson.String {
		return body, true
	}
	out, err := sjson.SetBytes([]byte(data.Raw), "message", e.Get("message").Str)
	if err != nil {
		return body, true
	}
	return out, true
}
