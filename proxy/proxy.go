// Package proxy is signpost's request pipeline: it routes a request to the
// route the rules declare, forwards it, examines the upstream's error and
// rewrites it into an actionable body, or passes the answer through.
// Successful responses stream through untouched.
//
// A plain-http upstream is reached through internal/upstream's pool, and
// anything else (https, upgrades, Expect) through httputil.ReverseProxy.
// The decision to buffer is taken when the upstream's headers arrive: only
// an error status that some rule of the matched route could concern is
// read, and only up to a bound, charged to a process-wide budget.
package proxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/signpost-proxy/signpost/internal/budget"
	"github.com/signpost-proxy/signpost/internal/buffers"
	"github.com/signpost-proxy/signpost/internal/upstream"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// Options tune a Proxy beyond what the rule file says.
type Options struct {
	// Upstream overrides the rule file's upstream base URL.
	Upstream *url.URL
	// UpstreamTimeout bounds the wait for the upstream's response headers
	// and, from the request's arrival, that wait and the reading of an
	// error body signpost examines together; past it, such a body passes
	// on as it comes, or is wrapped. Bodies passed on take as long as the
	// upstream takes. Zero means 30 seconds.
	UpstreamTimeout time.Duration
	// Transport replaces the upstream transport, for tests.
	Transport http.RoundTripper
	// Metrics records rewrites; nil records nothing.
	Metrics *metrics.Metrics
	// Log receives one line per rewrite and per upstream failure; nil is
	// silent.
	Log *slog.Logger
	// Shared is what the proxies of a server share across reloads; nil
	// gives the proxy its own, from NewShared, closed by Close.
	Shared *Shared
	// MaxConcurrent bounds the requests served at once; past it, signpost
	// answers 503 with retry advice. Zero means no bound.
	MaxConcurrent int
	// AccessLog logs one line per request.
	AccessLog bool
	// RequestBodyTimeout bounds, from when signpost begins to read it, the
	// arrival of a request body it reads before calling the upstream (on a
	// route with body fields in enforce mode); past it the caller gets 408
	// request_body_timeout. Zero means 30 seconds; below zero, no bound of
	// the proxy's own, for a server whose read timeout bounds the whole
	// request sooner (the deadline set would replace the server's).
	RequestBodyTimeout time.Duration
}

// Proxy is the agent-facing handler.
type Proxy struct {
	cfg    *rules.Config
	target *url.URL
	routes *routeIndex
	rp     *httputil.ReverseProxy
	// conns, when set, carries ordinary exchanges instead of rp, to
	// upstreamAddr.
	conns        *upstream.Pool
	upstreamAddr string
	metrics      *metrics.Metrics
	log          *slog.Logger
	// shared outlives reloads; ownShared is set when this proxy made it.
	shared    *Shared
	ownShared bool
	state     *learn.State
	// busy holds a token per request in flight, when concurrency is bounded.
	busy      chan struct{}
	accessLog bool
	// bodyTimeout bounds, from a request's arrival, the wait for its
	// upstream error body, so a stalled body cannot hold it forever.
	bodyTimeout time.Duration
	// requestBodyTimeout bounds the arrival of a request body read before
	// the upstream is called.
	requestBodyTimeout time.Duration
	// budget is charged for every error body buffered.
	budget *budget.Budget
	// observed and answers keep what observe mode sees.
	observed *observe.Record
	answers  *observe.Answers
}

// New builds the proxy for a loaded rule file.
func New(cfg *rules.Config, opts Options) (*Proxy, error) {
	target := cfg.Upstream
	if opts.Upstream != nil {
		target = opts.Upstream
	}
	if target == nil {
		return nil, errNoUpstream(cfg.File)
	}
	p := &Proxy{
		cfg:     cfg,
		target:  target,
		routes:  newRouteIndex(cfg.Routes),
		metrics: opts.Metrics,
		log:     opts.Log,

		bodyTimeout:        opts.UpstreamTimeout,
		requestBodyTimeout: opts.RequestBodyTimeout,
	}
	if p.bodyTimeout <= 0 {
		p.bodyTimeout = DefaultUpstreamTimeout
	}
	if p.requestBodyTimeout == 0 {
		p.requestBodyTimeout = DefaultRequestBodyTimeout
	}
	if opts.MaxConcurrent > 0 {
		p.busy = make(chan struct{}, opts.MaxConcurrent)
	}
	p.accessLog = opts.AccessLog
	p.shared = opts.Shared
	if p.shared == nil {
		p.shared = NewShared(cfg, SharedOptions{UpstreamTimeout: opts.UpstreamTimeout, Metrics: p.metrics, Log: p.log})
		p.ownShared = true
	}
	p.state, p.budget = p.shared.State, p.shared.Budget
	p.observed, p.answers = p.shared.Observed, p.shared.Answers
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	var transport http.RoundTripper = p.shared.Fallback
	if opts.Transport != nil {
		transport = opts.Transport
	} else if directly(target) {
		p.conns, p.upstreamAddr = p.shared.Pool, hostPort(target)
	}
	for _, r := range cfg.Routes {
		if r.Handshake != nil {
			transport = handshakes{p: p, next: transport}
			break
		}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			dropForwarding(pr.Out.Header)
			pr.SetXForwarded()
		},
		Transport:      transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamFailed,
		BufferPool:     buffers.Large,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
	return p, nil
}

// directly reports whether signpost can speak to target itself: plain
// http, at the root, with no query of its own to merge.
func directly(target *url.URL) bool {
	return target.Scheme == "http" && (target.Path == "" || target.Path == "/") && target.RawQuery == "" && target.User == nil
}

// hostPort returns target's host with its port, 80 when none is given.
func hostPort(target *url.URL) string {
	if target.Port() != "" {
		return target.Host
	}
	return net.JoinHostPort(target.Hostname(), "80")
}

// exchange is what the proxy keeps of one request for its response.
type exchange struct {
	id      string       // the request id, forwarded and returned
	idValue []string     // id as a header value, shared by both directions
	route   *rules.Route // nil when no route declares the request
	// batch is the routes a JSON-RPC batch's calls are chosen among, each
	// by its own body: the request's route, or its group.
	batch   []*rules.Route
	req     rewrite.Request
	caller  learn.Caller // who sent the request
	outcome string       // for metrics: one of the metrics.Outcome constants
	status  int          // the status answered, for the access log
	start   time.Time    // when the request arrived
	// callerBody holds the request body once read, in the exchange's
	// allocation.
	callerBody bytesBody
	// held is what the request body holds of the buffer budget while it
	// is read, or copied by tee in observe mode; judged says observe mode
	// has judged the request as enforce mode would before the upstream.
	held   budget.Charge
	tee    *teeBody
	judged bool
	// unreadBody says the request has a body signpost forwarded unread.
	unreadBody bool
	// examined is the examination whose body replaced the upstream's, to
	// recycle once that body is sent; nil when there is none.
	examined *examination
	// vars and response are kept from one exchange to the next: the
	// route's variables, and the upstream's answer, are read into them.
	vars     map[string]string
	response upstream.Reused
	// observing is set when the request is only watched (observe mode);
	// requestType is its Content-Type, for the record.
	observing   bool
	requestType string
	// answeredBefore is set in observe mode when enforce would have
	// answered before calling the upstream.
	answeredBefore bool
	// out is the request as it goes to the upstream, on the direct path.
	out upstream.Request
	// shared is set once httputil.ReverseProxy carries the exchange: its
	// transport may hold the request's context, and so the exchange, past
	// the handler's return, and it is left to the collector. w is the
	// caller's writer then, and watched the upstream's body, whose reads
	// set upstreamBroke when one fails.
	shared        bool
	w             http.ResponseWriter
	watched       watchedBody
	upstreamBroke bool
}

// exchanges holds the exchanges of requests answered, for the next ones.
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// newExchange returns an exchange, empty but for the memory it reuses.
func newExchange() *exchange {
	ex := exchanges.Get().(*exchange)
	if ex.vars == nil {
		ex.vars = make(map[string]string, 2)
	}
	return ex
}

// release empties ex, once its request is answered, and gives it back to
// the pool, unless it is shared. The request's body is no longer ex's.
func release(ex *exchange, r *http.Request) {
	if ex.shared {
		return
	}
	if r.Body == &ex.callerBody {
		r.Body = http.NoBody
	}
	vars, response := ex.vars, ex.response
	if len(vars) > maxKeptVars {
		vars = nil
	}
	clear(vars)
	response.Clear()
	*ex = exchange{vars: vars, response: response}
	exchanges.Put(ex)
}

