package proxy

import (
	"bytes"
	"context"
	"hash/maphash"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// handshakeOf returns the handshake of the exchange's route when the
// request may be sent again after one: in enforce mode, with no body or a
// body signpost read whole, and not from a web page. Otherwise nil: the
// caller gets the upstream's answer, handshake and all.
func handshakeOf(ex *exchange, r *http.Request) *rules.Handshake {
	if ex.route == nil || ex.route.Handshake == nil || ex.observing || ex.unreadBody || fromPage(r.Header) {
		return nil
	}
	if ex.req.Body == nil && r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		return nil
	}
	return ex.route.Handshake
}

// fromPage reports whether a browser sent the request for a web page: it
// names an Origin, or a fetch that is not the user's own. Such tokens are
// an upstream's defence against pages that call it behind the user's back
// (a session id, a CSRF crumb): signpost never answers the handshake for
// them, nor lends them one, so that a page that can reach signpost gets no
// further than it would with the upstream.
func fromPage(h http.Header) bool {
	if _, ok := h["Origin"]; ok {
		return true
	}
	site := httpwire.FirstValue(h["Sec-Fetch-Site"])
	return site != "" && site != "none"
}

// withToken sets on h, a request's header, the token kept for the
// handshake hs; for a handshake with a call, fetched first when none is.
func (p *Proxy) withToken(ctx context.Context, hs *rules.Handshake, h http.Header) {
	k := tokenKey(p, hs, h)
	tok, ok := p.shared.tokens.get(k)
	if !ok && hs.Call != nil {
		tok, ok = p.fetchToken(ctx, hs, h)
	}
	if ok {
		h[hs.Header] = []string{tok}
	}
}

// handshook reports whether res is the upstream refusing a call for want
// of the token of hs, and keeps a new token for every later call, set on
// h: the token its header hands out, or, for a handshake with a call, one
// fetched anew. The call was refused, and is to be sent again with it:
// the upstream did not act on it.
func (p *Proxy) handshook(ctx context.Context, hs *rules.Handshake, res *http.Response, h http.Header) bool {
	if res.StatusCode != hs.Status {
		return false
	}
	var tok string
	if hs.Call != nil {
		var ok bool
		if tok, ok = p.fetchToken(ctx, hs, h); !ok {
			return false
		}
	} else {
		tok = httpwire.FirstValue(res.Header[hs.Header])
		if tok == "" || !validToken(tok) {
			return false
		}
		p.shared.tokens.put(tokenKey(p, hs, h), tok)
	}
	h[hs.Header] = []string{tok}
	return true
}

// fetchToken makes the handshake's call, with the caller's credentials,
// and keeps the token its answer holds: at the gjson path Token of its
// JSON body, or in its header. ok is false when the call fails or holds
// no token that can be sent as a header. The call, its answer's body
// included, takes at most the upstream timeout: an issuer that stalls
// holds the caller's request no longer than an upstream that does.
func (p *Proxy) fetchToken(ctx context.Context, hs *rules.Handshake, h http.Header) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, p.bodyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, hs.Call.Method, strings.TrimSuffix(p.target.String(), "/")+hs.Call.Path, nil)
	if err != nil {
		return "", false
	}
	for _, k := range credentialFields {
		if vv, ok := h[k]; ok {
			req.Header[k] = vv
		}
	}
	res, err := p.shared.Fallback.RoundTrip(req)
	if err != nil {
		return "", false
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxTokenAnswer))
	if res.StatusCode/100 != 2 {
		return "", false
	}
	tok := httpwire.FirstValue(res.Header[hs.Header])
	if hs.Token != "" {
		tok = gjson.GetBytes(body, hs.Token).Str
	}
	if tok == "" || !validToken(tok) {
		return "", false
	}
	p.shared.tokens.put(tokenKey(p, hs, h), tok)
	return tok, true
}

// maxTokenAnswer bounds what is read of a handshake call's answer.
const maxTokenAnswer = 64 << 10

// credentialFields are the request fields a handshake's call carries on
// the caller's behalf: a CSRF token is the caller's session's.
var credentialFields = []string{"Authorization", "Cookie"}

// tokenKey is what a kept token is found by: the upstream and its header,
// and for a token fetched by a call, the caller's credentials, as a hash,
// since such a token is issued to them.
func tokenKey(p *Proxy, hs *rules.Handshake, h http.Header) string {
	if hs.Call == nil {
		return p.target.Host + "\x00" + hs.Header
	}
	var d maphash.Hash
	d.SetSeed(tokenSeed)
	for _, k := range credentialFields {
		for _, v := range h[k] {
			d.WriteString(v)
			d.WriteByte(0)
		}
		d.WriteByte(1)
	}
	return p.target.Host + "\x00" + hs.Header + "\x00" + strconv.FormatUint(d.Sum64(), 16)
}

var tokenSeed = maphash.MakeSeed()

// handshakes sends a call again once the upstream answered it with a
// handshake, on the general path (httputil.ReverseProxy): the transport
// under it, with the token kept set on every call of a route that
// declares one.
type handshakes struct {
	p    *Proxy
	next http.RoundTripper
}

func (t handshakes) RoundTrip(r *http.Request) (*http.Response, error) {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	var hs *rules.Handshake
	if ex != nil {
		hs = handshakeOf(ex, r)
	}
	if hs == nil {
		return t.next.RoundTrip(r)
	}
	t.p.withToken(r.Context(), hs, r.Header)
	res, err := t.next.RoundTrip(r)
	if err != nil || !t.p.handshook(r.Context(), hs, res, r.Header) {
		return res, err
	}
	res.Body.Close()
	again := r.Clone(r.Context())
	if ex.req.Body != nil {
		again.Body, again.ContentLength = io.NopCloser(bytes.NewReader(ex.req.Body)), int64(len(ex.req.Body))
	} else {
		again.Body, again.ContentLength = http.NoBody, 0
	}
	return t.next.RoundTrip(again)
}
