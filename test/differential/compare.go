package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Outcome is what one proxy made of a case: what its caller saw, and the
// requests its upstream received for the case, in order.
type Outcome struct {
	Result
	Upstream []Received
}

// Compare returns the differences between signpost's outcome of case c and
// the reference's that no deliberate difference explains, each a sentence;
// none when signpost did what net/http does, or what a rule below says it
// must do instead. Both outcomes must come from the same bytes.
func Compare(c Case, signpost, reference Outcome) []string {
	sent := signpost.Sent
	if sent == nil {
		sent = c.Raw
	}
	var best []string
	for i, e := range expectations(parseRequests(sent), reference) {
		d := e.check(signpost)
		if len(d) == 0 {
			return nil
		}
		if i == 0 || len(d) < len(best) {
			best = d
		}
	}
	return best
}

// expectation is what signpost must have done: derived from the
// reference's outcome, reshaped by the rules that apply.
type expectation struct {
	// why names the rules that shaped it, for the differences' sake.
	why     []string
	answers []want
	// upstream is what signpost's upstream must receive, in order, but for
	// what skip leaves out on both sides.
	upstream []Received
	skip     func(Received) bool
	// openEnded lets signpost answer and forward more after these: the
	// reference has nothing to compare it with.
	openEnded bool
	// mustClose says signpost must end the connection after its last
	// answer.
	mustClose bool
	// closed is whether the connection must end once the caller
	// half-closed, as the reference's did.
	closed bool
}

// want is one answer signpost must send: the reference's, or one of its
// own.
type want struct {
	ref *Answer // nil when the answer is signpost's own
	// status of an answer of signpost's own; 0 for any 4xx or 5xx.
	status int
	// json says signpost's own answer must carry a JSON body.
	json bool
}

// expectations returns what signpost may have done, given what the
// reference did with the same bytes: one expectation, or several a rule
// allows.
func expectations(b callerBytes, ref Outcome) []expectation {
	base := expectation{upstream: ref.Upstream, closed: ref.Closed}
	for i := range ref.Answers {
		base.answers = append(base.answers, want{ref: &ref.Answers[i]})
	}
	return reshape(b, ref, base, 0)
}

// reshape applies the rules to the caller's requests from the i-th on, the
// first that applies first, and returns the expectations they allow.
func reshape(b callerBytes, ref Outcome, e expectation, from int) []expectation {
	for i := from; i < len(b.requests); i++ {
		r := b.requests[i]
		switch {
		case i == len(ref.Answers) && belowHundred(ref):
			return []expectation{ruleStatusBelow100(e, i)}
		case i >= len(ref.Answers):
			return []expectation{e}
		}
		// The rules that reshape the answer to this request, then those
		// that decide what comes after it.
		if halfClosedBefore502(ref, i) {
			e = ruleHalfClosedCallerGetsAnError(e, r, i)
		} else {
			e = withBrokenBody(e, ref, r, i)
		}
		switch {
		case chunked(r):
			return []expectation{ruleChunkedCloses(e, ref, i)}
		case http10Chunked(r):
			return ruleHTTP10ChunkedRefused(e, ref, i)
		case http10MaybeUnseen(r, i):
			return append([]expectation{ruleHTTP10UnseenCloses(e, ref, i)}, reshape(b, ref, e, i+1)...)
		case asteriskNotOptions(r) && ref.Answers[i].FromUpstream():
			var out []expectation
			for _, alt := range ruleAsteriskRefused(e, ref, r, i) {
				if alt.mustClose {
					out = append(out, alt)
				} else {
					out = append(out, reshape(b, ref, alt, i+1)...)
				}
			}
			return out
		}
	}
	return []expectation{e}
}

// chunked reports whether r is an HTTP/1.1 request that carries
// Transfer-Encoding.
func chunked(r callerRequest) bool {
	return r.major == 1 && r.minor == 1 && r.te
}

// ruleChunkedCloses is rule (a). An HTTP/1.1 request with
// Transfer-Encoding: signpost answers it as the reference does, then
// closes the connection; the reference reads on. net/http drops a
// Content-Length sent beside the field before any handler sees it, so
// signpost cannot tell a chunked request from one framed two ways, after
// which RFC 9112, section 6.1, has the server close: bytes a front end
// framed by the length are never read as a request. Signpost's answers
// and forwarded requests are the reference's up to and including that
// request, and nothing after it.
func ruleChunkedCloses(e expectation, ref Outcome, i int) expectation {
	e = e.through(ref, i)
	e.mustClose = true
	e.why = append(e.why, fmt.Sprintf("request %d has Transfer-Encoding: signpost must close after answering it", i+1))
	return e
}

