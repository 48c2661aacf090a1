package test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/rpc/v2/json2"
	"github.com/tidwall/gjson"
)

// Legacy shapes on real servers from Debian's packages: Transmission's
// RPC, every answer a 200 saying in "result" whether the call worked,
// behind a 409 handshake; qBittorrent's Web API, form bodies and "Fails."
// in a 200; supervisord's XML-RPC, faults in a 200; aria2's JSON-RPC 2.0. In each, the wrong calls an agent makes, beside what the bare
// API answers, the corrected calls succeeding, over HTTP and MCP.

// legacyPackages is the line that installs both servers.
const legacyPackages = "apt-get install -y transmission-daemon qbittorrent-nox supervisor aria2"

// startTransmission runs transmission-daemon on loopback ports, its state
// in a directory of the test's, and returns its base URL.
func startTransmission(t *testing.T) string {
	t.Helper()
	bin := debianBinary(t, "/usr/bin/transmission-daemon", legacyPackages)
	dir := t.TempDir()
	addr := freePort(t)
	_, port, _ := strings.Cut(addr, ":")
	_, peer, _ := strings.Cut(freePort(t), ":")
	return startAPIAnswering(t, "transmission-daemon", addr, "/transmission/rpc", http.StatusConflict,
		bin, "--foreground", "--config-dir", dir, "--port", port, "--rpc-bind-address", "127.0.0.1",
		"--no-auth", "--allowed", "127.0.0.1", "--no-dht", "--no-lpd", "--no-portmap", "--no-utp",
		"--peerport", peer, "--bind-address-ipv4", "127.0.0.1", "--download-dir", filepath.Join(dir, "downloads"))
}

