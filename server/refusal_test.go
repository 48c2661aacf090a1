package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/internal/metricstest"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// TestRefusalIsCountedAndLogged: each refusal of the front is counted
// under its code and logged once, with the code, the field, the value as
// the body echoes it, the caller's address and the rule; the log's bytes
// hold no control byte of the value, in either log format, and the body
// is the rule file's format, read at the refusal.
func TestRefusalIsCountedAndLogged(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			var logs bytes.Buffer
			var h slog.Handler = slog.NewJSONHandler(&logs, nil)
			if format == "text" {
				h = slog.NewTextHandler(&logs, nil)
			}
			in := rules.FormatJSON
			f := &refuser{format: func() rules.BodyFormat { return in }, metrics: metrics.New(reg), log: slog.New(h)}
			r := front.Refused{Code: front.CodeHeader, Field: "X-Note", Value: "a\x00b\x7f\x1b[31m\u202e<", Rule: "a field value holds no control character",
				Remote: "192.0.2.7:40001"}
			ctype, body := f.refuse(r)
			const received = `a\u0000b\u007f\u001b[31m\u202e\u003c`
			if want := `{"error":"invalid_header","field":"X-Note","message":"a field value holds no control character","received":"` + received + `","retryable":false}`; ctype != "application/json" || string(body) != want {
				t.Errorf("answer %s %s\nwant application/json %s", ctype, body, want)
			}
			in = rules.FormatProblem
			ctype, body = f.refuse(front.Refused{Code: front.CodeMissingHost, Field: "Host", Rule: "a request carries a Host field", Remote: "192.0.2.7:40002"})
			if want := `{"type":"about:blank","title":"Bad Request","status":400,"code":"missing_host","field":"Host","detail":"a request carries a Host field","received":"","retryable":false}`; ctype != "application/problem+json" || string(body) != want {
				t.Errorf("answer under problem+json %s %s\nwant application/problem+json %s", ctype, body, want)
			}
			for _, code := range []string{front.CodeHeader, front.CodeMissingHost} {
				if n := metricstest.Counter(t, reg, "signpost_requests_refused_total", "code", code); n != 1 {
					t.Errorf("signpost_requests_refused_total{code=%q} = %v, want 1", code, n)
				}
			}
			out := logs.String()
			if n := strings.Count(out, "refused a malformed request"); n != 2 {
				t.Errorf("%d lines logged, want one per refusal:\n%s", n, out)
			}
			for _, b := range []byte(out) {
				if b < ' ' && b != '\n' || b == 0x7f {
					t.Errorf("the log holds the control byte %#x:\n%q", b, out)
				}
			}
			if strings.Contains(out, "\u202e") {
				t.Errorf("the log holds an invisible code point raw:\n%q", out)
			}
			if format != "json" {
				for _, want := range []string{`level=WARN`, `code=invalid_header`, `field=X-Note`, `remote_addr=192.0.2.7:40001`} {
					if !strings.Contains(out, want) {
						t.Errorf("the log lacks %s:\n%s", want, out)
					}
				}
				return
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &line); err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]any{"level": "WARN", "msg": "refused a malformed request", "code": "invalid_header", "field": "X-Note",
				"received": received, "remote_addr": "192.0.2.7:40001", "rule": r.Rule} {
				if line[k] != v {
					t.Errorf("log line %s = %v, want %v\n%s", k, line[k], v, out)
				}
			}
		})
	}
}