// withBrokenBody is rule (f). A request whose chunked body net/http's
// reader refuses (a chunk size that overflows, a bare LF, data longer
// than its size): ReverseProxy answers an empty 502, as if the upstream
// had failed; signpost answers 400 unreadable_request_body of its own,
// which says the caller's bytes were at fault. Neither forwards a whole
// request. Any other request is left as it is.
func withBrokenBody(e expectation, ref Outcome, r callerRequest, i int) expectation {
	if !r.broken || i >= len(ref.Answers) || ref.Answers[i].FromUpstream() || ref.Answers[i].Status != http.StatusBadGateway {
		return e
	}
	e = e.clone()
	e.answers[i] = want{status: http.StatusBadRequest, json: true}
	e.why = append(e.why, fmt.Sprintf("request %d has a malformed chunked body: signpost must answer 400 of its own", i+1))
	return e
}

// http10Chunked reports whether r is an HTTP/1.0 request that carries
// Transfer-Encoding.
func http10Chunked(r callerRequest) bool {
	return r.major == 1 && r.minor == 0 && r.te
}

// ruleHTTP10ChunkedRefused is rule (b). An HTTP/1.0 request that carries
// Transfer-Encoding: signpost answers 400 and closes, forwarding nothing
// of it, where net/http drops the field and frames the body by
// Content-Length (nginx refuses it too): a front end that honoured the
// field framed it otherwise. After other requests on the connection,
// forwarding it exactly as the reference does and then closing is
// accepted too.
func ruleHTTP10ChunkedRefused(e expectation, ref Outcome, i int) []expectation {
	refused := e.through(ref, i-1)
	refused.answers = append(refused.answers, want{status: http.StatusBadRequest})
	refused.mustClose = true
	refused.why = append(refused.why, fmt.Sprintf("request %d is HTTP/1.0 with Transfer-Encoding: signpost must refuse it with 400 and close", i+1))
	if i == 0 {
		return []expectation{refused}
	}
	forwarded := e.through(ref, i)
	forwarded.mustClose = true
	return []expectation{refused, forwarded}
}

// http10MaybeUnseen reports whether r, the i-th request of its
// connection, is HTTP/1.0 and may have a head the front did not see whole:
// it comes after another request, on a connection the front may have
// handed to net/http, or its head is larger than the front reads.
func http10MaybeUnseen(r callerRequest, i int) bool {
	return r.major == 1 && r.minor == 0 && (i > 0 || r.head > frontBuffer)
}

// frontBuffer is what the front reads of a head before it hands the
// connection off.
const frontBuffer = 4 << 10

// ruleHTTP10UnseenCloses is rule (g). An HTTP/1.0 request whose head the
// front did not see whole, after a hand-off or over its buffer: signpost
// answers it as the reference does, then closes, since it could not look
// for Transfer-Encoding in it (rule (b)), so that what follows is never
// read as a request; the reference reads on. Whether the front saw the
// head depends on where it handed the connection off, so reading on as
// the reference does is accepted too.
func ruleHTTP10UnseenCloses(e expectation, ref Outcome, i int) expectation {
	e = e.through(ref, i)
	e.mustClose = true
	e.why = append(e.why, fmt.Sprintf("request %d is HTTP/1.0 and its head may not have been seen whole: signpost may close after answering it", i+1))
	return e
}

// asteriskNotOptions reports whether r is in asterisk form with a method
// other than OPTIONS, the only one RFC 9112, section 3.2.4, allows it. The
// rule applies where the reference forwarded it; one net/http refuses
// itself (an unsupported version, say) both refuse alike.
func asteriskNotOptions(r callerRequest) bool {
	return r.target == "*" && r.method != http.MethodOptions
}

// ruleAsteriskRefused is rule (c). A request in asterisk form whose
// method is not OPTIONS: signpost answers 400 and forwards nothing of it,
// where the reference forwards it with the target /*. The connection may
// stay open, and then the requests after it must be as the reference's;
// or it may close after the 400.
func ruleAsteriskRefused(e expectation, ref Outcome, r callerRequest, i int) []expectation {
	why := fmt.Sprintf("request %d is %s * (asterisk form): signpost must refuse it with 400", i+1, r.method)
	open := e.clone()
	open.answers[i] = want{status: http.StatusBadRequest}
	if seq, ok := ref.Answers[i].Seq(); ok {
		open.upstream = slices.DeleteFunc(open.upstream, func(r Received) bool { return r.Seq == seq })
	}
	open.why = append(open.why, why)
	closes := open.clone()
	closes.answers = closes.answers[:i+1]
	closes.upstream = slices.DeleteFunc(closes.upstream, func(r Received) bool { return r.Seq > seqThrough(ref, i) })
	closes.mustClose = true
	return []expectation{open, closes}
}