// maxKeptVars bounds the variables map an exchange keeps in the pool.
const maxKeptVars = 16

// examination is what examining one upstream error takes, in one
// allocation. One that ends in a body of signpost's own goes back to a
// pool once that body is sent: its memory, and the buffer the body was
// written in, are then still in the cache for the next error.
type examination struct {
	upstream rewrite.Upstream
	body     rules.Body
	charge   budget.Charge
	err      rewrite.Error // a rule's answer, when one matched
	out      []byte        // the rendered body, kept for the next one
	reply    bytesBody     // reads out to the caller
}

var examinations = sync.Pool{New: func() any { return new(examination) }}

// maxKeptBody bounds the body buffer an examination keeps in the pool: a
// rare large body is not held for the small ones after it.
const maxKeptBody = 4 << 10

// examine returns an examination of the upstream error status, answered
// with the headers h.
func examine(status int, h http.Header) *examination {
	x := examinations.Get().(*examination)
	out := x.out[:0]
	*x = examination{upstream: rewrite.Upstream{Status: status, Header: h}, out: out}
	return x
}

// recycle gives x back to the pool once the body it holds was sent.
func recycle(x *examination) {
	if cap(x.out) > maxKeptBody {
		x.out = nil
	}
	x.reply.Reset(nil)
	x.upstream, x.body, x.err = rewrite.Upstream{}, rules.Body{}, rewrite.Error{}
	examinations.Put(x)
}

type exchangeKey struct{}

// ServeHTTP routes the request, buffers its body when the route declares
// body fields, validates it first on routes in "before" mode, and forwards
// it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ex := newExchange()
	ex.idValue = requestID(r.Header.Get(RequestIDHeader))
	ex.id, ex.outcome, ex.start = ex.idValue[0], metrics.OutcomeSuccess, start
	ex.caller = learn.Caller{Header: r.Header, Remote: r.RemoteAddr}
	ex.req.Method, ex.req.Path, ex.req.RawQuery = r.Method, r.URL.Path, r.URL.RawQuery
	sentID := r.Header[RequestIDHeader]
	r.Header[RequestIDHeader] = ex.idValue
	defer release(ex, r) // deferred first, so run last
	defer p.finish(ex, r, start)
	if r.RequestURI == "*" {
		// The asterisk form asks about the server, for OPTIONS alone
		// (RFC 9112, section 3.2.4), which net/http answers itself. A
		// malformed request line, it is counted and logged as the
		// front's refusals are.
		ex.outcome = metrics.OutcomeRejected
		e := p.asteriskTarget(r.Method)
		if p.metrics != nil {
			p.metrics.Refused(e.Code)
		}
		p.log.Warn("refused a malformed request", "code", e.Code, "field", e.Field,
			"received", "*", "remote_addr", r.RemoteAddr, "rule", e.Message)
		p.answer(w, ex, e)
		return
	}
	// The route is found first, so that even a refusal at the
	// concurrency bound is answered in its format (a JSON-RPC error, an
	// XML-RPC fault) and counted under it.
	route, vars := p.routes.findInto(r, ex.vars)
	if route != nil {
		ex.route = route
		ex.req.Vars = vars
		ex.req.RawQuery = r.URL.RawQuery
		ex.req.Header = r.Header
	}
	if p.busy != nil {
		select {
		case p.busy <- struct{}{}:
			defer func() { <-p.busy }()
		default:
			p.limited(w, ex, "concurrency", rewrite.Overloaded(cap(p.busy)))
			return
		}
	}
	if ex.observing = p.observes(route); ex.observing {
		// The upstream gets the request as the caller sent it: no id of
		// signpost's, which it might echo.
		if sentID == nil {
			delete(r.Header, RequestIDHeader)
		} else {
			r.Header[RequestIDHeader] = sentID
		}
		p.observeRequest(r, ex)
	} else if route != nil {
		unread := false
		if route.ReadsBody() && r.Body != nil && r.Body != http.NoBody {
			limit := p.cfg.Limits.RequestBody
			body, err := p.bufferRequest(w, r, ex, limit)
			switch {
			case errors.Is(err, errTooLarge):
				p.limited(w, ex, "request_body", rewrite.TooLarge(limit))
				return
			case errors.Is(err, errBodyTimeout):
				// The connection ends after the answer: the rest of the
				// body may still come.
				w.Header().Set("Connection", "close")
				p.limited(w, ex, "request_body_timeout", rewrite.SlowBody(p.requestBodyTimeout))
				return
			case errors.Is(err, budget.ErrSpent):
				// Other bodies hold the budget: this one streams to the
				// upstream, what was read first, unchecked.
				unread = true
				p.log.Warn("request body over the buffer budget, forwarded unchecked", "request_id", ex.id, "route", route.Name)
			case err != nil:
				ex.outcome = metrics.OutcomeRejected
				p.answer(w, ex, rewrite.Failure(http.StatusBadRequest, rewrite.CodeUnreadableBody,
					"the request body could not be read to its end; send the whole body again", true))
				return
			default:
				ex.req.Body = body
			}
		}
		if route.Format == rules.FormatJSONRPC && rewrite.IsBatch(&ex.req) {
			ex.batch = []*rules.Route{route}
			if len(route.Group) > 1 {
				ex.batch = route.Group
			}
		}
		if len(route.Group) > 1 {
			// One method and path, several routes: the request says
			// whose; none's is unrouted.
			route = chooseInGroup(route.Group, &ex.req)
			ex.route = route
		}
		if route != nil && route.Validate == rules.ValidateBefore && !unread {
			if e := rewrite.Before(route, &ex.req, p.cfg.Limits); e != nil {
				ex.outcome = metrics.OutcomeRejected
				e = p.repeat(ex, e, nil, nil)
				p.rejected(ex, e, nil, -1)
				p.answer(w, ex, e)
				return
			}
		}
	}
	ex.unreadBody = ex.req.Body == nil && r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
	if p.direct(r) {
		p.forward(w, r, ex)
		return
	}
	ex.shared, ex.w = true, w
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				// httputil.ReverseProxy cut the answer short.
				p.cutMidAnswer(ex, r, ex.upstreamBroke)
			}
			panic(v)
		}
	}()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
}

