package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// callerAddr is where the pipeline sees tool calls come from: this host,
// which is what it forwards as X-Forwarded-For and what tells callers
// apart when no caller header does.
const callerAddr = "127.0.0.1:0"

// inProcess hands each tool call to the pipeline's handler in this
// process, as the agents' listener would, and keeps what it answers.
type inProcess struct {
	h http.Handler // set once, before the first call
	// limit is the most body an answer keeps: past it, the answer is
	// over the bound a tool result carries, and the pipeline's next
	// write fails, so that it stops reading the upstream.
	limit int64
	log   *slog.Logger
	calls sync.WaitGroup // calls in flight
}

// errOverLimit is the end of a body cut at the limit.
var errOverLimit = errors.New("the answer is over the bound a tool result carries")

// send serves r through the pipeline and returns its answer, the body
// read. It fails only when the pipeline panicked, as net/http would
// close the connection then; a pipeline that broke off a body leaves the
// body ending in io.ErrUnexpectedEOF.
func (p *inProcess) send(r *http.Request) (res *http.Response, err error) {
	p.calls.Add(1)
	defer p.calls.Done()
	r.RequestURI, r.RemoteAddr = r.URL.RequestURI(), callerAddr
	if r.Body == nil {
		r.Body = http.NoBody
	}
	a := &answer{header: http.Header{}, limit: p.limit}
	defer func() {
		switch v := recover(); v {
		case nil:
		case http.ErrAbortHandler:
			res, err = a.response(r, io.ErrUnexpectedEOF), nil
		default:
			buf := make([]byte, 64<<10)
			buf = buf[:runtime.Stack(buf, false)]
			p.log.Error("the pipeline panicked serving a tool call", "panic", fmt.Sprint(v), "stack", string(buf))
			res, err = nil, fmt.Errorf("the pipeline panicked: %v", v)
		}
	}()
	p.h.ServeHTTP(a, r)
	return a.response(r, nil), nil
}

// wait waits up to d for the calls in flight to be answered, and reports
// whether they were.
func (p *inProcess) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { p.calls.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// answer is an http.ResponseWriter that keeps the pipeline's answer to
// one call: its status, its header and its body up to a limit. It flushes
// nothing, having nowhere to flush to: a streamed body is kept as it
// comes, up to the limit, like any other.
type answer struct {
	header http.Header
	status int
	body   bytes.Buffer
	limit  int64
	over   bool
}

func (a *answer) Header() http.Header { return a.header }

// WriteHeader keeps the first final status; an informational one (1xx
// but 101) says nothing the tool result carries.
func (a *answer) WriteHeader(code int) {
	if a.status != 0 || code < 200 && code != http.StatusSwitchingProtocols {
		return
	}
	a.status = code
}

func (a *answer) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.over {
		return 0, errOverLimit
	}
	if room := a.limit - int64(a.body.Len()); int64(len(b)) > room {
		a.body.Write(b[:room])
		a.over = true
		return int(room), errOverLimit
	}
	return a.body.Write(b)
}

// Flush lets the pipeline stream a body as it would to a connection.
func (a *answer) Flush() {}

// response is the answer as the client side of a connection reads it;
// its body ends in end, if not nil, or in errOverLimit when cut.
func (a *answer) response(r *http.Request, end error) *http.Response {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	if a.over {
		end = errOverLimit
	}
	var body io.Reader = &a.body
	if end != nil {
		body = io.MultiReader(body, failing{end})
	}
	return &http.Response{Status: strconv.Itoa(a.status) + " " + http.StatusText(a.status), StatusCode: a.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: a.header, Body: io.NopCloser(body), ContentLength: -1, Request: r}
}

// failing is a reader that fails with its error.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }
