package differential

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestCorpus checks that the corpus parses, holds 80 cases or more, and
// that every case expands to bytes without placeholders, each name once.
func TestCorpus(t *testing.T) {
	cases := Corpus()
	if n := len(cases); n < 80 {
		t.Errorf("the corpus has %d cases, want 80 or more", n)
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Errorf("case %s is named twice", c.Name)
		}
		names[c.Name] = true
	}
	k := Key(123)
	if p, h := k.Prefix(), k.Host(); len(p) != 9 || len(h) != 12 {
		t.Errorf("$P is %q and $H %q; their widths, 9 and 12, are what a Content-Length in the corpus counts", p, h)
	}
	for _, c := range cases {
		raw := c.Expand(k)
		for _, ph := range []string{PathPlaceholder, HostPlaceholder, FillerPlaceholder} {
			if strings.Contains(string(raw), ph) {
				t.Errorf("case %s: %s left after expansion", c.Name, ph)
			}
		}
	}
}

// TestParseCorpusRefuses checks that a malformed corpus is refused, with
// the line named.
func TestParseCorpusRefuses(t *testing.T) {
	for _, tt := range []struct{ name, text string }{
		{"no tab", "get \"GET / HTTP/1.1\\r\\n\\r\\n\"\n"},
		{"not quoted", "get\tGET / HTTP/1.1\n"},
		{"a continuation first", "\t\"GET\"\n"},
		{"a name twice", "get\t\"a\"\nget\t\"b\"\n"},
	} {
		if _, err := ParseCorpus(tt.text); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("%s: ParseCorpus(%q) = %v, want an error naming the line", tt.name, tt.text, err)
		}
	}
	cases, err := ParseCorpus("# comment\n\na\t\"x\"\n\t\"y\"\n")
	if err != nil || len(cases) != 1 || string(cases[0].Raw) != "xy" {
		t.Errorf("a case continued on a second line: %v, %v", cases, err)
	}
}

// TestKeyOf checks that a request is told to belong to its case by its
// target's prefix, or else by its host, and to none otherwise.
func TestKeyOf(t *testing.T) {
	k := Key(4711)
	for _, tt := range []struct {
		target, host string
		want         Key
	}{
		{k.Prefix() + "/a", "", k},
		{k.Prefix() + "?q", "", k},
		{k.Prefix(), "", k},
		{"/%2A", k.Host(), k},
		{"/%2A", k.Host() + ":443", k},
		{k.Prefix() + "0/a", "", -1},
		{"/x" + k.Prefix(), "", -1},
		{"/", "other.test", -1},
	} {
		if got := keyOf(tt.target, tt.host); got != tt.want {
			t.Errorf("keyOf(%q, %q) = %d, want %d", tt.target, tt.host, got, tt.want)
		}
	}
}