// belowHundred reports whether the last request the reference's upstream
// received for the case was answered with a status below 100.
func belowHundred(ref Outcome) bool {
	n := len(ref.Upstream)
	return n > 0 && ref.Upstream[n-1].Status > 0 && ref.Upstream[n-1].Status < 100
}

// ruleStatusBelow100 is rule (d). An upstream status below 100, such as
// 099: signpost answers 502 with a body of its own; the reference's
// handler panics (WriteHeader with an invalid code) and the connection
// closes with no answer. The reference has nothing after it to compare
// signpost's later answers with.
func ruleStatusBelow100(e expectation, i int) expectation {
	e.answers = append(e.answers[:i:i], want{status: http.StatusBadGateway, json: true})
	e.openEnded = true
	e.why = append(e.why, fmt.Sprintf("the upstream answered request %d with a status below 100: signpost must answer 502", i+1))
	return e
}

// halfClosedBefore502 reports whether the reference answered the i-th
// request with a 502 of its own once the caller had half-closed.
func halfClosedBefore502(ref Outcome, i int) bool {
	a := ref.Answers[i]
	return a.AfterHalfClose && a.Status == http.StatusBadGateway && !a.FromUpstream()
}

// ruleHalfClosedCallerGetsAnError is rule (e). A caller that half-closes
// before its answer: net/http takes the end of its input for the caller
// leaving, cancels the request and answers 502; signpost must answer an
// error it wrote itself, 4xx or 5xx with a JSON body, and never a 200
// nobody wrote. Whether the upstream received the request depends on how
// far it got when the caller left, so it is left out on both sides.
func ruleHalfClosedCallerGetsAnError(e expectation, r callerRequest, i int) expectation {
	e = e.clone()
	e.answers[i] = want{json: true}
	target := originForm(r.target)
	skip := e.skip
	e.skip = func(u Received) bool {
		return u.Method == r.method && u.Target == target || skip != nil && skip(u)
	}
	e.why = append(e.why, fmt.Sprintf("the caller half-closed before answer %d: signpost must answer an error of its own", i+1))
	return e
}

// through returns e cut after the caller's i-th request: its answers up to
// it, and the upstream requests up to the last the reference's answers up
// to it came from.
func (e expectation) through(ref Outcome, i int) expectation {
	e = e.clone()
	e.answers = e.answers[:min(i+1, len(e.answers))]
	last := seqThrough(ref, i)
	e.upstream = slices.DeleteFunc(e.upstream, func(r Received) bool { return r.Seq > last })
	return e
}

// seqThrough is the largest X-Upstream-Seq among the reference's answers
// to the caller's requests up to the i-th; 0 when none carries one.
func seqThrough(ref Outcome, i int) int {
	last := 0
	for j := 0; j <= i && j < len(ref.Answers); j++ {
		if s, ok := ref.Answers[j].Seq(); ok {
			last = max(last, s)
		}
	}
	return last
}

func (e expectation) clone() expectation {
	e.answers = slices.Clone(e.answers)
	e.upstream = slices.Clone(e.upstream)
	e.why = slices.Clone(e.why)
	return e
}

// originForm returns the target a proxy forwards for target: its path and
// query.
func originForm(target string) string {
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return target
	}
	return u.RequestURI()
}

// check returns how signpost's outcome departs from e.
func (e expectation) check(sp Outcome) []string {
	var d []string
	for i := range max(len(e.answers), len(sp.Answers)) {
		switch {
		case i >= len(sp.Answers):
			d = append(d, fmt.Sprintf("answer %d: signpost sent none (%s); want %s", i+1, sp.Stopped, e.answers[i]))
		case i >= len(e.answers):
			if !e.openEnded {
				d = append(d, fmt.Sprintf("answer %d: signpost sent %s, and the reference nothing", i+1, describe(sp.Answers[i])))
			}
		default:
			d = append(d, e.answers[i].check(i, sp.Answers[i])...)
		}
	}
	if e.mustClose && len(sp.Answers) > 0 && !sp.Answers[len(sp.Answers)-1].Close && (!sp.Closed || sp.HalfClosed) {
		d = append(d, fmt.Sprintf("signpost did not close the connection after answer %d", len(sp.Answers)))
	}
	if !e.openEnded && !e.mustClose && sp.Closed != e.closed {
		d = append(d, fmt.Sprintf("signpost closed the connection: %v, the reference: %v (signpost: %s)", sp.Closed, e.closed, sp.Stopped))
	}
	d = append(d, e.checkUpstream(sp.Upstream)...)
	if len(d) > 0 && len(e.why) > 0 {
		d = append(d, "(expected by the deliberate differences: "+strings.Join(e.why, "; ")+")")
	}
	return d
}