// TestRefusalMasksCredentials: a credential in a refused value is masked
// in the body and the log alike, as any echo masks one.
func TestRefusalMasksCredentials(t *testing.T) {
	for _, tc := range []struct{ field, value, want string }{
		{"Authorization", "Bearer sk_live_abcdef123456\x00", "Bearer [masked]"},
		{"Cookie", "session=abcdef123456\x01", "[masked]"},
		{"header-line", "Authorization : Basic dXNlcjpwYXNzd29yZA==", "Authorization : Basic [masked]"},
		{"request-line", "GET /a?token=abcdef123456 x HTTP/1.1", "GET /a?token=[masked] x HTTP/1.1"},
		{"X-Note", "a\x00b", `a\u0000b`},
	} {
		var logs bytes.Buffer
		f := &refuser{format: func() rules.BodyFormat { return rules.FormatJSON }, log: slog.New(slog.NewJSONHandler(&logs, nil))}
		_, body := f.refuse(front.Refused{Code: front.CodeHeader, Field: tc.field, Value: tc.value, Rule: "r", Remote: "192.0.2.7:1"})
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(body, "received").Raw; got != `"`+tc.want+`"` || line["received"] != tc.want {
			t.Errorf("%s %q: received %s in the body, %q in the log; want %q", tc.field, tc.value, got, line["received"], tc.want)
		}
	}
}

// TestServeRefusalsFollowTheRulesInForce drives Serve in process: a
// missing Host on a raw connection is answered in the format of the rule
// file in force, signpost's JSON and then, once a reload sets format:
// problem+json, Problem Details; each refusal is counted. The series the
// rules name start at zero, and a reload adds those of its new route.
func TestServeRefusalsFollowTheRulesInForce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, file, reloadRules("v1"))
	cfg, err := rules.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	type addrs struct{ listen, admin net.Addr }
	ready := make(chan addrs, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logs syncBuffer
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{
			Options: proxy.Options{Transport: reloadUpstream, Log: slog.New(slog.NewJSONHandler(&logs, nil))},
			Listen:  "127.0.0.1:0", Admin: "127.0.0.1:0",
			Ready:        func(l, a net.Addr) { ready <- addrs{l, a} },
			Load:         func() (*rules.Config, error) { return rules.Load(file) },
			DrainTimeout: 2 * time.Second,
		})
	}()
	var sp addrs
	select {
	case sp = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not start within 5s")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	admin := "http://" + sp.admin.String()
	scrape := func() string {
		t.Helper()
		res, err := client.Get(admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	noHost := func() (string, string) {
		t.Helper()
		c, err := net.DialTimeout("tcp", sp.listen.String(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /tickets/T-1 HTTP/1.1\r\nAccept: */*\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 400 || !res.Close {
			t.Errorf("no Host: %d (close %v) %s; want 400, closing", res.StatusCode, res.Close, b)
		}
		return res.Header.Get("Content-Type"), string(b)
	}

	text := scrape()
	for _, want := range []string{
		`signpost_requests_refused_total{code="missing_host"} 0`,
		`signpost_requests_refused_total{code="invalid_request_line"} 0`,
		`signpost_rejections_total{code="invalid_status",field="status",route="update_ticket"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics at start lacks %s", want)
		}
	}
	const rule = "an HTTP/1.1 request carries a Host field naming the service, e.g. Host: api.example.com"
	if ctype, body := noHost(); ctype != "application/json" ||
		body != `{"error":"missing_host","field":"Host","message":"`+rule+`","received":"","retryable":false}` {
		t.Errorf("no Host under the json rules: %s %s", ctype, body)
	}
	writeFile(t, file, "format: problem+json\n"+reloadRules("v2")+`  get_ticket:
    method: GET
    path: /tickets/{ticket_id}
    errors:
      - match: {status: 404}
        code: unknown_ticket
        message: no ticket has this id
`)
	res, err := client.Post(admin+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("POST /-/reload: %d %s", res.StatusCode, b)
	}
	if ctype, body := noHost(); ctype != "application/problem+json" ||
		body != `{"type":"about:blank","title":"Bad Request","status":400,"code":"missing_host","field":"Host","detail":"`+rule+`","received":"","retryable":false}` {
		t.Errorf("no Host under the problem+json rules: %s %s", ctype, body)
	}
	text = scrape()
	for _, want := range []string{
		`signpost_requests_refused_total{code="missing_host"} 2`,
		`signpost_rejections_total{code="unknown_ticket",field="",route="get_ticket"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics after the reload lacks %s", want)
		}
	}
	waitFor(t, func() bool { return strings.Count(logs.String(), `"msg":"refused a malformed request"`) == 2 })
}
