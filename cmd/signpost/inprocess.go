package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
)

// canned is an upstream response given in a test case or on explain's
// command line.
type canned struct {
	Status  int               `yaml:"status"`
	Headers map[string]string `yaml:"headers"`
	Body    any               `yaml:"body"`
}

// bodyBytes renders a body given in YAML: a string as it is, anything else
// as JSON.
func bodyBytes(v any) ([]byte, error) {
	switch b := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(b), nil
	}
	return json.Marshal(normalize(v))
}

// normalize turns the map[any]any YAML may produce into JSON-ready maps.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
	}
	return v
}

var httpMethod = regexp.MustCompile(`^[A-Z]+$`)

var errNoUpstream = errors.New("the request reached the upstream, but no upstream response is given")

// fakeUpstream answers from a canned response, in process; with none, it
// fails and records that the request got through.
type fakeUpstream struct {
	res    *canned
	called bool
	sent   []byte // the request body the upstream received
}

func (f *fakeUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	f.called = true
	if r.Body != nil {
		f.sent, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	if f.res == nil {
		return nil, errNoUpstream
	}
	body, err := bodyBytes(f.res.Body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range f.res.Headers {
		h.Set(k, v)
	}
	if h.Get("Content-Type") == "" && json.Valid(body) && len(body) > 0 {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{StatusCode: f.res.Status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
}

// inProcess runs one request through a proxy built from cfg, with up as
// the upstream, and returns what the caller would get.
func inProcess(cfg *rules.Config, req *http.Request, up *fakeUpstream) (*httptest.ResponseRecorder, error) {
	return inProcessRepeated(cfg, func() (*http.Request, error) { return req, nil }, up, 1)
}

// maxRepeat bounds how often a test case or explain sends its request.
const maxRepeat = 100

// inProcessRepeated sends the request newRequest builds times times, as
// one caller, through one proxy built from cfg, with up as the upstream,
// and returns what the caller gets the last time: a call repeated, as an
// agent in a loop sends it.
func inProcessRepeated(cfg *rules.Config, newRequest func() (*http.Request, error), up *fakeUpstream, times int) (*httptest.ResponseRecorder, error) {
	p, err := proxy.New(cfg, proxy.Options{Upstream: &url.URL{Scheme: "http", Host: "upstream.test"}, Transport: up})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var w *httptest.ResponseRecorder
	for range max(times, 1) {
		req, err := newRequest()
		if err != nil {
			return nil, err
		}
		// The calls are one agent's, as a session header says, unless
		// the case names a caller of its own.
		if h := cfg.Learn.CallerHeader; h != "" && req.Header.Get(h) == "" {
			req.Header.Set(h, "signpost-simulated-agent")
		}
		w = httptest.NewRecorder()
		p.ServeHTTP(w, req)
	}
	return w, nil
}

// newRequest builds a request from a method, a path with query, headers
// and a body given in YAML.
func newRequest(method, target string, headers map[string]string, body any) (*http.Request, error) {
	b, err := bodyBytes(body)
	if err != nil {
		return nil, err
	}
	if !httpMethod.MatchString(strings.ToUpper(method)) {
		return nil, fmt.Errorf("method %q is not an HTTP method, e.g. PATCH", method)
	}
	if !strings.HasPrefix(target, "/") {
		return nil, fmt.Errorf("path %q must start with /, e.g. /tickets/T-8841", target)
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		return nil, fmt.Errorf("path %q is not a request target: %v", target, err)
	}
	if f := rules.TargetFault(target); f != nil {
		fix := ""
		if f.Fixed != "" {
			fix = "; write it percent-encoded, e.g. " + f.Fixed
		}
		return nil, fmt.Errorf("path %q holds %v%s", target, f, fix)
	}
	req := httptest.NewRequest(strings.ToUpper(method), target, bytes.NewReader(b))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		if _, isString := body.(string); !isString {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	return req, nil
}