// startQBittorrent runs qbittorrent-nox on a loopback port, its profile
// in a directory of the test's, open to local calls without a login, and
// returns its base URL.
func startQBittorrent(t *testing.T) string {
	t.Helper()
	bin := debianBinary(t, "/usr/bin/qbittorrent-nox", legacyPackages)
	dir := t.TempDir()
	addr := freePort(t)
	_, port, _ := strings.Cut(addr, ":")
	_, peer, _ := strings.Cut(freePort(t), ":")
	conf := filepath.Join(dir, "qBittorrent", "config")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := fmt.Sprintf(`[LegalNotice]
Accepted=true

[BitTorrent]
Session\DHTEnabled=false
Session\LSDEnabled=false
Session\PeXEnabled=false
Session\Port=%s
Session\Interface=lo
Session\InterfaceName=lo
Session\DefaultSavePath=%s
Session\AnonymousModeEnabled=true

[Network]
PortForwardingEnabled=false

[Preferences]
WebUI\Enabled=true
WebUI\Address=127.0.0.1
WebUI\Port=%s
WebUI\LocalHostAuth=false
WebUI\HostHeaderValidation=false
WebUI\CSRFProtection=false
WebUI\UseUPnP=false
`, peer, filepath.Join(dir, "downloads"), port)
	if err := os.WriteFile(filepath.Join(conf, "qBittorrent.conf"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return startAPI(t, "qbittorrent-nox", addr, "/api/v2/app/version", bin, "--profile="+dir, "--webui-port="+port)
}

// transmissionSession returns the session id the daemon hands out, which
// a bare call must carry.
func transmissionSession(t *testing.T, api string) string {
	t.Helper()
	r := send(t, "POST", api+"/transmission/rpc", []byte(`{"method":"session-get"}`))
	id := r.header.Get("X-Transmission-Session-Id")
	if r.status != http.StatusConflict || id == "" {
		t.Fatalf("transmission-daemon answered %d without a session id: %s", r.status, r.body)
	}
	return id
}

// TestLegacyTransmission: errors Transmission carries in a 200 reach the
// agent as errors it can act on, counted as rejections; the 409
// handshake never reaches it; torrent-get, a route of its own on the one
// endpoint, has its required argument asked of it alone; successes pass
// byte for byte.
func TestLegacyTransmission(t *testing.T) {
	t.Parallel()
	api := startTransmission(t)
	config := "testdata/legacy/transmission.yaml"
	sp := startSignpost(t, config, api)
	session := transmissionSession(t, api)
	bare := func(body string) *reply {
		return send(t, "POST", api+"/transmission/rpc", []byte(body), "X-Transmission-Session-Id", session, "Content-Type", "application/json")
	}
	agent := func(body string) *reply {
		return send(t, "POST", sp.URL+"/transmission/rpc", []byte(body), "Content-Type", "application/json")
	}
	for _, tc := range []struct {
		name, call string
		bare       string // what the bare API answers, with 200
		status     int
		want       string // what the agent gets behind signpost
	}{
		{"a method misnamed", `{"method":"torrents-get","arguments":{"fields":["id"]}}`,
			`{"arguments":{},"result":"method name not recognized"}`, 400,
			`{"error":"unknown_method","field":"method","message":"allowed values: session-get, session-set, session-stats, torrent-get, torrent-add, torrent-start, torrent-stop, torrent-remove","received":"torrents-get","retryable":false}`},
		{"a relative directory", `{"method":"session-set","arguments":{"download-dir":"relative/dir"}}`,
			`{"arguments":{},"result":"download directory path is not absolute"}`, 400,
			`{"error":"invalid_download_dir","field":"download_dir","message":"must be an absolute path, e.g. /var/lib/transmission/downloads","received":"relative/dir","retryable":false}`},
		{"no fields asked for", `{"method":"torrent-get","arguments":{}}`,
			`{"arguments":{"torrents":[]},"result":"no fields specified"}`, 400,
			`{"error":"invalid_fields","field":"fields","message":"is required at arguments.fields","retryable":false}`},
		{"a torrent that is not there", `{"method":"torrent-add","arguments":{"filename":"/nonexistent/x.torrent"}}`,
			`{"arguments":{},"result":"invalid or corrupt torrent file"}`, 400,
			`{"error":"rpc_failed","message":"Transmission refused the call: \"invalid or corrupt torrent file\"","retryable":false}`},
	} {
		b := bare(tc.call)
		if b.status != http.StatusOK || strings.TrimSpace(string(b.body)) != tc.bare {
			t.Errorf("%s: the bare API answered %d %s, want 200 %s", tc.name, b.status, b.body, tc.bare)
		}
		wantJSONError(t, agent(tc.call), tc.status, tc.want)
	}
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "rpc", "code", "unknown_method", "field", "method")
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "rpc", "code", "rpc_failed", "field", "")
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "torrent_get", "code", "invalid_fields", "field", "fields")

	// The corrected calls succeed, and pass as the daemon answered them.
	for _, call := range []string{
		`{"method":"torrent-get","arguments":{"fields":["id"]}}`,
		`{"method":"session-set","arguments":{"download-dir":"/tmp"}}`,
		`{"method":"torrent-add","arguments":{"filename":"magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=m","paused":true}}`,
	} {
		got := agent(call)
		if got.status != http.StatusOK || gjson.GetBytes(got.body, "result").Str != "success" {
			t.Errorf("%s: %d %s", call, got.status, got.body)
		}
	}
	if got, want := agent(`{"method":"torrent-get","arguments":{"fields":["hashString"]}}`), bare(`{"method":"torrent-get","arguments":{"fields":["hashString"]}}`); string(got.body) != string(want.body) || got.status != want.status {
		t.Errorf("a success changed on its way: %d %s, the bare API %d %s", got.status, got.body, want.status, want.body)
	}

	// Over MCP, the same: the tool error, then the corrected call.
	m := startMCP(t, "stdio", config, api)
	wrong := readResult(t, m.call(t, "rpc", `{"method":"torrents-get"}`))
	if !wrong.isError || gjson.Get(wrong.structured, "error").Str != "unknown_method" || gjson.Get(wrong.structured, "received").Str != "torrents-get" {
		t.Errorf("MCP, a method misnamed: %+v", wrong)
	}
	none := readResult(t, m.call(t, "torrent_get", `{}`))
	if !none.isError || gjson.Get(none.structured, "field").Str != "fields" {
		t.Errorf("MCP, torrent_get without its fields: %+v", none)
	}
	right := readResult(t, m.call(t, "torrent_get", `{"fields":["hashString"]}`))
	if right.isError || gjson.Get(right.text, "arguments.torrents.0.hashString").Str != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("MCP, the corrected call: %+v", right)
	}
}

