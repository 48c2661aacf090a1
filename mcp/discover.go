package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodDiscover is the request with which clients of protocol revision
// 2026-07-28 and later open: it asks which revisions the server serves.
const methodDiscover = "server/discover"

// maxDiscoverBody bounds the body read to tell a server/discover apart;
// one carries only its _meta.
const maxDiscoverBody = 64 << 10

// httpVersions are the protocol revisions the streamable HTTP transport
// serves, newest first: those the SDK's transport supports with sessions,
// which tell callers apart. Revision 2026-07-28 and later have no
// sessions, and are served over stdio only.
var httpVersions = slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool {
	return !(&sdk.StreamableServerTransport{}).SupportsProtocolVersion(v)
})

// refusingUnservedDiscover answers a server/discover that declares a
// protocol revision the streamable HTTP transport does not serve with 400
// and an UnsupportedProtocolVersionError listing those it does, as the
// specification asks of any request at such a revision; the client then
// falls back to initialize at one of them. The SDK would answer with a
// result listing them instead, which some clients take as acceptance of
// their revision, only to have every later request refused with -32022.
// Every other request goes on to h.
func refusingUnservedDiscover(log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		version := r.Header.Get("Mcp-Protocol-Version")
		if r.Method != http.MethodPost || version == "" || slices.Contains(httpVersions, version) {
			h.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, maxDiscoverBody+1))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		if err != nil || len(head) > maxDiscoverBody {
			h.ServeHTTP(w, r)
			return
		}
		req, ok := discoverAt(head, version)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		log.Debug("told an MCP client the protocol versions served over streamable HTTP", "requested", version,
			"served", strings.Join(httpVersions, ","), "remote_addr", r.RemoteAddr)
		data, err := json.Marshal(sdk.UnsupportedProtocolVersionData{Supported: httpVersions, Requested: version})
		if err != nil {
			// Two strings and a list of them.
			panic(fmt.Sprintf("mcp: unsupported protocol version data does not marshal: %v", err))
		}
		msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
			Code:    sdk.CodeUnsupportedProtocolVersion,
			Message: fmt.Sprintf("protocol version %q is not served over streamable HTTP; use one of: %s", version, strings.Join(httpVersions, ", ")),
			Data:    data,
		}})
		if err != nil {
			panic(fmt.Sprintf("mcp: an unsupported protocol version error does not marshal: %v", err))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(msg)
	})
}

// discoverAt reports whether body is a server/discover request at version:
// its _meta names no protocol version or the same as the header, since a
// mismatch is the SDK's to answer.
func discoverAt(body []byte, version string) (*jsonrpc.Request, bool) {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != methodDiscover {
		return nil, false
	}
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &params) != nil {
		return nil, false
	}
	if raw, ok := params.Meta[sdk.MetaKeyProtocolVersion]; ok {
		var meta string
		if json.Unmarshal(raw, &meta) != nil || meta != version {
			return nil, false
		}
	}
	return req, true
}
