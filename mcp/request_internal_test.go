package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestNewRequest makes the request each call's arguments describe, or the
// faults that stop it: path variables escaped into the template, query
// parameters, headers and body members where the fields say, undeclared
// arguments in the body of a POST and the query of a GET, and a null kept
// where a JSON body carries it.
func TestNewRequest(t *testing.T) {
	cfg, err := rules.Load("testdata/requests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const uuid = "3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b"
	for _, tc := range []struct {
		name, route, args string
		want              string // the request, as dump writes it, or the body of the faults
	}{
		{"every location", "create_event",
			`{"calendar_id":"` + uuid + `","title":"Launch","stage":"live","tenant":"acme","dry_run":true,"colour":"red"}`,
			"POST /calendars/" + uuid + "/events?dry_run=true\nContent-Type: application/json\nX-Tenant: acme\n\n" +
				`{"title":"Launch","meta":{"stage":"live"},"colour":"red"}`},
		{"undeclared arguments of a GET go in the query", "get_event", `{"event_id":42,"expand":"attendees","page":2}`,
			"GET /events/42?expand=attendees&page=2\n\n"},
		{"a null goes in the body as sent, and is left out of a header or query", "create_event",
			`{"calendar_id":"` + uuid + `","title":null,"tenant":"acme","dry_run":null}`,
			"POST /calendars/" + uuid + "/events\nContent-Type: application/json\nX-Tenant: acme\n\n" + `{"title":null}`},
		{"null arguments are not an object, as a null HTTP body is not", "get_event", `null`,
			`{"error":"invalid_arguments","message":"the arguments must be one JSON object of named arguments: event_id, expand","received":null,"retryable":false}`},
		{"a path value is escaped", "delete_note", `{"note":"a b?c"}`, "DELETE /notes/a%20b%3Fc\n\n"},
		{"a DELETE with a body field keeps undeclared arguments in the query", "archive_note", `{"note":"n-1","reason":"dup","force":true}`,
			"DELETE /archive/n-1?force=true\nContent-Type: application/json\n\n" + `{"reason":"dup"}`},
		{"a member name with gjson syntax stays one member", "create_event",
			`{"calendar_id":"` + uuid + `","title":"Launch","tenant":"acme","a.b":1,"c*":2}`,
			"POST /calendars/" + uuid + "/events\nContent-Type: application/json\nX-Tenant: acme\n\n" + `{"title":"Launch","a.b":1,"c*":2}`},
		{"a path variable off its template's pattern", "get_event", `{"event_id":"4x"}`,
			`{"error":"invalid_event_id","field":"event_id","message":"must match the pattern ^(?:[0-9]+)$","received":"4x","retryable":false}`},
		{"a path variable left out", "get_event", `{"expand":"attendees"}`,
			`{"error":"invalid_event_id","field":"event_id","message":"is required; must match the pattern ^(?:[0-9]+)$","retryable":false}`},
		{"no arguments: every fault, in the schema's order", "create_event", ``,
			`{"error":"validation_failed","message":"3 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"calendar_id","code":"invalid_calendar_id","message":"is required; must be a UUID in 8-4-4-4-12 hex form, e.g. 3f2b8c1e-6d4a-4e2b-9f7a-1c2d3e4f5a6b"},` +
				`{"field":"title","code":"invalid_title","message":"is required; must be a string of at most 80 characters"},` +
				`{"field":"tenant","code":"invalid_tenant","message":"is required"}],"retryable":false}`},
		{"a header value of two lines, beside other faults", "create_event",
			`{"calendar_id":"` + uuid + `","title":"Launch","stage":"LIVE","tenant":"acme\nX-Admin: 1","dry_run":{"yes":true}}`,
			`{"error":"validation_failed","message":"3 fields are invalid; fix each one listed, then repeat the call.","errors":[` +
				`{"field":"stage","code":"invalid_stage","message":"allowed values: draft, live","received":"LIVE"},` +
				`{"field":"tenant","code":"invalid_tenant","message":"must be one line of text, since it is sent as the header X-Tenant","received":"acme\nX-Admin: 1"},` +
				`{"field":"dry_run","code":"invalid_dry_run","message":"must be one value (a string, number or boolean), not an object, since it is sent as the query parameter dry_run","received":{"yes":true}}],"retryable":false}`},
		{"a form route's arguments go in its form, bracketed keys as written", "set_download_limit", `{"limit":1024,"line_price":"price_1","paused":true}`,
			"POST /api/v2/transfer/setDownloadLimit\nContent-Type: application/x-www-form-urlencoded\n\n" + `items%5B0%5D%5Bprice%5D=price_1&limit=1024&paused=true`},
		{"a form route with no arguments sends an empty form", "set_download_limit", `{}`,
			"POST /api/v2/transfer/setDownloadLimit\nContent-Type: application/x-www-form-urlencoded\n\n"},
		{"a form member must be one value", "set_download_limit", `{"limit":[1,2]}`,
			`{"error":"invalid_limit","field":"limit","message":"must be one value (a string, number or boolean), not an array, since it is sent as the form member limit","received":[1,2],"retryable":false}`},
		{"a fixed argument is filled", "torrent_get", `{"fields":["id"]}`,
			"POST /transmission/rpc\nContent-Type: application/json\n\n" + `{"method":"torrent-get","arguments":{"fields":["id"]}}`},
		{"a fixed argument given is checked", "torrent_get", `{"method":"torrent-set","fields":["id"]}`,
			`{"error":"invalid_method","field":"method","message":"must be torrent-get","received":"torrent-set","retryable":false}`},
		{"arguments that are a string", "delete_note", `"n-1"`,
			`{"error":"invalid_arguments","message":"the arguments must be one JSON object of named arguments: note","received":"n-1","retryable":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, rejected := newRequest(context.Background(), cfg.Route(tc.route), json.RawMessage(tc.args), cfg.Limits)
			var got string
			if rejected != nil {
				got = string(rejected.JSON())
			} else {
				got = dump(t, req)
			}
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// dump writes a request as "METHOD path?query", its headers sorted, a
// blank line and the body.
func dump(t *testing.T, req *http.Request) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(req.Method + " " + req.URL.RequestURI() + "\n")
	var names []string
	for k := range req.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		b.WriteString(k + ": " + strings.Join(req.Header[k], ", ") + "\n")
	}
	b.WriteString("\n")
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(body)
	}
	return b.String()
}

// TestNewRequestMultipart: a multipart route's arguments go in a
// multipart/form-data body, one part each, under a boundary the
// Content-Type names.
func TestNewRequestMultipart(t *testing.T) {
	cfg, err := rules.Load("testdata/requests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req, rejected := newRequest(context.Background(), cfg.Route("add_torrent"), json.RawMessage(`{"urls":"magnet:?xt=urn:btih:ab","category":"iso","paused":"true"}`), cfg.Limits)
	if rejected != nil {
		t.Fatal(string(rejected.JSON()))
	}
	if got := req.URL.RequestURI(); got != "/api/v2/torrents/add?category=iso" {
		t.Errorf("target %s", got)
	}
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		t.Fatalf("%v; Content-Type %q", err, req.Header.Get("Content-Type"))
	}
	want := map[string][]string{"urls": {"magnet:?xt=urn:btih:ab"}, "paused": {"true"}}
	if !reflect.DeepEqual(req.MultipartForm.Value, want) {
		t.Errorf("parts %v, want %v", req.MultipartForm.Value, want)
	}
}
