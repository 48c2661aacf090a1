package front

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/internal/httpwire"
)

// heldBytes is how much of a response body of undeclared length is held
// before its header goes out: a body the handler finishes within it is sent
// with a Content-Length, a longer one chunked, as net/http does.
const heldBytes = 2048

// frontResponse is the http.ResponseWriter of the front, one per
// connection, reset for each request. It writes what net/http's response
// writer would, byte for byte apart from the order of header fields.
type frontResponse struct {
	c    *frontConn
	req  *http.Request
	body *frontBody

	header        http.Header
	status        int
	wroteHeader   bool  // the final status is set
	sent          bool  // the status line and header are in the write buffer
	done          bool  // the handler returned
	chunked       bool  // the body goes out in chunked framing
	closeAfter    bool  // the connection ends after this response
	bodyLeft      bool  // the request body was too large to drain
	head          bool  // the request is HEAD: bodies are dropped
	contentLength int64 // declared or computed; -1 when unknown
	written       int64
	held          []byte
	sample        []byte // the first bytes, held and new, to sniff
	err           error
	scratch       [20]byte // formats numbers without allocating

	// The header as it was at WriteHeader: lines written except the
	// fields whose fate depends on the body, kept apart.
	lines                             []byte
	keys                              []string
	contentType, connection, encoding []string
	te                                string
	clen                              string
	haveType, haveCL, haveDate        bool
	trailers                          bool
	declared                          []string
}

func (w *frontResponse) reset(req *http.Request, body *frontBody) {
	if w.header == nil {
		w.header = make(http.Header, 8)
	}
	w.req, w.body = req, body
	w.status, w.written, w.contentLength, w.err = 0, 0, -1, nil
	w.wroteHeader, w.sent, w.done, w.chunked = false, false, false, false
	w.closeAfter, w.bodyLeft = req.Close || httpwire.HasToken(req.Header["Connection"], "close"), false
	w.head = req.Method == http.MethodHead
	w.held = w.held[:0]
}

func (w *frontResponse) Header() http.Header { return w.header }

func (w *frontResponse) WriteHeader(code int) {
	if w.wroteHeader {
		w.c.s.logf("http: superfluous response.WriteHeader call with %d after %d", code, w.status)
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		bw := w.c.writer()
		httpwire.WriteStatus(bw, code)
		w.snapshot()
		w.writeFields(bw, true)
		bw.WriteString("\r\n")
		if err := bw.Flush(); err != nil {
			w.fail(err)
		}
		w.lines = w.lines[:0]
		return
	}
	w.wroteHeader = true
	w.status = code
	if cl := w.header["Content-Length"]; len(cl) > 0 && cl[0] != "" {
		v, err := strconv.ParseInt(cl[0], 10, 64)
		if err == nil && v >= 0 {
			w.contentLength = v
		} else {
			w.c.s.logf("http: invalid Content-Length of %q", cl[0])
			delete(w.header, "Content-Length")
		}
	}
	w.snapshot()
}

// snapshot writes the header as it is now into w.lines, sorted by name,
// and keeps apart the fields the body decides on, as net/http copies the
// header at WriteHeader.
func (w *frontResponse) snapshot() {
	w.lines, w.keys, w.declared = w.lines[:0], w.keys[:0], w.declared[:0]
	w.contentType, w.connection, w.encoding = nil, nil, nil
	w.te, w.clen = "", ""
	w.haveType, w.haveCL, w.haveDate, w.trailers = false, false, false, false
	for k := range w.header {
		w.keys = append(w.keys, k)
	}
	slices.Sort(w.keys)
	for _, k := range w.keys {
		vv := w.header[k]
		switch {
		case k == "Content-Type":
			w.contentType, w.haveType = vv, true
			continue
		case k == "Connection":
			w.connection = vv
			continue
		case k == "Content-Encoding":
			w.encoding = vv
			continue
		case k == "Transfer-Encoding":
			if len(vv) > 0 {
				w.te = vv[0]
			}
			continue
		case k == "Content-Length":
			w.haveCL = true
			if len(vv) > 0 {
				w.clen = vv[0]
			}
			continue
		case k == "Date":
			w.haveDate = true
		case k == "Trailer":
			w.trailers = true
			for f := range httpwire.Tokens(vv) {
				w.declared = append(w.declared, textproto.CanonicalMIMEHeaderKey(f))
			}
		case strings.HasPrefix(k, http.TrailerPrefix):
			w.trailers = true
			continue
		}
		if !httpwire.ValidFieldName(k) {
			continue
		}
		for _, v := range vv {
			w.lines = httpwire.AppendField(w.lines, k, v)
		}
	}
}

func (w *frontResponse) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !httpwire.BodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p))
	if w.contentLength != -1 && w.written > w.contentLength {
		return 0, http.ErrContentLength
	}
	if w.err != nil {
		return 0, w.err
	}
	if !w.sent {
		// Held until the framing or the sniffed type is known, as
		// net/http holds the first 2 KiB.
		if (w.contentLength == -1 || w.sniffs()) && len(w.held)+len(p) <= heldBytes {
			w.held = append(w.held, p...)
			return len(p), nil
		}
		first := p
		if len(w.held) > 0 {
			// The type is sniffed from the first bytes, held and new.
			w.sample = append(append(w.sample[:0], w.held...), p[:min(len(p), max(0, sniffLen-len(w.held)))]...)
			first = w.sample
		}
		w.send(first)
		w.writeBody(w.held)
		w.held = w.held[:0]
	}
	w.writeBody(p)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// sniffLen is how much of a body http.DetectContentType looks at.
const sniffLen = 512

// sniffs reports whether the response's type will be sniffed from its body.
func (w *frontResponse) sniffs() bool {
	return httpwire.BodyAllowed(w.status) && !w.haveType && httpwire.FirstValue(w.encoding) == "" && w.te == ""
}

// SetReadDeadline sets the deadline for reading the request's body, as
// http.ResponseController does on net/http's writer; zero clears it. Call
// it on the handler's goroutine. Once the body is read, the caller
// leaving is watched for whatever the deadline.
func (w *frontResponse) SetReadDeadline(t time.Time) error {
	if w.done {
		return errHandlerReturned
	}
	w.c.setReadDeadline(t)
	return nil
}

// errHandlerReturned is a deadline set after the handler returned.
var errHandlerReturned = errors.New("the handler has returned: the request's deadline is past changing")

// Flush sends what is written so far to the caller.
func (w *frontResponse) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sendHeld()
	if w.err == nil {
		if err := w.c.writer().Flush(); err != nil {
			w.fail(err)
		}
	}
}

// sendHeld sends the header, if it has not gone out, and the body held.
func (w *frontResponse) sendHeld() {
	if w.sent {
		return
	}
	w.send(w.held)
	w.writeBody(w.held)
	w.held = w.held[:0]
}

// finish completes the response once the handler returned.
func (w *frontResponse) finish() {
	w.done = true
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sendHeld()
	bw := w.c.writer()
	if w.chunked {
		bw.WriteString("0\r\n")
		w.writeTrailers(bw)
		bw.WriteString("\r\n")
	}
	if w.body != nil && !w.closeAfter && !w.body.drain() {
		// A connection that ends anyway is not held up reading a body
		// no one will use.
		w.closeAfter = true
	}
	if !w.head && w.contentLength != -1 && httpwire.BodyAllowed(w.status) && w.contentLength != w.written {
		// Fewer bytes than declared: the caller would read the next
		// response as the rest of this one.
		w.closeAfter = true
	}
	if w.err != nil {
		w.closeAfter = true
	}
}

func (w *frontResponse) writeTrailers(bw *bufio.Writer) {
	// Trailer-prefixed keys count whenever the handler set them, after
	// the header went out as well, as with net/http.
	var keys []string
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		name := strings.TrimPrefix(k, http.TrailerPrefix)
		if !httpwire.ValidFieldName(name) {
			continue
		}
		for _, v := range w.header[k] {
			httpwire.WriteField(bw, name, v)
		}
	}
	for _, k := range w.declared {
		for _, v := range w.header[k] {
			httpwire.WriteField(bw, k, v)
		}
	}
}

func (w *frontResponse) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.closeAfter = true
}

