package proxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rules"
)

// FuzzModify sends arbitrary upstream errors through the response path: a
// status, a media type, an encoding, a body and a Content-Length that may
// lie. Wrapped or rewritten, the answer is one JSON object framed by its
// own length, in the upstream's status; passed through, it is the
// upstream's bytes unless a rule rewrote them; either way every byte
// charged to the buffer budget is given back.
func FuzzModify(f *testing.F) {
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		_, _ = zw.Write(b)
		_ = zw.Close()
		return out.Bytes()
	}
	f.Add(uint16(400), uint8(0), uint8(0), []byte(`{"error":"Invalid status"}`), int16(0), false)
	f.Add(uint16(400), uint8(0), uint8(1), gz([]byte(`{"error":"Invalid status"}`)), int16(0), true)
	f.Add(uint16(502), uint8(2), uint8(0), []byte("<html><body>Bad Gateway</body></html>"), int16(-5), false)
	f.Add(uint16(422), uint8(1), uint8(2), []byte("Invalid \xff\xfe status"), int16(7), true)
	f.Add(uint16(400), uint8(0), uint8(1), gz(bytes.Repeat([]byte("0"), 1<<20)), int16(0), false)
	f.Add(uint16(500), uint8(0), uint8(0), bytes.Repeat([]byte("["), 5000), int16(0), false)
	f.Add(uint16(404), uint8(3), uint8(0), []byte(nil), int16(0), true)

	cfg, err := rules.Load("testdata/rules.yaml")
	if err != nil {
		f.Fatal(err)
	}
	types := []string{"application/json", "text/plain", "text/html", "", "text/event-stream"}
	encodings := []string{"", "gzip", "br", "identity"}
	f.Fuzz(func(t *testing.T, status uint16, ctype, encoding uint8, body []byte, lie int16, passthrough bool) {
		status = 400 + status%200
		policy := rules.Wrap
		if passthrough {
			policy = rules.Passthrough
		}
		route := cfg.Routes[0] // update_ticket, whose rules concern 400
		saved := route.Unmatched
		route.Unmatched = policy
		defer func() { route.Unmatched = saved }()
		p := &Proxy{cfg: cfg, budget: budget.New(64<<10, nil), bodyTimeout: time.Second,
			state: learn.New(cfg.Learn, nil, nil), log: slog.New(slog.DiscardHandler)}
		defer p.state.Close()

		h := http.Header{}
		if ct := types[int(ctype)%len(types)]; ct != "" {
			h.Set("Content-Type", ct)
		}
		enc := encodings[int(encoding)%len(encodings)]
		if enc != "" {
			h.Set("Content-Encoding", enc)
		}
		length := max(int64(len(body))+int64(lie), -1)
		res := &http.Response{StatusCode: int(status), Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: length}
		ex := &exchange{id: "fuzz", idValue: []string{"fuzz"}, route: route, start: time.Now()}
		if err := p.modify(res, ex); err != nil {
			t.Fatalf("modify: %v", err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if used := p.budget.InUse(); used != 0 {
			t.Errorf("%d bytes still charged to the budget after the body was closed", used)
		}
		if res.StatusCode != int(status) {
			t.Errorf("status %d, the upstream answered %d", res.StatusCode, status)
		}
		if ex.outcome == metrics.OutcomePassthrough {
			if !bytes.Equal(got, body) {
				t.Errorf("passed through %q, the upstream sent %q", got, body)
			}
			return
		}
		var v map[string]any
		if !json.Valid(got) || json.Unmarshal(got, &v) != nil || v["error"] == nil {
			t.Errorf("answer %q is not a JSON error object", got)
		}
		if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(got)) || res.ContentLength != int64(len(got)) {
			t.Errorf("Content-Length %q (%d) for %d bytes", cl, res.ContentLength, len(got))
		}
		if ce := res.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("Content-Encoding %q on a body signpost wrote", ce)
		}
	})
}
