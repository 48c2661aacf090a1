// Command rewriteproxy is the benchmark's Go peer that does signpost's job
// for the benchmark's wrong call, and nothing more, on the standard
// library: an httputil.ReverseProxy with a Transport tuned for one busy
// upstream, a pool of copy buffers, and a ModifyResponse that rewrites the
// upstream's bare 400.
//
// On PATCH /tickets/{ticket_id} it reads the request body first, as
// signpost does on a route with body fields (up to 1 MiB; a larger body is
// forwarded unread), and forwards it. When the upstream answers
// 400 {"error":"Invalid status"} (test/bench/rules.yaml's rule
// invalid_status), the answer becomes the body signpost writes for it:
//
//	{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}
//
// received keeps the value's JSON type, a string cut at 64 characters
// with signpost's "…[+N chars]" marker; did_you_mean follows signpost's
// order (an alias in any case, then a value differing only in case, then
// edit distance), and, as in signpost, a set short enough to be listed in
// the message gets an alias only. Every other answer streams through.
// It keeps no state per caller, counts nothing and logs nothing.
//
// It is run by test/bench/run.sh and listens on loopback only.
package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// The route's one rule, as test/bench/rules.yaml declares it.
var (
	statusValues  = []string{"open", "pending", "closed"}
	statusAliases = map[string]string{} // lower-cased alias -> value; the rules declare none
	statusRule    = "allowed values: " + strings.Join(statusValues, ", ")
	// statusListed is signpost's decision for this set: its listing costs
	// 10 tokens of the default budget of 60, so the message lists it and
	// did_you_mean proposes an alias only.
	statusListed = true
)

const (
	maxRequestBody = 1 << 20  // signpost's limits.request_body default
	maxErrorBody   = 64 << 10 // signpost's limits.error_body default
	maxReceived    = 64       // signpost's limits.received default, in characters
)