// asteriskTarget is the answer to a request whose target is "*" and whose
// method is not OPTIONS; its example is the first route the rule file
// declares for the method, or the root.
func (p *Proxy) asteriskTarget(method string) *rewrite.Error {
	example := "/"
	for _, route := range p.cfg.Routes {
		if route.Method == method {
			example = route.Path
			break
		}
	}
	e := rewrite.Failure(http.StatusBadRequest, rewrite.CodeRequestTarget,
		"the target * is for OPTIONS alone (RFC 9112, section 3.2.4); send the path of a resource, e.g. "+method+" "+example, false)
	e.Field, e.Received = "request-target", []byte(`"*"`)
	return e
}

// limited answers a request refused at one of signpost's own limits.
func (p *Proxy) limited(w http.ResponseWriter, ex *exchange, limit string, e *rewrite.Error) {
	ex.outcome = metrics.OutcomeRejected
	if p.metrics != nil {
		p.metrics.Limited(limit)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	p.answer(w, ex, e)
}

// finish records what became of a request: its duration by route and
// outcome, and the access log line when asked for.
func (p *Proxy) finish(ex *exchange, r *http.Request, start time.Time) {
	elapsed := time.Since(start)
	name := metrics.Unrouted
	if ex.route != nil {
		name = ex.route.Name
	}
	if ex.observing {
		p.judgeBefore(ex)
	}
	if ex.tee != nil {
		ex.tee.letGo()
	}
	if ex.held.Budget != nil {
		ex.held.End()
	}
	if p.metrics != nil {
		p.metrics.Duration(name, ex.outcome, elapsed.Seconds())
	}
	if p.accessLog {
		p.info("request", []slog.Attr{slog.String("request_id", ex.id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("route", name), slog.Int("status", ex.status), slog.String("outcome", ex.outcome),
			slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000)})
	}
}

// Config returns the rules the proxy serves.
func (p *Proxy) Config() *rules.Config { return p.cfg }

// Upstream returns the base URL the proxy forwards to.
func (p *Proxy) Upstream() *url.URL { return p.target }

// Aliases returns the aliases learned from traffic that the rules do not
// declare, and whether aliases are learned at all.
func (p *Proxy) Aliases() ([]learn.Proposal, bool) { return p.state.Proposals(p.cfg) }

// Observed returns what observe mode recorded, and the answers enforce
// mode would have sent on the routes it watches, most recent first.
func (p *Proxy) Observed() (observe.Document, []observe.Answer) {
	return p.observed.Document(), p.answers.List()
}

// RouteFor returns the declared route a request goes to, with its path
// variables, or nil when no route declares it; of several routes on its
// method and path, the one its when: chooses.
func (p *Proxy) RouteFor(r *http.Request) (*rules.Route, map[string]string) {
	route, vars := p.routes.find(r)
	if route == nil || len(route.Group) < 2 {
		return route, vars
	}
	// One of several routes of the method and path: its body says which,
	// read here within the request bound, as the proxy reads it, and put
	// back whole, what lies past the bound included.
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, p.cfg.Limits.RequestBody))
		r.Body = putBack(body, r.Body, err)
	}
	req := rewrite.Request{Method: r.Method, RawQuery: r.URL.RawQuery, Header: r.Header, Body: body}
	return chooseInGroup(route.Group, &req), vars
}