func (w *frontResponse) writeBody(p []byte) {
	if len(p) == 0 || w.head || w.err != nil {
		return
	}
	bw := w.c.writer()
	if w.chunked {
		bw.Write(strconv.AppendInt(w.scratch[:0], int64(len(p)), 16))
		bw.WriteString("\r\n")
		bw.Write(p)
		_, err := bw.WriteString("\r\n")
		if err != nil {
			w.fail(err)
		}
		return
	}
	if _, err := bw.Write(p); err != nil {
		w.fail(err)
	}
}

// send writes the status line and header, deciding the framing from the
// first bytes of the body, p, as net/http's chunkWriter.writeHeader does.
func (w *frontResponse) send(p []byte) {
	w.sent = true
	s := w.c.s
	keepAlives := !s.shutting.Load()
	var setLength []byte
	var setType, setConnection, setTE string

	if w.done && !w.trailers && w.te == "" && httpwire.BodyAllowed(w.status) && !w.haveCL && (!w.head || len(p) > 0) {
		w.contentLength = int64(len(p))
		setLength = strconv.AppendInt(w.scratch[:0], int64(len(p)), 10)
	}
	hasCL := w.contentLength != -1
	connection := ""
	if len(w.connection) > 0 {
		connection = w.connection[0]
	}
	if connection == "close" || !keepAlives {
		w.closeAfter = true
	}
	if w.req.ContentLength != 0 && !w.closeAfter && w.body != nil {
		switch w.body.settle() {
		case bodyDone:
		case bodyTooLarge:
			w.closeAfter, w.bodyLeft = true, true
			w.connection = nil
			setConnection = "close"
		default:
			w.closeAfter = true
		}
	}
	dropType, dropLength, dropTE := false, false, false
	if httpwire.BodyAllowed(w.status) {
		if httpwire.FirstValue(w.encoding) == "" && !w.haveType && w.te == "" && len(p) > 0 {
			setType = http.DetectContentType(p)
		}
	} else {
		dropLength, dropTE = true, true
		dropType = w.status == http.StatusNotModified
	}
	if hasCL && w.te != "" && w.te != "identity" {
		s.logf("http: WriteHeader called with both Transfer-Encoding of %q and a Content-Length of %d", w.te, w.contentLength)
		dropLength, hasCL = true, false
	}
	switch {
	case w.head || !httpwire.BodyAllowed(w.status) || w.status == http.StatusNoContent, hasCL:
		dropTE = true
	case w.te == "identity":
		w.chunked, w.closeAfter, dropTE = false, true, true
	default:
		w.chunked, setTE = true, "chunked"
		if w.te == "chunked" {
			dropTE = true
		}
	}
	if w.chunked {
		dropLength = true
	}
	if w.closeAfter && (!keepAlives || !httpwire.HasToken(w.connection, "close")) {
		w.connection = nil
		setConnection = "close"
	}

	bw := w.c.writer()
	httpwire.WriteStatus(bw, w.status)
	w.writeFields(bw, !dropType)
	if w.haveCL && !dropLength {
		httpwire.WriteField(bw, "Content-Length", w.clen)
	}
	if w.te != "" && !dropTE {
		httpwire.WriteField(bw, "Transfer-Encoding", w.te)
	}
	if !w.haveDate {
		bw.WriteString("Date: ")
		bw.Write(httpwire.Date())
		bw.WriteString("\r\n")
	}
	if setLength != nil {
		bw.WriteString("Content-Length: ")
		bw.Write(setLength)
		bw.WriteString("\r\n")
	}
	for _, f := range [...]struct{ k, v string }{{"Content-Type", setType}, {"Connection", setConnection}, {"Transfer-Encoding", setTE}} {
		if f.v != "" {
			httpwire.WriteField(bw, f.k, f.v)
		}
	}
	if _, err := bw.WriteString("\r\n"); err != nil {
		w.fail(err)
	}
}

// writeFields writes the header as snapshot took it: the lines, then the
// Content-Type (when withType), Connection and Content-Encoding fields kept
// apart.
func (w *frontResponse) writeFields(bw *bufio.Writer, withType bool) {
	bw.Write(w.lines)
	if withType {
		for _, v := range w.contentType {
			httpwire.WriteField(bw, "Content-Type", v)
		}
	}
	for _, v := range w.connection {
		httpwire.WriteField(bw, "Connection", v)
	}
	for _, v := range w.encoding {
		httpwire.WriteField(bw, "Content-Encoding", v)
	}
}