// TestParseRequests checks how many answers Send waits for before it
// half-closes: as many as net/http's server sends before the caller says
// more.
func TestParseRequests(t *testing.T) {
	const get = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
	const post = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
	for _, tt := range []struct {
		name     string
		raw      string
		requests int
		atOnce   int
	}{
		{"one", get, 1, 1},
		{"pipelined", get + post + get, 3, 3},
		{"CRLF after a POST, skipped", post + "\r\n" + get, 2, 2},
		{"five CR or LF after a POST: the fifth refused", post + "\r\n\r\n\n" + get, 1, 2},
		{"CRLF after a GET, refused", get + "\r\n" + get, 1, 2},
		{"under four bytes after a request: the server waits", get + "\r\n", 1, 1},
		{"a head cut short: the server waits", "GET /a HTTP/1.1\r\nHost: h\r\n", 0, 0},
		{"a malformed head cut short: refused at once", "GET /a HTTP/1.\r\nHost: h\r\n", 0, 1},
		{"a NUL line cut short: refused at once", "GET /a HTTP/1.1\r\nHost: h\r\n\x00\r\n", 0, 1},
		{"a body cut short: answered once the caller half-closes", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\nabc", 1, 0},
		{"a malformed chunk: answered at once", "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 1, 1},
		{"an unsupported coding: refused at once", "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 1},
	} {
		b := parseRequests([]byte(tt.raw))
		if len(b.requests) != tt.requests || b.answeredAtOnce() != tt.atOnce {
			t.Errorf("%s: %d requests, %d answered at once; want %d, %d", tt.name, len(b.requests), b.answeredAtOnce(), tt.requests, tt.atOnce)
		}
	}
	b := parseRequests([]byte("POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc"))
	if len(b.requests) != 1 || !b.requests[0].te || !b.requests[0].cl || b.requests[0].minor != 0 {
		t.Errorf("HTTP/1.0 with both framing fields read as %+v; want both seen, though net/http drops one", b.requests)
	}
}

// upstreamAnswer is an answer the upstream made to request seq of method
// and target.
func upstreamAnswer(seq int, method, target string) Answer {
	return Answer{Status: 200, Header: http.Header{"X-Upstream-Seq": {strconv.Itoa(seq)}}, Body: NameOf(method, target, nil)}
}

// ownAnswer is an answer a proxy made itself.
func ownAnswer(status int, body string) Answer {
	return Answer{Status: status, Header: http.Header{}, Body: []byte(body)}
}

func received(seq int, method, target string) Received {
	return Received{Seq: seq, Method: method, Target: target, Proto: "HTTP/1.1", Header: http.Header{}}
}

// outcome is what a caller saw that half-closed after its answers, the
// server closing then.
func outcome(sent string, answers []Answer, up ...Received) Outcome {
	return Outcome{Result: Result{Sent: []byte(sent), Answers: answers, Closed: true, HalfClosed: true}, Upstream: up}
}

// TestCompareRules checks each deliberate difference: the comparator
// accepts signpost doing what the rule says, and neither doing what the
// reference did nor anything looser.
func TestCompareRules(t *testing.T) {
	const getA = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
	const getB = "GET /b HTTP/1.1\r\nHost: h\r\n\r\n"
	const teAndCL = "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	const te = "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	const brokenChunk = "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n"
	const http10TE = "POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc"
	const asterisk = "GET * HTTP/1.1\r\nHost: h\r\n\r\n"
	const jsonError = `{"error":"upstream_invalid_response"}`

	// closedAfter is o, the server having closed before the caller
	// half-closed.
	closedAfter := func(o Outcome) Outcome { o.HalfClosed = false; return o }
	say := func(a Answer) Answer { a.Close = true; return a }
	afterHalfClose := func(a Answer) Answer { a.AfterHalfClose = true; return a }
	status99 := received(1, "GET", "/a")
	status99.Status = 99

	for _, tt := range []struct {
		name          string
		signpost, ref Outcome
		accept        bool
	}{
		{"same as the reference",
			outcome(getA, []Answer{upstreamAnswer(1, "GET", "/a")}, received(1, "GET", "/a")),
			outcome(getA, []Answer{upstreamAnswer(1, "GET", "/a")}, received(1, "GET", "/a")), true},
		{"another caller's answer",
			outcome(getA, []Answer{upstreamAnswer(1, "GET", "/b")}, received(1, "GET", "/a")),
			outcome(getA, []Answer{upstreamAnswer(1, "GET", "/a")}, received(1, "GET", "/a")), false},
		{"a request forwarded twice",
			outcome(getA, []Answer{upstreamAnswer(2, "GET", "/a")}, received(1, "GET", "/a"), received(2, "GET", "/a")),
			outcome(getA, []Answer{upstreamAnswer(1, "GET", "/a")}, received(1, "GET", "/a")), false},
		{"an error of signpost's own where the reference wrote an empty one",
			outcome(getA, []Answer{ownAnswer(502, jsonError)}, received(1, "GET", "/a")),
			outcome(getA, []Answer{ownAnswer(502, "")}, received(1, "GET", "/a")), true},
		{"an answer only after the half-close",
			outcome(getA, []Answer{afterHalfClose(ownAnswer(400, ""))}),
			outcome(getA, []Answer{ownAnswer(400, "")}), false},

		{"(a) Transfer-Encoding and Content-Length: answered, then closed",
			closedAfter(outcome(teAndCL+getB, []Answer{say(upstreamAnswer(1, "POST", "/p"))}, received(1, "POST", "/p"))),
			outcome(teAndCL+getB, []Answer{upstreamAnswer(1, "POST", "/p"), upstreamAnswer(2, "GET", "/b")},
				received(1, "POST", "/p"), received(2, "GET", "/b")), true},
		{"(a) Transfer-Encoding and Content-Length: read on as the reference does",
			outcome(teAndCL+getB, []Answer{upstreamAnswer(1, "POST", "/p"), upstreamAnswer(2, "GET", "/b")},
				received(1, "POST", "/p"), received(2, "GET", "/b")),
			outcome(teAndCL+getB, []Answer{upstreamAnswer(1, "POST", "/p"), upstreamAnswer(2, "GET", "/b")},
				received(1, "POST", "/p"), received(2, "GET", "/b")), false},
		{"(a) Transfer-Encoding and Content-Length, alone: not closed",
			outcome(teAndCL, []Answer{upstreamAnswer(1, "POST", "/p")}, received(1, "POST", "/p")),
			outcome(teAndCL, []Answer{upstreamAnswer(1, "POST", "/p")}, received(1, "POST", "/p")), false},

		{"(a) Transfer-Encoding alone: answered, then closed",
			closedAfter(outcome(te+getB, []Answer{say(upstreamAnswer(1, "POST", "/p"))}, received(1, "POST", "/p"))),
			outcome(te+getB, []Answer{upstreamAnswer(1, "POST", "/p"), upstreamAnswer(2, "GET", "/b")},
				received(1, "POST", "/p"), received(2, "GET", "/b")), true},
		{"(a) Transfer-Encoding alone: answered, then the next served",
			outcome(te+getB, []Answer{upstreamAnswer(1, "POST", "/p"), upstreamAnswer(2, "GET", "/b")},
				received(1, "POST", "/p"), received(2, "GET", "/b")),
			outcome(te+getB, []Answer{upstreamAnswer(1, "POST", "/p"), upstreamAnswer(2, "GET", "/b")},
				received(1, "POST", "/p"), received(2, "GET", "/b")), false},

		{"(f) a malformed chunked body: a 400 of signpost's own",
			closedAfter(outcome(brokenChunk, []Answer{say(ownAnswer(400, `{"error":"unreadable_request_body"}`))})),
			closedAfter(outcome(brokenChunk, []Answer{say(ownAnswer(502, ""))})), true},
		{"(f) a malformed chunked body: an empty 502, as the reference",
			closedAfter(outcome(brokenChunk, []Answer{say(ownAnswer(502, ""))})),
			closedAfter(outcome(brokenChunk, []Answer{say(ownAnswer(502, ""))})), false},
		{"(f) a malformed chunked body: forwarded",
			closedAfter(outcome(brokenChunk, []Answer{say(upstreamAnswer(1, "POST", "/p"))}, received(1, "POST", "/p"))),
			closedAfter(outcome(brokenChunk, []Answer{say(ownAnswer(502, ""))})), false},

		{"(b) HTTP/1.0 with Transfer-Encoding: refused",
			closedAfter(outcome(http10TE, []Answer{say(ownAnswer(400, ""))})),
			outcome(http10TE, []Answer{upstreamAnswer(1, "POST", "/p")}, received(1, "POST", "/p")), true},
		{"(b) HTTP/1.0 with Transfer-Encoding, first on its connection: forwarded",
			outcome(http10TE, []Answer{say(upstreamAnswer(1, "POST", "/p"))}, received(1, "POST", "/p")),
			outcome(http10TE, []Answer{upstreamAnswer(1, "POST", "/p")}, received(1, "POST", "/p")), false},
		{"(b) HTTP/1.0 with Transfer-Encoding, second: forwarded, then closed",
			outcome(getA+http10TE, []Answer{upstreamAnswer(1, "GET", "/a"), say(upstreamAnswer(2, "POST", "/p"))},
				received(1, "GET", "/a"), received(2, "POST", "/p")),
			outcome(getA+http10TE, []Answer{upstreamAnswer(1, "GET", "/a"), upstreamAnswer(2, "POST", "/p")},
				received(1, "GET", "/a"), received(2, "POST", "/p")), true},
		{"(b) HTTP/1.0 with Transfer-Encoding, second: forwarded, not closed",
			outcome(getA+http10TE, []Answer{upstreamAnswer(1, "GET", "/a"), upstreamAnswer(2, "POST", "/p")},
				received(1, "GET", "/a"), received(2, "POST", "/p")),
			outcome(getA+http10TE, []Answer{upstreamAnswer(1, "GET", "/a"), upstreamAnswer(2, "POST", "/p")},
				received(1, "GET", "/a"), received(2, "POST", "/p")), false},

		{"(c) GET *: refused, and the next request served",
			outcome(asterisk+getB, []Answer{ownAnswer(400, ""), upstreamAnswer(1, "GET", "/b")}, received(1, "GET", "/b")),
			outcome(asterisk+getB, []Answer{upstreamAnswer(1, "GET", "/%2A"), upstreamAnswer(2, "GET", "/b")},
				received(1, "GET", "/%2A"), received(2, "GET", "/b")), true},
		{"(c) GET *: refused, then closed",
			closedAfter(outcome(asterisk+getB, []Answer{say(ownAnswer(400, ""))})),
			outcome(asterisk+getB, []Answer{upstreamAnswer(1, "GET", "/%2A"), upstreamAnswer(2, "GET", "/b")},
				received(1, "GET", "/%2A"), received(2, "GET", "/b")), true},
		{"(c) GET *: forwarded",
			outcome(asterisk, []Answer{upstreamAnswer(1, "GET", "*")}, received(1, "GET", "*")),
			outcome(asterisk, []Answer{upstreamAnswer(1, "GET", "/%2A")}, received(1, "GET", "/%2A")), false},
		{"(c) GET *: refused, and the next request not served as the reference served it",
			outcome(asterisk+getB, []Answer{ownAnswer(400, ""), ownAnswer(502, "")}, received(1, "GET", "/b")),
			outcome(asterisk+getB, []Answer{upstreamAnswer(1, "GET", "/%2A"), upstreamAnswer(2, "GET", "/b")},
				received(1, "GET", "/%2A"), received(2, "GET", "/b")), false},

		{"(d) status 099: a 502 of signpost's own",
			outcome(getA+getB, []Answer{ownAnswer(502, jsonError), upstreamAnswer(2, "GET", "/b")}, status99, received(2, "GET", "/b")),
			closedAfter(outcome(getA+getB, nil, status99)), true},
		{"(d) status 099: no answer",
			closedAfter(outcome(getA+getB, nil, status99)),
			closedAfter(outcome(getA+getB, nil, status99)), false},
		{"(d) status 099: a 502 without a body of signpost's",
			outcome(getA, []Answer{ownAnswer(502, "")}, status99),
			closedAfter(outcome(getA, nil, status99)), false},

		{"(e) a caller that half-closed: an error of signpost's own",
			outcome(getA, []Answer{afterHalfClose(ownAnswer(499, `{"error":"caller_left"}`))}, received(1, "GET", "/a")),
			outcome(getA, []Answer{afterHalfClose(ownAnswer(502, ""))}), true},
		{"(e) a caller that half-closed: a 200 nobody wrote",
			outcome(getA, []Answer{afterHalfClose(ownAnswer(200, ""))}, received(1, "GET", "/a")),
			outcome(getA, []Answer{afterHalfClose(ownAnswer(502, ""))}), false},
	} {
		d := Compare(Case{Name: tt.name}, tt.signpost, tt.ref)
		if (len(d) == 0) != tt.accept {
			t.Errorf("%s: accepted %v, want %v; differences: %q", tt.name, len(d) == 0, tt.accept, d)
		}
	}
}

// TestProxySets checks which request fields the comparison leaves out:
// those a proxy sets or drops itself, also spelled with underscores.
func TestProxySets(t *testing.T) {
	for k, want := range map[string]bool{
		"X-Request-Id": true, "X-Forwarded-For": true, "X_Forwarded_Host": true, "Forwarded": true,
		"Transfer_Encoding": true, "Content-Length": true, "Connection": true, "Te": true,
		"X-Tag": false, "Cookie": false, "Upgrade": false, "Expect": false,
	} {
		if got := proxySets(k); got != want {
			t.Errorf("proxySets(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestCompareAcceptsAResetAfterAnOwnAnswer: an answer the proxy made
// itself whose end was lost to a reset on one side only is the same
// answer; one the upstream made is not.
func TestCompareAcceptsAResetAfterAnOwnAnswer(t *testing.T) {
	const bad = "GET /a HTTP/0.0\n\n"
	cut := ownAnswer(400, "400 Bad")
	cut.Err = "read tcp: read: connection reset by peer"
	if d := Compare(Case{Name: "reset"}, outcome(bad, []Answer{ownAnswer(400, "400 Bad Request")}), outcome(bad, []Answer{cut})); len(d) > 0 {
		t.Errorf("a 400 cut short by a reset on the reference's side: %q", d)
	}
	up := upstreamAnswer(1, "GET", "/a")
	upCut := up
	upCut.Err = cut.Err
	if d := Compare(Case{Name: "reset"}, outcome(getOf("/a"), []Answer{upCut}, received(1, "GET", "/a")),
		outcome(getOf("/a"), []Answer{up}, received(1, "GET", "/a"))); len(d) == 0 {
		t.Error("an upstream's answer cut short on signpost's side only was accepted")
	}
}

func getOf(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n" }
