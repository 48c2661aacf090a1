package proxy

import (
	"bytes"
	"io"
	"net/http"

	"github.com/signpost-proxy/signpost/internal/httpwire"
	"github.com/signpost-proxy/signpost/rules"
)

// handshakeOf returns the handshake of the exchange's route when the
// request may be sent again after one: in enforce mode, with no body or a
// body signpost read whole. Otherwise nil: the caller gets the upstream's
// answer, handshake and all.
func handshakeOf(ex *exchange, r *http.Request) *rules.Handshake {
	if ex.route == nil || ex.route.Handshake == nil || ex.observing || ex.unreadBody {
		return nil
	}
	if ex.req.Body == nil && r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		return nil
	}
	return ex.route.Handshake
}

// withToken sets on h the token kept for the handshake hs, if one is.
func (p *Proxy) withToken(hs *rules.Handshake, h http.Header) {
	if tok, ok := p.shared.tokens.Load(hs.Header); ok {
		h[hs.Header] = []string{tok.(string)}
	}
}

// handshook reports whether res is the upstream handing out the token of
// hs (its status, the token in its header), and keeps the token for every
// later call. The call it answers was refused for want of it, and is to
// be sent again with it: the upstream did not act on it.
func (p *Proxy) handshook(hs *rules.Handshake, res *http.Response) bool {
	if res.StatusCode != hs.Status {
		return false
	}
	tok := httpwire.FirstValue(res.Header[hs.Header])
	if tok == "" || !validToken(tok) {
		return false
	}
	p.shared.tokens.Store(hs.Header, tok)
	return true
}

// validToken reports whether a token can be sent back as a header value:
// visible ASCII and spaces, at most 4 KiB.
func validToken(s string) bool {
	if len(s) > 4<<10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

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
	t.p.withToken(hs, r.Header)
	res, err := t.next.RoundTrip(r)
	if err != nil || !t.p.handshook(hs, res) {
		return res, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	res.Body.Close()
	again := r.Clone(r.Context())
	if ex.req.Body != nil {
		again.Body, again.ContentLength = io.NopCloser(bytes.NewReader(ex.req.Body)), int64(len(ex.req.Body))
	} else {
		again.Body, again.ContentLength = http.NoBody, 0
	}
	t.p.withToken(hs, again.Header)
	return t.next.RoundTrip(again)
}