// String describes the answer signpost must send.
func (w want) String() string {
	switch {
	case w.ref != nil:
		return "as the reference's, " + describe(*w.ref)
	case w.status != 0:
		return fmt.Sprintf("a %d of signpost's own", w.status)
	default:
		return "an error of signpost's own, 4xx or 5xx"
	}
}

// check returns how signpost's i-th answer a departs from w.
func (w want) check(i int, a Answer) []string {
	n := i + 1
	if w.ref == nil {
		return w.checkOwn(n, a)
	}
	r := *w.ref
	var d []string
	if a.Status != r.Status {
		d = append(d, fmt.Sprintf("answer %d: signpost %s, the reference %s", n, describe(a), describe(r)))
	}
	if a.FromUpstream() != r.FromUpstream() {
		d = append(d, fmt.Sprintf("answer %d: made by the upstream on one side only: signpost %s, the reference %s", n, describe(a), describe(r)))
	} else if a.FromUpstream() && !bytes.Equal(a.Body, r.Body) {
		d = append(d, fmt.Sprintf("answer %d: the upstream's body differs: signpost %q, the reference %q", n, clip(a.Body), clip(r.Body)))
	}
	if (a.Err == "") != (r.Err == "") && !resetAfter(a, r) {
		d = append(d, fmt.Sprintf("answer %d: body cut short: signpost %q, the reference %q", n, a.Err, r.Err))
	}
	if a.AfterHalfClose != r.AfterHalfClose {
		d = append(d, fmt.Sprintf("answer %d came %s on signpost's side, %s on the reference's",
			n, halfCloseTiming(a.AfterHalfClose), halfCloseTiming(r.AfterHalfClose)))
	}
	return d
}

// resetAfter reports whether a and r differ only in that one of them, an
// answer the proxy made itself, lost its end to a reset: net/http closes a
// connection over unread bytes after such an answer, and whether the
// caller reads the answer before the reset comes is a matter of timing.
func resetAfter(a, r Answer) bool {
	reset := func(x Answer) bool { return strings.Contains(x.Err, "connection reset by peer") }
	return a.Status == r.Status && !a.FromUpstream() && !r.FromUpstream() && (reset(a) || reset(r))
}

// checkOwn checks an answer signpost must have written itself.
func (w want) checkOwn(n int, a Answer) []string {
	var d []string
	switch {
	case a.FromUpstream():
		d = append(d, fmt.Sprintf("answer %d: signpost passed on the upstream's %s; want %s", n, describe(a), w))
	case w.status != 0 && a.Status != w.status, w.status == 0 && a.Status < 400:
		d = append(d, fmt.Sprintf("answer %d: signpost %s; want %s", n, describe(a), w))
	}
	if w.json && !json.Valid(a.Body) {
		d = append(d, fmt.Sprintf("answer %d: signpost's own answer %s has no JSON body", n, describe(a)))
	}
	return d
}

func halfCloseTiming(after bool) string {
	if after {
		return "only after the caller half-closed"
	}
	return "before the caller half-closed"
}

// checkUpstream compares what signpost's upstream received with what e
// says it must.
func (e expectation) checkUpstream(got []Received) []string {
	keep := func(list []Received) []Received {
		if e.skip == nil {
			return list
		}
		return slices.DeleteFunc(slices.Clone(list), e.skip)
	}
	want, got := keep(e.upstream), keep(got)
	var d []string
	for i := range max(len(want), len(got)) {
		n := i + 1
		switch {
		case i >= len(got):
			d = append(d, fmt.Sprintf("upstream request %d: signpost forwarded none; the reference forwarded %s", n, describeReceived(want[i])))
		case i >= len(want):
			if !e.openEnded {
				d = append(d, fmt.Sprintf("upstream request %d: signpost forwarded %s; the reference nothing", n, describeReceived(got[i])))
			}
		default:
			d = append(d, diffReceived(n, got[i], want[i])...)
		}
	}
	return d
}