// TestLegacyQBittorrent: a form API's wrong values are blamed on their
// fields, before qBittorrent takes them silently or after its "Fails.";
// a JSON body is named for what it is; the corrected form calls succeed,
// over HTTP and MCP.
func TestLegacyQBittorrent(t *testing.T) {
	t.Parallel()
	api := startQBittorrent(t)
	config := "testdata/legacy/qbittorrent.yaml"
	sp := startSignpost(t, config, api)
	const form = "application/x-www-form-urlencoded"
	post := func(base, path, body, ctype string) *reply {
		return send(t, "POST", base+path, []byte(body), "Content-Type", ctype)
	}
	limit := func(base string) string {
		return string(send(t, "GET", base+"/api/v2/transfer/downloadLimit", nil).body)
	}

	// A limit that is no number: the bare API takes it as no limit at all.
	if r := post(api, "/api/v2/transfer/setDownloadLimit", "limit=102400", form); r.status != 200 {
		t.Fatalf("setting a limit: %d %s", r.status, r.body)
	}
	if r := post(api, "/api/v2/transfer/setDownloadLimit", "limit=fast", form); r.status != 200 || limit(api) != "0" {
		t.Errorf("the bare API answered %d to limit=fast and the limit is %s; want it taken silently as 0", r.status, limit(api))
	}
	wantJSONError(t, post(sp.URL, "/api/v2/transfer/setDownloadLimit", "limit=fast", form), 400,
		`{"error":"invalid_limit","field":"limit","message":"must be an integer of at least 0, e.g. 0","received":"fast","retryable":false}`)
	wantJSONError(t, post(sp.URL, "/api/v2/transfer/setDownloadLimit", `{"limit":102400}`, "application/json"), 400,
		`{"error":"invalid_form_body","message":"the request body is JSON, not a form; send a form-encoded body (Content-Type: application/x-www-form-urlencoded) with the fields limit","retryable":false}`)
	if r := post(sp.URL, "/api/v2/transfer/setDownloadLimit", "limit=204800", form); r.status != 200 || limit(sp.URL) != "204800" {
		t.Errorf("the corrected call: %d %s; the limit is %s", r.status, r.body, limit(sp.URL))
	}

	// A URL that is no torrent: "Fails." in a 200, bare.
	const garbage = "urls=not+a+url"
	if r := post(api, "/api/v2/torrents/add", garbage, form); r.status != 200 || string(r.body) != "Fails." {
		t.Errorf("the bare API answered %d %q, want 200 \"Fails.\"", r.status, r.body)
	}
	wantJSONError(t, post(sp.URL, "/api/v2/torrents/add", garbage, form), 400,
		`{"error":"nothing_added","message":"qBittorrent added nothing; the torrent may be there already (list it with torrents_info)","errors":[{"field":"urls","code":"invalid_urls","message":"must be a magnet link (magnet:?xt=urn:btih: and 40 hex digits) or an http(s) URL of a .torrent file, e.g. magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567","received":"not a url"}],"retryable":false}`)
	// JSON to a form endpoint: the bare API's 400 says nothing.
	magnet := "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=m"
	if r := post(api, "/api/v2/torrents/add", `{"urls":"`+magnet+`"}`, "application/json"); r.status != 400 || len(r.body) != 0 {
		t.Errorf("the bare API answered %d %q to JSON, want 400 and no body", r.status, r.body)
	}
	wantJSONError(t, post(sp.URL, "/api/v2/torrents/add", `{"urls":"`+magnet+`"}`, "application/json"), 400,
		`{"error":"invalid_form_body","message":"the request body is JSON, not a form; send a form-encoded body (Content-Type: application/x-www-form-urlencoded) with the fields urls, paused","retryable":false}`)
	ok := post(sp.URL, "/api/v2/torrents/add", url.Values{"urls": {magnet}, "paused": {"true"}}.Encode(), form)
	if ok.status != 200 || string(ok.body) != "Ok." {
		t.Errorf("the corrected add: %d %q, want 200 \"Ok.\"", ok.status, ok.body)
	}
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "add_torrent", "code", "nothing_added", "field", "")

	// Over MCP: the form is encoded from the arguments.
	m := startMCP(t, "stdio", config, api)
	wrong := readResult(t, m.call(t, "set_download_limit", `{"limit":"fast"}`))
	if !wrong.isError || gjson.Get(wrong.structured, "error").Str != "invalid_limit" {
		t.Errorf("MCP, limit fast: %+v", wrong)
	}
	if r := readResult(t, m.call(t, "set_download_limit", `{"limit":"307200"}`)); r.isError || limit(api) != "307200" {
		t.Errorf("MCP, the corrected limit: %+v; the limit is %s", r, limit(api))
	}
	added := readResult(t, m.call(t, "add_torrent", `{"urls":"magnet:?xt=urn:btih:89abcdef0123456789abcdef0123456789abcdef&dn=n","paused":"true"}`))
	if added.isError || added.text != "Ok." {
		t.Errorf("MCP, add a torrent: %+v", added)
	}
}

