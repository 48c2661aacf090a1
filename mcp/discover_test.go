package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/signpost-proxy/signpost/internal/jsontest"
	"github.com/signpost-proxy/signpost/internal/ticketapi"
	"github.com/signpost-proxy/signpost/mcp"
	"github.com/signpost-proxy/signpost/rules"
)

// served is what the streamable HTTP transport answers a server/discover
// at protocol revision 2026-07-28: the revisions it serves, in an
// UnsupportedProtocolVersionError.
const served = `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,` +
	`"message":"protocol version \"2026-07-28\" is not served over streamable HTTP; use one of: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05",` +
	`"data":{"supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2026-07-28"}}}`

// TestDiscoverOverStreamableHTTP: a server/discover at a protocol revision
// the streamable HTTP transport does not serve gets 400 and the revisions
// it does, so that a client falls back to initialize at one of them; one
// at a revision served, one whose header and _meta differ, and every other
// request are the SDK's to answer.
// The SDK's own client, which opens the same way, ends up at 2025-11-25.
func TestDiscoverOverStreamableHTTP(t *testing.T) {
	cfg, err := rules.Load("../configs/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	upstream := httptest.NewServer(ticketapi.New().Handler())
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL)
	addr, cancel, done := startHTTP(t, cfg, up, 0)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	endpoint := "http://" + addr.String() + mcp.Endpoint
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	request := func(method, header, meta string) string {
		params := `{}`
		if meta != "" {
			params = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + meta + `","io.modelcontextprotocol/clientInfo":{"name":"test","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}`
		}
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, method, header, meta string
		status                     int
		body                       string // the whole body, when it is signpost's
		code                       int    // the error code of the SDK's answer, or 0 for a result
	}{
		{name: "discover at 2026-07-28", method: "server/discover", header: "2026-07-28", meta: "2026-07-28", status: 400, body: served},
		{name: "discover at 2026-07-28, in the header only", method: "server/discover", header: "2026-07-28", status: 400, body: served},
		{name: "discover at 2025-11-25, which has no such method", method: "server/discover", header: "2025-11-25", meta: "2025-11-25", status: 200, code: -32601},
		{name: "discover whose header and _meta differ", method: "server/discover", header: "2026-07-28", meta: "2025-11-25", status: 400, code: sdk.CodeHeaderMismatch},
		{name: "tools/list at 2026-07-28", method: "tools/list", header: "2026-07-28", meta: "2026-07-28", status: 400, code: sdk.CodeUnsupportedProtocolVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", endpoint, strings.NewReader(request(tc.method, tc.header, tc.meta)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", tc.header)
			req.Header.Set("Mcp-Method", tc.method)
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("%d %s; want %d", res.StatusCode, got, tc.status)
			}
			if tc.body != "" {
				if ct := res.Header.Get("Content-Type"); ct != "application/json" || res.ContentLength != int64(len(got)) {
					t.Errorf("Content-Type %q, length %d; want application/json, framed by its length", ct, res.ContentLength)
				}
				if !jsontest.Same(string(got), tc.body) {
					t.Errorf("body:\n\t%s\nwant\n\t%s", got, tc.body)
				}
				return
			}
			// The SDK answers in JSON or as one server-sent event.
			var msg struct {
				Result json.RawMessage
				Error  *struct{ Code int }
			}
			data := string(got)
			if i := strings.Index(data, "data: "); i >= 0 {
				data, _, _ = strings.Cut(data[i+len("data: "):], "\n")
			}
			if err := json.Unmarshal([]byte(data), &msg); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			switch {
			case tc.code == 0 && (msg.Error != nil || msg.Result == nil):
				t.Errorf("%s; want a result", got)
			case tc.code != 0 && (msg.Error == nil || msg.Error.Code != tc.code):
				t.Errorf("%s; want the error %d", got, tc.code)
			}
		})
	}

	ctx, ccancel := context.WithTimeout(context.Background(), wait)
	defer ccancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connecting with the SDK's client: %v", err)
	}
	defer session.Close()
	if v := session.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("the SDK's client is at protocol version %q, want 2025-11-25", v)
	}
	if _, err := session.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
}