// diffReceived compares the n-th request signpost's upstream received, s,
// with the reference's, r: method, target, protocol, body, and every
// header a proxy does not set itself.
func diffReceived(n int, s, r Received) []string {
	var d []string
	if s.Method != r.Method || s.Target != r.Target || s.Proto != r.Proto {
		d = append(d, fmt.Sprintf("upstream request %d: signpost forwarded %s %q %s, the reference %s %q %s", n, s.Method, s.Target, s.Proto, r.Method, r.Target, r.Proto))
	}
	if !bytes.Equal(s.Body, r.Body) {
		d = append(d, fmt.Sprintf("upstream request %d: body %q from signpost, %q from the reference", n, clip(s.Body), clip(r.Body)))
	}
	sh, rh := endToEnd(s.Header), endToEnd(r.Header)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range sh {
			if !yield(k) {
				return
			}
		}
		for k := range rh {
			if _, ok := sh[k]; !ok && !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		if !slices.Equal(sh[k], rh[k]) {
			d = append(d, fmt.Sprintf("upstream request %d: header %s: %q from signpost, %q from the reference", n, k, sh[k], rh[k]))
		}
	}
	return d
}

// endToEnd returns h without the fields a proxy sets or drops itself.
func endToEnd(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		if !proxySets(k) {
			out[k] = v
		}
	}
	return out
}

// proxySets reports whether a request field is one a proxy writes or
// drops itself, whatever the caller sent: request ids, forwarding fields,
// framing and hop-by-hop fields, and the transport's own. A name spelled
// with underscores counts as the one with dashes.
func proxySets(k string) bool {
	k = textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(k, "_", "-"))
	switch k {
	case "X-Request-Id", "Forwarded", "Accept-Encoding", "User-Agent", "Content-Length",
		"Transfer-Encoding", "Connection", "Keep-Alive", "Te":
		return true
	}
	return strings.HasPrefix(k, "X-Forwarded-")
}

// describe says what an answer is, in one line.
func describe(a Answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", a.Status)
	if s, ok := a.Seq(); ok {
		fmt.Fprintf(&b, " from the upstream (#%d)", s)
	} else {
		b.WriteString(" of the proxy's own")
	}
	fmt.Fprintf(&b, " %q", clip(a.Body))
	if a.Close {
		b.WriteString(", Connection: close")
	}
	if a.AfterHalfClose {
		b.WriteString(", after the half-close")
	}
	if a.Err != "" {
		b.WriteString(", body cut short: " + a.Err)
	}
	return b.String()
}

// describeReceived says what an upstream received, in one line.
func describeReceived(r Received) string {
	s := fmt.Sprintf("%s %q (%d body bytes, #%d", r.Method, r.Target, len(r.Body), r.Seq)
	if r.Status != 0 {
		s += fmt.Sprintf(", answered %d", r.Status)
	}
	return s + ")"
}

// String describes an outcome over a few lines: the answers, how the
// connection ended, and what the upstream received.
func (o Outcome) String() string {
	var b strings.Builder
	for i, a := range o.Answers {
		fmt.Fprintf(&b, "\n    answer %d: %s", i+1, describe(a))
	}
	if len(o.Answers) == 0 {
		b.WriteString("\n    no answer")
	}
	if o.HalfClosed {
		fmt.Fprintf(&b, "\n    the caller half-closed %v after its last write", o.HalfCloseAfter.Round(100*time.Microsecond))
	}
	fmt.Fprintf(&b, "\n    reading stopped: %s (the last read took %v)", o.Stopped, o.LastRead.Round(100*time.Microsecond))
	if len(o.Unparsed) > 0 {
		fmt.Fprintf(&b, "\n    bytes that are no answer: %q", clip(o.Unparsed))
	}
	for i, r := range o.Upstream {
		fmt.Fprintf(&b, "\n    upstream request %d: %s", i+1, describeReceived(r))
	}
	if len(o.Upstream) == 0 {
		b.WriteString("\n    the upstream received nothing")
	}
	return b.String()
}

// Report is a failure message for case c: its bytes, quoted and clipped,
// the differences, and both outcomes.
func Report(c Case, signpost, reference Outcome, diffs []string) string {
	sent := signpost.Sent
	if sent == nil {
		sent = c.Raw
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %s: signpost departs from net/http\n  sent: %q", c.Name, clip(sent))
	for _, d := range diffs {
		b.WriteString("\n  - " + d)
	}
	b.WriteString("\n  signpost:" + signpost.String())
	b.WriteString("\n  reference:" + reference.String())
	return b.String()
}

// clip shortens bytes for a message.
func clip(b []byte) []byte {
	const most = 400
	if len(b) > most {
		return append(b[:most:most], "…"...)
	}
	return b
}