// startSupervisor runs supervisord on a loopback port with one program,
// x, its files in a directory of the test's, and returns its base URL.
func startSupervisor(t *testing.T) string {
	t.Helper()
	bin := debianBinary(t, "/usr/bin/supervisord", legacyPackages)
	dir := t.TempDir()
	addr := freePort(t)
	conf := filepath.Join(dir, "supervisord.conf")
	settings := fmt.Sprintf(`[supervisord]
nodaemon=true
logfile=%[1]s/supervisord.log
pidfile=%[1]s/supervisord.pid
childlogdir=%[1]s
user=root

[inet_http_server]
port=%[2]s

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[program:x]
command=sleep 1000
autostart=true
autorestart=false
startsecs=0
stopwaitsecs=1
`, dir, addr)
	if err := os.WriteFile(conf, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	// GET /RPC2 answers 400 once the server is up.
	return startAPIAnswering(t, "supervisord", addr, "/RPC2", http.StatusBadRequest, bin, "-n", "-c", conf)
}

// xmlrpcCall writes an XML-RPC call of method with string parameters.
func xmlrpcCall(method string, params ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><methodCall><methodName>` + method + `</methodName><params>`)
	for _, p := range params {
		b.WriteString(`<param><value><string>` + p + `</string></value></param>`)
	}
	b.WriteString(`</params></methodCall>`)
	return []byte(b.String())
}

// pythonXMLRPC calls method with args through Python's xmlrpc.client, a
// well-kept XML-RPC client, and returns what it read: the fault's code
// and string, or the result, as JSON.
func pythonXMLRPC(t *testing.T, url, method string, args ...string) string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIP: no python3, which supervisor's package brings")
	}
	const script = `
import json, sys, xmlrpc.client
proxy = xmlrpc.client.ServerProxy(sys.argv[1])
try:
    result = getattr(proxy, sys.argv[2])(*sys.argv[3:])
    print(json.dumps({"result": result}, sort_keys=True))
except xmlrpc.client.Fault as f:
    print(json.dumps({"faultCode": f.faultCode, "faultString": f.faultString}, sort_keys=True))
`
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, append([]string{"-c", script, url, method}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 xmlrpc.client %s: %v\n%s", method, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLegacySupervisor: supervisord's XML-RPC faults reach the agent as
// faults it can act on, which an XML-RPC client library reads, with
// routes chosen by the call's methodName; successes pass byte for byte.
func TestLegacySupervisor(t *testing.T) {
	t.Parallel()
	api := startSupervisor(t)
	config := "testdata/legacy/supervisor.yaml"
	sp := startSignpost(t, config, api)

	// Bare, a wrong name is a fault that says the name is bad, not what
	// a good one is or where to find it.
	if got := pythonXMLRPC(t, api+"/RPC2", "supervisor.getProcessInfo", "nosuch"); got != `{"faultCode": 10, "faultString": "BAD_NAME: nosuch"}` {
		t.Errorf("bare: %s", got)
	}
	if got, want := pythonXMLRPC(t, sp.URL+"/RPC2", "supervisor.getProcessInfo", "nosuch"),
		`{"faultCode": 10, "faultString": "no process is named \"nosuch\"; call all_process_info first"}`; got != want {
		t.Errorf("behind signpost, the client read %s\nwant %s", got, want)
	}
	raw := send(t, "POST", sp.URL+"/RPC2", xmlrpcCall("supervisor.getProcessInfo", "nosuch"), "Content-Type", "text/xml")
	for _, member := range []string{
		`<member><name>error</name><value><string>unknown_process</string></value></member>`,
		`<member><name>field</name><value><string>name</string></value></member>`,
		`<member><name>received</name><value><string>nosuch</string></value></member>`,
		`<member><name>call</name><value><string>all_process_info</string></value></member>`,
	} {
		if raw.status != http.StatusOK || !strings.Contains(string(raw.body), member) {
			t.Errorf("the fault lacks %s: %d %s", member, raw.status, raw.body)
		}
	}
	if got := pythonXMLRPC(t, sp.URL+"/RPC2", "supervisor.getProcessInformation", "x"); !strings.Contains(got, `"faultString": "allowed values: supervisor.getState`) {
		t.Errorf("a method misnamed: %s", got)
	}
	sp.wantCounter(t, 2, "signpost_rejections_total", "route", "process_info", "code", "unknown_process", "field", "name")

	// The corrected call, and the one the fault names, succeed, as the
	// client reads them.
	if got := pythonXMLRPC(t, sp.URL+"/RPC2", "supervisor.getProcessInfo", "x"); !strings.Contains(got, `"name": "x"`) || !strings.Contains(got, `"statename": "RUNNING"`) {
		t.Errorf("the corrected call: %s", got)
	}
	if got := pythonXMLRPC(t, sp.URL+"/RPC2", "supervisor.getAllProcessInfo"); !strings.Contains(got, `"name": "x"`) {
		t.Errorf("the call the fault names: %s", got)
	}

	// Over MCP: the XML-RPC call is built from the tool's arguments.
	m := startMCP(t, "stdio", config, api)
	wrong := readResult(t, m.call(t, "process_info", `{"name":"nosuch"}`))
	if !wrong.isError || gjson.Get(wrong.structured, "error").Str != "unknown_process" || gjson.Get(wrong.structured, "next_call.call").Str != "all_process_info" {
		t.Errorf("MCP, a wrong name: %+v", wrong)
	}
	right := readResult(t, m.call(t, "process_info", `{"name":"x"}`))
	if right.isError || !strings.Contains(right.text, "<name>statename</name>") {
		t.Errorf("MCP, the corrected call: %+v", right)
	}
}

