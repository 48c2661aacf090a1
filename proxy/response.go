package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// modifyResponse replaces an upstream error that a rule of the matched
// route concerns. Everything else streams through as it arrived.
func (p *Proxy) modifyResponse(res *http.Response) error {
	status := res.StatusCode
	if status < 400 {
		return nil
	}
	ex, _ := res.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		p.unmatched(metrics.Unrouted, status)
		return nil
	}
	route := ex.route
	if !route.Concerns(status) || isEventStream(res.Header) {
		p.unmatched(route.Name, status)
		return nil
	}
	decode, ok := decoderFor(res.Header.Get("Content-Encoding"))
	if !ok {
		p.unmatched(route.Name, status)
		return nil
	}
	limit := p.cfg.Limits.ErrorBody
	stall := time.AfterFunc(p.bodyTimeout, func() { res.Body.Close() })
	raw, err := readHead(res.Body, limit)
	stall.Stop()
	if err != nil || int64(len(raw)) > limit {
		res.Body = putBack(raw, res.Body, err)
		if err == nil {
			p.oversized(route.Name)
		}
		return nil
	}
	res.Body.Close()
	body := raw
	if decode != nil {
		if body, err = decode(raw, limit); err != nil {
			// Corrupt or beyond the bound once inflated: pass the bytes on.
			res.Body = io.NopCloser(bytes.NewReader(raw))
			if errors.Is(err, errTooLarge) {
				p.oversized(route.Name)
			} else {
				p.unmatched(route.Name, status)
			}
			return nil
		}
	}
	upstream := &rules.Body{Raw: body}
	rule := route.MatchError(status, upstream)
	if rule == nil {
		res.Body = io.NopCloser(bytes.NewReader(raw))
		p.unmatched(route.Name, status)
		return nil
	}
	e := rewrite.Matched(rule, status, upstream, &ex.req, p.cfg.Limits.Received)
	replaceBody(res, e.JSON())
	if p.metrics != nil {
		p.metrics.Rejected(route.Name, e.Code, e.Field)
	}
	p.log.Info("rewrote upstream error", "route", route.Name, "code", e.Code, "field", e.Field,
		"status", status, "rule", rule.Index)
	return nil
}

// replaceBody swaps the response body for a rewritten one and fixes its
// framing: length, type, and no encoding or validators of the old body.
func replaceBody(res *http.Response, body []byte) {
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	res.TransferEncoding = nil
	res.Uncompressed = false
	res.Trailer = nil
	h := res.Header
	h.Set("Content-Type", rewrite.ContentType)
	h.Set("Content-Length", itoa(len(body)))
	for _, k := range staleHeaders {
		h.Del(k)
	}
}

// staleHeaders describe the body a rewrite replaces, so they go with it.
var staleHeaders = []string{"Content-Encoding", "Content-Md5", "Content-Range", "Content-Digest",
	"Repr-Digest", "Digest", "Etag", "Last-Modified", "Trailer"}

func (p *Proxy) unmatched(route string, status int) {
	if p.metrics != nil {
		p.metrics.Unmatched(route, status)
	}
}

func (p *Proxy) oversized(route string) {
	if p.metrics != nil {
		p.metrics.Oversized(route)
	}
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

var errTooLarge = errors.New("body larger than the buffering bound")

// decoderFor returns how to decode a body with this Content-Encoding: nil
// for an identity body, and false for an encoding signpost does not read.
func decoderFor(encoding string) (func(raw []byte, limit int64) ([]byte, error), bool) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return nil, true
	case "gzip", "x-gzip":
		return gunzip, true
	}
	return nil, false
}

// gunzip inflates raw, stopping once the output passes limit so that a
// small compressed body cannot expand without bound.
func gunzip(raw []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out, err := readHead(zr, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, errTooLarge
	}
	return out, nil
}

// readHead reads up to limit+1 bytes: enough to know whether r holds more
// than limit.
func readHead(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit+1))
}

// putBack returns a body that yields head and then the rest of body, or
// head and then err when reading body already failed.
func putBack(head []byte, body io.ReadCloser, err error) io.ReadCloser {
	rest := io.Reader(body)
	if err != nil {
		rest = errReader{err}
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), body}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// bufferRequest reads a request body up to limit so that its fields can be
// echoed, and gives the proxy an identical body to forward. A body over the
// limit is forwarded unread and yields nil.
func bufferRequest(r *http.Request, limit int64) ([]byte, error) {
	head, err := readHead(r.Body, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(head)) > limit {
		r.Body = putBack(head, r.Body, nil)
		return nil, nil
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(head))
	r.ContentLength = int64(len(head))
	r.TransferEncoding = nil
	return head, nil
}

// upstreamFailed answers for an upstream that could not be reached or did
// not answer in time, with a body as actionable as a rewritten error.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		return // the caller left; nobody reads an answer
	}
	routeName := metrics.Unrouted
	var route *rules.Route
	if ex, _ := r.Context().Value(exchangeKey{}).(*exchange); ex != nil {
		route, routeName = ex.route, ex.route.Name
	}
	e := rewrite.Failure(http.StatusBadGateway, "upstream_unavailable",
		"the upstream service could not be reached; the call did not take effect, retry it shortly", true)
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		e = rewrite.Failure(http.StatusGatewayTimeout, "upstream_timeout",
			"the upstream service did not answer in time; the call may or may not have taken effect, check before retrying", true)
	}
	if p.metrics != nil {
		p.metrics.UpstreamFailed(routeName, e.Code)
	}
	p.log.Warn("upstream failed", "route", routeName, "code", e.Code, "error", err.Error())
	p.writeError(w, r, route, e)
}

func itoa(n int) string { return strconv.Itoa(n) }

func errNoUpstream(file string) error {
	return fmt.Errorf("no upstream: set upstream: in %s or pass --upstream, e.g. --upstream http://127.0.0.1:8081", file)
}