// Close closes what the proxy built for itself, once requests have
// drained: its Shared, when it was given none.
func (p *Proxy) Close() {
	if p.ownShared {
		p.shared.Close()
	}
}

// answer writes a body signpost composed itself, in the route's format.
func (p *Proxy) answer(w http.ResponseWriter, ex *exchange, e *rewrite.Error) {
	body, ctype := p.render(ex, e, nil)
	h := w.Header()
	h["Content-Type"] = headerValue(ctype)
	h.Set("Content-Length", itoa(len(body)))
	if ex.idValue == nil {
		ex.idValue = []string{ex.id}
	}
	h[RequestIDHeader] = ex.idValue
	ex.status = p.statusOf(ex, e)
	w.WriteHeader(ex.status)
	_, _ = w.Write(body)
}

// statusOf is the status e is sent with: its own, but 200 on a route that
// answers with XML-RPC faults, which XML-RPC clients read only from a 200.
func (p *Proxy) statusOf(ex *exchange, e *rewrite.Error) int {
	format := p.cfg.Format
	if ex.route != nil {
		format = ex.route.Format
	}
	if format == rules.FormatXMLRPC {
		return http.StatusOK
	}
	return e.Status
}

// render encodes e in the format in force for the exchange's route (the
// file's, when unrouted), appending to dst, and has its tokens counted.
func (p *Proxy) render(ex *exchange, e *rewrite.Error, dst []byte) ([]byte, string) {
	body, ctype := p.encode(ex, e, dst)
	name := metrics.Unrouted
	if ex.route != nil {
		name = ex.route.Name
	}
	p.state.CountTokens(name, body)
	return body, ctype
}

// encode is render without the count: for a body that is not sent.
func (p *Proxy) encode(ex *exchange, e *rewrite.Error, dst []byte) ([]byte, string) {
	format := p.cfg.Format
	if ex.route != nil {
		format = ex.route.Format
	}
	var body []byte
	ctype := rewrite.ContentType
	var up *rewrite.Upstream
	if ex.examined != nil {
		up = &ex.examined.upstream
	}
	switch {
	case format == rules.FormatJSONRPC:
		body, ctype = e.AppendJSONRPC(dst, rewrite.RequestID(&ex.req), rewrite.RPCCode(up)), rewrite.ContentType
	case format == rules.FormatXMLRPC:
		body, ctype = e.AppendXMLRPC(dst, rewrite.FaultCode(up)), rewrite.XMLRPCContentType
	case format == rules.FormatProblem && dst == nil:
		body, ctype = e.ProblemJSON(), rewrite.ProblemContentType
	case format == rules.FormatProblem:
		body, ctype = e.AppendProblemJSON(dst), rewrite.ProblemContentType
	case dst == nil:
		body = e.JSON()
	default:
		body = e.AppendJSON(dst)
	}
	return body, ctype
}