// startAria2 runs aria2c's JSON-RPC interface on a loopback port, its
// files in a directory of the test's, and returns its base URL.
func startAria2(t *testing.T) string {
	t.Helper()
	bin := debianBinary(t, "/usr/bin/aria2c", legacyPackages)
	dir := t.TempDir()
	addr := freePort(t)
	_, port, _ := strings.Cut(addr, ":")
	_, peer, _ := strings.Cut(freePort(t), ":")
	session := filepath.Join(dir, "session.txt")
	if err := os.WriteFile(session, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// GET /jsonrpc with no call answers 400 once the server is up.
	return startAPIAnswering(t, "aria2c", addr, "/jsonrpc", http.StatusBadRequest, bin,
		"--enable-rpc", "--rpc-listen-port="+port, "--rpc-listen-all=false", "--no-conf=true",
		"--dir="+filepath.Join(dir, "downloads"), "--input-file="+session, "--enable-dht=false", "--enable-dht6=false",
		"--bt-enable-lpd=false", "--enable-peer-exchange=false", "--listen-port="+peer, "--disable-ipv6=true",
		"--console-log-level=warn")
}

// rpcCall makes a JSON-RPC call with gorilla/rpc's json2 client, a
// well-kept JSON-RPC 2.0 client, and returns the id it sent, the raw
// answer, and what the client read of it: the result, or the error.
func rpcCall(t *testing.T, url, method string, params ...any) (id string, raw *reply, result any, rpcErr *json2.Error) {
	t.Helper()
	if params == nil {
		params = []any{} // aria2 refuses "params": null
	}
	call, err := json2.EncodeClientRequest(method, params)
	if err != nil {
		t.Fatal(err)
	}
	raw = send(t, "POST", url, call, "Content-Type", "application/json")
	err = json2.DecodeClientResponse(bytes.NewReader(raw.body), &result)
	if err != nil && !errors.As(err, &rpcErr) {
		t.Fatalf("%s: the client read no JSON-RPC answer: %v; %d %s", method, err, raw.status, raw.body)
	}
	return gjson.GetBytes(call, "id").Raw, raw, result, rpcErr
}

// TestLegacyAria2: aria2's JSON-RPC errors reach a JSON-RPC client as
// JSON-RPC errors of the call it made, which now say what to send; the
// routes chosen by method ask each method's arguments of it alone; the
// corrected calls succeed, over HTTP and MCP.
func TestLegacyAria2(t *testing.T) {
	t.Parallel()
	api := startAria2(t)
	config := "testdata/legacy/aria2.yaml"
	sp := startSignpost(t, config, api)
	for _, tc := range []struct {
		name, method string
		params       []any
		bare         string // the bare API's error message
		code         int
		message      string
		data         string // signpost's members
	}{
		{"a method misnamed", "aria2.tellStatuss", []any{"2089b05ecca3d829"}, "No such method: aria2.tellStatuss", 1,
			"must be one of 12 permitted values", // too many to list: did_you_mean says the one meant
			`{"error":"unknown_method","field":"method","upstream_code":"1","received":"aria2.tellStatuss","did_you_mean":["aria2.tellStatus"],"retryable":false}`},
		{"a GID that is none", "aria2.tellStatus", []any{"zzzz"}, "Invalid GID zzzz", -32602,
			"must be a GID: 16 hex digits, e.g. 2089b05ecca3d829",
			`{"error":"invalid_gid","field":"gid","received":"zzzz","retryable":false}`},
		{"a GID of no download", "aria2.tellStatus", []any{"0123456789abcdef"}, "GID 0123456789abcdef is not found", 1,
			`no download has the GID "0123456789abcdef"; call tell_active first`,
			`{"error":"unknown_gid","field":"gid","upstream_code":"1","received":"0123456789abcdef","next_call":{"call":"tell_active","arguments":{"method":"aria2.tellActive"}},"retryable":false}`},
		{"an option value it has not", "aria2.changeGlobalOption", []any{map[string]string{"file-allocation": "bogus"}},
			"We encountered a problem while processing the option '--file-allocation'.", -32602,
			"allowed values: none, prealloc, trunc, falloc",
			`{"error":"invalid_file_allocation","field":"file_allocation","received":"bogus","retryable":false}`},
	} {
		if _, _, _, bare := rpcCall(t, api+"/jsonrpc", tc.method, tc.params...); bare == nil || bare.Message != tc.bare {
			t.Errorf("%s: the bare API's error: %+v, want %q", tc.name, bare, tc.bare)
		}
		id, raw, _, got := rpcCall(t, sp.URL+"/jsonrpc", tc.method, tc.params...)
		if got == nil || int(got.Code) != tc.code || got.Message != tc.message {
			t.Errorf("%s: the client read %+v, want %d %q", tc.name, got, tc.code, tc.message)
		}
		if answered := gjson.GetBytes(raw.body, "id").Raw; answered != id {
			t.Errorf("%s: the answer's id %s, the call's %s", tc.name, answered, id)
		}
		if data := gjson.GetBytes(raw.body, "error.data").Raw; data != tc.data {
			t.Errorf("%s: data %s\nwant %s", tc.name, data, tc.data)
		}
	}
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "tell_status", "code", "unknown_gid", "field", "gid")

	// The corrected calls succeed.
	if _, raw, result, err := rpcCall(t, sp.URL+"/jsonrpc", "aria2.changeGlobalOption", map[string]string{"file-allocation": "none"}); err != nil || result != "OK" {
		t.Errorf("the corrected option: %v %v %s", result, err, raw.body)
	}
	if _, raw, result, err := rpcCall(t, sp.URL+"/jsonrpc", "aria2.tellActive"); err != nil || result == nil {
		t.Errorf("the call the error names: %v %v %s", result, err, raw.body)
	}

	// A batch: each error is rewritten as its own call's answer, each
	// result passes as it came.
	batch := `[{"jsonrpc":"2.0","id":"a","method":"aria2.getVersionn","params":[]},{"jsonrpc":"2.0","id":"b","method":"aria2.tellActive","params":[]}]`
	if bare := send(t, "POST", api+"/jsonrpc", []byte(batch)); gjson.GetBytes(bare.body, "0.error.message").Str != "No such method: aria2.getVersionn" {
		t.Errorf("the bare batch answer: %d %s", bare.status, bare.body)
	}
	got := send(t, "POST", sp.URL+"/jsonrpc", []byte(batch), "Content-Type", "application/json")
	if got.status != 200 || gjson.GetBytes(got.body, "0.id").Str != "a" || gjson.GetBytes(got.body, "0.error.data.did_you_mean.0").Str != "aria2.getVersion" ||
		gjson.GetBytes(got.body, "1.id").Str != "b" || !gjson.GetBytes(got.body, "1.result").IsArray() {
		t.Errorf("the batch answer: %d %s", got.status, got.body)
	}

	// Over MCP, each method is a tool, its name filled in.
	m := startMCP(t, "stdio", config, api)
	wrong := readResult(t, m.call(t, "tell_status", `{"gid":"zzzz"}`))
	if !wrong.isError || gjson.Get(wrong.structured, "error").Str != "invalid_gid" {
		t.Errorf("MCP, a GID that is none: %+v", wrong)
	}
	none := readResult(t, m.call(t, "tell_status", `{"gid":"0123456789abcdef"}`))
	if !none.isError || gjson.Get(none.structured, "next_call.call").Str != "tell_active" {
		t.Errorf("MCP, a GID of no download: %+v", none)
	}
	right := readResult(t, m.call(t, "change_global_option", `{"max_overall_download_limit":"1M"}`))
	if right.isError || gjson.Get(right.text, "result").Str != "OK" {
		t.Errorf("MCP, the corrected option: %+v", right)
	}
}
