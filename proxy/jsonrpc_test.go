package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/rpc/v2/json2"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// rpcRules front a JSON-RPC 2.0 server as aria2's is: one endpoint, HTTP
// 400 for a call it refuses, 200 with a result or, for a batch, each
// call's answer.
const rpcRules = `
format: jsonrpc
routes:
  rpc:
    method: POST
    path: /jsonrpc
    validate: %s
    fields:
      method: {enum: [aria2.addUri, aria2.tellStatus, aria2.remove], required: true}
    errors:
      - match: {status: 400, json: error.message, regex: '^No such method: (?P<received>.*)$'}
        code: unknown_method
        field: method
      - match: {status: 400, json: error.message, regex: '^Invalid GID (?P<received>.*)$'}
        code: invalid_gid
        message: 'no download has the gid {received}; a gid is 16 hex digits, e.g. 2089b05ecca3d829'
      - match: {status: 200, json: result, equals: busy}
        code: busy
        message: the server is busy; call again in a second
        retryable: true
`

// rpcUpstream answers as aria2 does.
func rpcUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json-rpc")
		doc := gjson.ParseBytes(body)
		if doc.IsArray() {
			io.WriteString(w, `[{"id":"a","jsonrpc":"2.0","result":"2089b05ecca3d829"},{"id":"b","jsonrpc":"2.0","error":{"code":1,"message":"No such method: nope"}}]`)
			return
		}
		id := doc.Get("id").Raw
		switch m := doc.Get("method").Str; m {
		case "aria2.tellStatus":
			if gid := doc.Get("params.0").Str; gid != "2089b05ecca3d829" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"id":`+id+`,"jsonrpc":"2.0","error":{"code":1,"message":"Invalid GID `+gid+`"}}`)
				return
			}
			io.WriteString(w, `{"id":`+id+`,"jsonrpc":"2.0","result":{"status":"active"}}`)
		case "aria2.remove":
			io.WriteString(w, `{"id":`+id+`,"jsonrpc":"2.0","result":"busy"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"id":`+id+`,"jsonrpc":"2.0","error":{"code":1,"message":"No such method: `+m+`"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func rpcProxy(t *testing.T, validate string) *Proxy {
	t.Helper()
	cfg, err := rules.Parse("rpc.yaml", []byte(strings.Replace(rpcRules, "%s", validate, 1)))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(rpcUpstream(t).URL)
	p, err := New(cfg, Options{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestJSONRPCClientReadsTheAnswer: a JSON-RPC client library reads each
// answer signpost rewrites, or writes itself, as a JSON-RPC error of the
// call it made, with the upstream's code where it gave one and
// signpost's members in data.
func TestJSONRPCClientReadsTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		validate, method string
		params           []any
		status, code     int
		message          string
		data             string // signpost's members
	}{
		{"after", "aria2.tellStatuss", []any{"2089b05ecca3d829"}, 400, 1,
			"allowed values: aria2.addUri, aria2.tellStatus, aria2.remove",
			`{"error":"unknown_method","field":"method","upstream_code":"1","received":"aria2.tellStatuss","retryable":false}`},
		{"after", "aria2.tellStatus", []any{"zzzz"}, 400, 1,
			`no download has the gid "zzzz"; a gid is 16 hex digits, e.g. 2089b05ecca3d829`,
			`{"error":"invalid_gid","upstream_code":"1","received":"zzzz","retryable":false}`},
		{"after", "aria2.remove", []any{"2089b05ecca3d829"}, 200, rewriteRPCServerError,
			"the server is busy; call again in a second",
			`{"error":"busy","retryable":true}`},
		{"before", "aria2.addURI", []any{[]string{"http://127.0.0.1/a"}}, 400, rewriteRPCInvalidParams,
			"allowed values: aria2.addUri, aria2.tellStatus, aria2.remove",
			`{"error":"unknown_method","field":"method","received":"aria2.addURI","retryable":false}`},
	} {
		t.Run(tc.validate+" "+tc.method, func(t *testing.T) {
			p := rpcProxy(t, tc.validate)
			call, err := json2.EncodeClientRequest(tc.method, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			w := serveOn(p, httptest.NewRequest("POST", "/jsonrpc", bytes.NewReader(call)))
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			answer := w.Body.Bytes()
			if got, want := gjson.GetBytes(answer, "id").Raw, gjson.GetBytes(call, "id").Raw; got != want || got == "" {
				t.Errorf("id %s, want the call's, %s: %s", got, want, answer)
			}
			if v := gjson.GetBytes(answer, "jsonrpc").Raw; v != `"2.0"` {
				t.Errorf("jsonrpc %s: %s", v, answer)
			}
			var result any
			err = json2.DecodeClientResponse(bytes.NewReader(answer), &result)
			var rpcErr *json2.Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("the client read no JSON-RPC error: %v; body %s", err, answer)
			}
			if int(rpcErr.Code) != tc.code || rpcErr.Message != tc.message {
				t.Errorf("error %d %q, want %d %q", rpcErr.Code, rpcErr.Message, tc.code, tc.message)
			}
			data, _ := json.Marshal(rpcErr.Data)
			if got := gjson.GetBytes(answer, "error.data").Raw; got != tc.data {
				t.Errorf("data %s (the client read %s)\nwant %s", got, data, tc.data)
			}
		})
	}
}

// The codes signpost answers with when the upstream gave none.
const (
	rewriteRPCInvalidParams = -32602
	rewriteRPCServerError   = -32000
)

// TestJSONRPCBatch: before mode does not refuse a batch, which is calls of
// their own; in the upstream's answer to it, each error is rewritten as
// its call's own answer would be, with its id, and each result passes as
// it came; a lone success passes untouched.
func TestJSONRPCBatch(t *testing.T) {
	p := rpcProxy(t, "before")
	batch := `[{"jsonrpc":"2.0","id":"a","method":"aria2.addUri","params":[["http://127.0.0.1/a"]]},{"jsonrpc":"2.0","id":"b","method":"nope"}]`
	w := serveOn(p, httptest.NewRequest("POST", "/jsonrpc", strings.NewReader(batch)))
	want := `[{"id":"a","jsonrpc":"2.0","result":"2089b05ecca3d829"},` +
		`{"jsonrpc":"2.0","id":"b","error":{"code":1,"message":"allowed values: aria2.addUri, aria2.tellStatus, aria2.remove","data":{"error":"unknown_method","field":"method","upstream_code":"1","received":"nope","retryable":false}}}]`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("batch: %d %s\nwant 200 %s", w.Code, w.Body, want)
	}
	ok := `{"jsonrpc":"2.0","id":7,"method":"aria2.tellStatus","params":["2089b05ecca3d829"]}`
	w = serveOn(p, httptest.NewRequest("POST", "/jsonrpc", strings.NewReader(ok)))
	if want := `{"id":7,"jsonrpc":"2.0","result":{"status":"active"}}`; w.Code != 200 || w.Body.String() != want {
		t.Errorf("success: %d %s\nwant 200 %s", w.Code, w.Body, want)
	}
}