func main() {
	addr := flag.String("listen", "127.0.0.1:18117", "`address` to listen on")
	upstream := flag.String("upstream", "http://127.0.0.1:18101", "upstream base `URL`")
	flag.Parse()
	target, err := url.Parse(*upstream)
	if err != nil {
		log.Fatalf("rewriteproxy: --upstream %q: %v", *upstream, err)
	}
	srv := &http.Server{Addr: *addr, Handler: newProxy(target), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// proxy reads the body of a call on the rewritten route, then hands every
// call to rp.
type proxy struct {
	rp *httputil.ReverseProxy
}

func newProxy(target *url.URL) *proxy {
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
	return &proxy{rp: &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		Transport:      transport,
		BufferPool:     copyBuffers{},
		ModifyResponse: modifyResponse,
	}}
}

// copyBuffers is the ReverseProxy's BufferPool: 32 KiB copy buffers,
// reused.
type copyBuffers struct{}

var copyPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (copyBuffers) Get() []byte  { return *copyPool.Get().(*[]byte) }
func (copyBuffers) Put(b []byte) { copyPool.Put(&b) }

// bodies holds the buffers request bodies and error bodies are read into.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// call is what the rewrite needs of a request on the route: its body.
type call struct {
	body []byte
}

type callKey struct{}

// onRoute reports whether r is PATCH /tickets/{ticket_id}.
func onRoute(r *http.Request) bool {
	if r.Method != http.MethodPatch {
		return false
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/tickets/")
	return ok && id != "" && !strings.Contains(id, "/")
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !onRoute(r) || r.Body == nil || r.Body == http.NoBody {
		p.rp.ServeHTTP(w, r)
		return
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodies.Put(buf)
	if r.ContentLength > 0 && r.ContentLength <= maxRequestBody {
		buf.Grow(int(r.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	c := &call{}
	if n > maxRequestBody {
		// Too large to read: forwarded unread, its fields not echoed.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(buf.Bytes()), r.Body), r.Body}
	} else {
		c.body = buf.Bytes()
		r.Body = io.NopCloser(bytes.NewReader(c.body))
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
}

// modifyResponse rewrites the upstream's 400 {"error":"Invalid status"}
// on the route; any other answer passes through untouched.
func modifyResponse(res *http.Response) error {
	if res.StatusCode != http.StatusBadRequest {
		return nil
	}
	c, _ := res.Request.Context().Value(callKey{}).(*call)
	if c == nil {
		return nil
	}
	if res.ContentLength > maxErrorBody {
		return nil
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	n, err := buf.ReadFrom(io.LimitReader(res.Body, maxErrorBody+1))
	if err != nil {
		bodies.Put(buf)
		return err
	}
	if n > maxErrorBody || gjson.GetBytes(buf.Bytes(), "error").String() != "Invalid status" {
		// Not the rule's error: put back what was read and pass it on.
		head := bytes.Clone(buf.Bytes())
		bodies.Put(buf)
		res.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
		return nil
	}
	_ = res.Body.Close()
	out := appendBody(buf.Bytes()[:0], gjson.GetBytes(c.body, "status"))
	res.Body = &pooledBody{Reader: bytes.NewReader(out), buf: buf}
	res.ContentLength = int64(len(out))
	h := res.Header
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	for _, k := range []string{"Content-Encoding", "Etag", "Last-Modified", "Digest", "Content-Md5"} {
		delete(h, k)
	}
	return nil
}

// pooledBody is a rewritten body read from a pooled buffer, which goes
// back to its pool when the ReverseProxy closes the body.
type pooledBody struct {
	*bytes.Reader
	buf *bytes.Buffer
}

func (b *pooledBody) Close() error {
	if b.buf != nil {
		bodies.Put(b.buf)
		b.buf = nil
	}
	return nil
}

// appendBody appends the rewritten answer for sent, the request's status.
func appendBody(b []byte, sent gjson.Result) []byte {
	b = append(b, `{"error":"invalid_status","field":"status","message":`...)
	b = appendQuoted(b, statusRule, -1)
	if sent.Exists() {
		b = append(b, `,"received":`...)
		if sent.Type == gjson.String {
			b = appendQuoted(b, sent.Str, maxReceived)
		} else if len(sent.Raw) > maxReceived {
			b = appendQuoted(b, sent.Raw, maxReceived)
		} else {
			b = append(b, sent.Raw...)
		}
	}
	if sent.Type == gjson.String {
		if dym := suggest(sent.Str); len(dym) > 0 {
			b = append(b, `,"did_you_mean":[`...)
			for i, v := range dym {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendQuoted(b, v, -1)
			}
			b = append(b, ']')
		}
	}
	return append(b, `,"retryable":false}`...)
}

// appendQuoted appends s as a JSON string, cut after max characters
// (none when max < 0) with "…[+N chars]", and with < and > escaped.
func appendQuoted(b []byte, s string, max int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	n := 0
	for i, r := range s {
		if n == max {
			b = append(b, "…[+"...)
			b = strconv.AppendInt(b, int64(len([]rune(s[i:]))), 10)
			b = append(b, " chars]"...)
			break
		}
		n++
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20 || r == '<' || r == '>' || r == 0x7f || r == 0x2028 || r == 0x2029:
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}

// suggest returns up to three permitted values close to v, best first, in
// signpost's order: an alias in any case, a value differing only in case,
// then values within an edit distance that grows with v's length, ties in
// declared order. For a listed set, an alias only.
func suggest(v string) []string {
	for _, p := range statusValues {
		if v == p {
			return nil
		}
	}
	lower := strings.ToLower(v)
	if a, ok := statusAliases[lower]; ok {
		return []string{a}
	}
	if statusListed {
		return nil
	}
	for _, p := range statusValues {
		if strings.ToLower(p) == lower {
			return []string{p}
		}
	}
	a := []rune(lower)
	bound := 3
	switch n := len(a); {
	case n <= 2:
		return nil
	case n <= 5:
		bound = 1
	case n <= 8:
		bound = 2
	}
	var out []string
	for d := 1; d <= bound && len(out) < 3; d++ {
		for _, p := range statusValues {
			if len(out) < 3 && osa(a, []rune(strings.ToLower(p))) == d {
				out = append(out, p)
			}
		}
	}
	return out
}

// osa is the optimal-string-alignment distance between a and b: an
// insertion, deletion, substitution or swap of two adjacent runes costs one.
func osa(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
