package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/test/differential"
)

// differentialConfig is a rule file with one route the corpus never uses,
// passing upstream errors through as they are.
const differentialConfig = "testdata/differential.yaml"

// differentialLimit bounds every read of an exchange: longer than the
// upstream timeout, so that a 504 arrives within it.
const differentialLimit = differential.UpstreamTimeout + time.Second

// differentialBodyTimeout is signpost's --request-body-timeout in the
// differential tests.
const differentialBodyTimeout = time.Second

// side is one proxy under judgement, with the upstream behind it.
type side struct {
	name string // "signpost" or "reference"
	addr string
	up   *differential.Upstream
}

// startSides starts the real signpost binary and the reference, each in
// front of an upstream of its own.
func startSides(t *testing.T) (sp, ref side) {
	t.Helper()
	spUp, refUp := differential.StartUpstream(t), differential.StartUpstream(t)
	bin := startSignpost(t, differentialConfig, spUp.URL(), "--upstream-timeout", differential.UpstreamTimeout.String(),
		"--request-body-timeout", differentialBodyTimeout.String())
	return side{"signpost", bin.Addr, spUp}, side{"reference", differential.StartReference(t, refUp.URL()), refUp}
}

// send writes raw to the side and returns its outcome for the case key k.
func (s side) send(raw []byte, k differential.Key) differential.Outcome {
	return s.outcome(differential.Send(s.addr, raw, differentialLimit), k)
}

// outcome pairs what a caller saw with what the upstream received for k.
func (s side) outcome(r differential.Result, k differential.Key) differential.Outcome {
	return differential.Outcome{Result: r, Upstream: s.up.Requests(k)}
}

// TestDifferentialCorpus sends every case of the corpus to signpost and to
// net/http's Server in front of httputil.ReverseProxy, and fails each case
// where what the caller got or what the upstream received differs in a
// way no deliberate difference explains.
func TestDifferentialCorpus(t *testing.T) {
	t.Parallel()
	sp, ref := startSides(t)
	cases := differential.Corpus()
	type verdict struct {
		sp, ref differential.Outcome
		diffs   []string
	}
	verdicts := make([]verdict, len(cases))
	var wg sync.WaitGroup
	pool := make(chan struct{}, 8)
	for i, c := range cases {
		pool <- struct{}{}
		wg.Go(func() {
			defer func() { <-pool }()
			k := differential.NewKey()
			raw := c.Expand(k)
			var v verdict
			var both sync.WaitGroup
			both.Go(func() { v.sp = sp.send(raw, k) })
			both.Go(func() { v.ref = ref.send(raw, k) })
			both.Wait()
			v.diffs = differential.Compare(c, v.sp, v.ref)
			verdicts[i] = v
		})
	}
	wg.Wait()
	failed := 0
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if v := verdicts[i]; len(v.diffs) > 0 {
				failed++
				t.Error(differential.Report(c, v.sp, v.ref, v.diffs))
			}
		})
	}
	t.Logf("%d cases departed from net/http", failed)
	for _, s := range []side{sp, ref} {
		for _, r := range s.up.TakeUnattributed() {
			t.Errorf("%s's upstream received %s %q, which names no case: its comparison is blind to it", s.name, r.Method, r.Target)
		}
	}
}

// exchangeStep is one exchange of a scenario, on one side.
type exchangeStep struct {
	c   differential.Case
	out differential.Outcome
}

// misbehaviour is a scenario with a misbehaving upstream, run on both
// sides with the same keys.
type misbehaviour struct {
	name string
	keys int
	// run drives one side and returns its exchanges, in order.
	run func(s side, k []differential.Key) []exchangeStep
	// check asserts what must hold of one side whatever the other did.
	check func(t *testing.T, s side, k []differential.Key, steps []exchangeStep)
	// deliberate, when set, is the deliberate difference (in
	// docs/net-http-differences.md) by which signpost's outcome is not the
	// reference's: check alone judges each side.
	deliberate string
}

// TestDifferentialMisbehavingUpstream runs the scenarios in which the
// upstream misbehaves against signpost and against the reference: each
// side must hold the scenario's absolute property (each caller gets its
// own answer, a request that may have been read is sent once, no answer
// nobody wrote), and signpost's outcomes must be the reference's, but for
// the deliberate differences.
func TestDifferentialMisbehavingUpstream(t *testing.T) {
	t.Parallel()
	sp, ref := startSides(t)
	for _, m := range misbehaviours() {
		t.Run(m.name, func(t *testing.T) {
			keys := make([]differential.Key, m.keys)
			for i := range keys {
				keys[i] = differential.NewKey()
			}
			var spSteps, refSteps []exchangeStep
			var both sync.WaitGroup
			both.Go(func() { spSteps = m.run(sp, keys) })
			both.Go(func() { refSteps = m.run(ref, keys) })
			both.Wait()
			m.check(t, sp, keys, spSteps)
			m.check(t, ref, keys, refSteps)
			if m.deliberate != "" {
				t.Logf("not compared: %s", m.deliberate)
				return
			}
			for i := range spSteps {
				if d := differential.Compare(spSteps[i].c, spSteps[i].out, refSteps[i].out); len(d) > 0 {
					t.Error(differential.Report(spSteps[i].c, spSteps[i].out, refSteps[i].out, d))
				}
			}
		})
	}
}

// misbehaviours are the scenarios of TestDifferentialMisbehavingUpstream.
func misbehaviours() []misbehaviour {
	var out []misbehaviour
	// 1. Bytes the upstream sends after an answer, on a connection the
	// proxy may reuse: a second caller 30 ms later must get its own answer.
	for _, mode := range []struct{ method, mode string }{
		{"GET", differential.ModeUnsolicited},
		{"GET", differential.ModeLateBody204},
		{"GET", differential.ModeLateBody304},
		{"HEAD", differential.ModeLateBodyHead},
	} {
		out = append(out, misbehaviour{
			name: "bytes after an answer: " + mode.mode, keys: 2,
			run: func(s side, k []differential.Key) []exchangeStep {
				return secondCaller(s, k, k[0], get(mode.method, k[0], "/mis/"+mode.mode))
			},
			check: wantSecondCallerOwnAnswer,
		})
	}
	// 2. CL.0: the upstream answers at once and reads the body as the next
	// request. The smuggled request names a key of its own, which neither
	// exchange's comparison collects: whether the upstream has read it yet
	// when the first exchange ends depends on timing alone.
	out = append(out, misbehaviour{
		name: "an upstream that reads the body as a request", keys: 3,
		run: func(s side, k []differential.Key) []exchangeStep {
			smuggled := get("GET", k[2], "/SMUGGLED")
			return secondCaller(s, k, k[2], fmt.Sprintf("POST %s/mis/early HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s",
				k[0].Prefix(), k[0].Host(), len(smuggled), smuggled))
		},
		check: wantSecondCallerOwnAnswer,
	})
	// 3. An upstream that resets the connection once it read a request
	// that must not be sent twice, on a connection warmed by a GET.
	for _, r := range []struct{ name, method, mode, body string }{
		{"POST", "POST", differential.ModeResetAfterRead, `{"n":1}`},
		{"PATCH", "PATCH", differential.ModeResetAfterRead, `{"status":"open"}`},
		{"empty POST", "POST", differential.ModeResetAfterRead, ""},
		{"POST, reset after its head", "POST", differential.ModeResetAfterHead, `{"n":1}`},
	} {
		out = append(out, misbehaviour{
			name: "reset after reading a " + r.name, keys: 1,
			run: func(s side, k []differential.Key) []exchangeStep {
				req := fmt.Sprintf("%s %s/mis/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s",
					r.method, k[0].Prefix(), r.mode, k[0].Host(), len(r.body), r.body)
				return warmedThen(s, k[0], req)
			},
			check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
				wantStatuses(t, s, steps[0], 200, 502)
				wantReceived(t, s, k[0].Prefix()+"/mis/"+r.mode, 1)
			},
		})
	}
	// 4. A GET on a warmed connection that the upstream closes without
	// answering: sent again once, on a fresh connection.
	out = append(out, misbehaviour{
		name: "a GET whose connection closes unanswered", keys: 1,
		run: func(s side, k []differential.Key) []exchangeStep {
			return warmedThen(s, k[0], get("GET", k[0], "/mis/"+differential.ModeCloseBeforeAnswer))
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			wantStatuses(t, s, steps[0], 200, 200)
			wantReceived(t, s, k[0].Prefix()+"/mis/"+differential.ModeCloseBeforeAnswer, 2)
		},
	})
	// 5. A status below 100.
	out = append(out, misbehaviour{
		name: "status 099", keys: 1,
		run: func(s side, k []differential.Key) []exchangeStep {
			raw := get("GET", k[0], "/mis/"+differential.ModeStatus099) + get("GET", k[0], "/after")
			return []exchangeStep{s.exchange(raw, k[0])}
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			if s.name == "reference" {
				wantStatuses(t, s, steps[0]) // its handler panics (rule d)
				return
			}
			wantStatuses(t, s, steps[0], 502, 200)
			wantErrorCode(t, s, steps[0], 0, "upstream_invalid_response")
			wantOwnAnswer(t, s, steps[0], 1, "GET", k[0].Prefix()+"/after")
		},
	})
	// 6. An upstream that answers 413 before reading a large body.
	out = append(out, misbehaviour{
		name: "413 before a 4 MiB body was read", keys: 1,
		run: func(s side, k []differential.Key) []exchangeStep {
			const size = 4 << 20
			raw := fmt.Sprintf("POST %s/mis/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n",
				k[0].Prefix(), differential.ModeEarly413, k[0].Host(), size) + strings.Repeat("z", size)
			return []exchangeStep{s.exchange(raw, k[0])}
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			wantStatuses(t, s, steps[0], 413)
		},
	})
	// 7. A caller that half-closes at once, before its answer.
	out = append(out, misbehaviour{
		name: "a caller that half-closes before its answer", keys: 1,
		run: func(s side, k []differential.Key) []exchangeStep {
			raw := get("GET", k[0], "/mis/slow?ms=300")
			r := differential.SendHalfClosed(s.addr, []byte(raw), differentialLimit)
			return []exchangeStep{{differential.Case{Name: "half-closed", Raw: []byte(raw)}, s.outcome(r, k[0])}}
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			for i, a := range steps[0].out.Answers {
				if a.Status == http.StatusOK && len(a.Body) == 0 {
					t.Errorf("%s: answer %d is a 200 with an empty body, which nobody wrote", s.name, i+1)
				}
			}
			if s.name == "signpost" {
				wantStatuses(t, s, steps[0], 0)
				if as := steps[0].out.Answers; len(as) == 1 && (as[0].FromUpstream() || !json.Valid(as[0].Body)) {
					t.Errorf("signpost: answer %d %q is not an error signpost wrote (rule e)", as[0].Status, as[0].Body)
				}
			}
		},
	})
	// 8. A body that trickles in over a second: the head must reach the
	// upstream before the body is whole.
	out = append(out, misbehaviour{
		name: "a body that trickles", keys: 1,
		run: func(s side, k []differential.Key) []exchangeStep {
			head := fmt.Sprintf("POST %s/trickle HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\n", k[0].Prefix(), k[0].Host())
			body := bytes.Repeat([]byte("0123456789"), 10)
			r := differential.SendTrickled(s.addr, []byte(head), body, 10, 100*time.Millisecond, differentialLimit)
			return []exchangeStep{{differential.Case{Name: "trickled", Raw: r.Sent}, s.outcome(r, k[0])}}
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			wantStatuses(t, s, steps[0], 200)
			out := steps[0].out
			if len(out.Upstream) == 0 || len(out.Written) == 0 {
				t.Errorf("%s: the upstream received nothing", s.name)
				return
			}
			if d := out.Upstream[0].HeadAt.Sub(out.Written[0]); d > 300*time.Millisecond {
				t.Errorf("%s: the head reached the upstream %v after the caller sent it; want within 300ms, before the body is whole",
					s.name, d.Round(time.Millisecond))
			}
		},
	})
	// 9. An upstream that resets the connection once it read a POST whose
	// body signpost read whole first, with an idempotency key: sent once,
	// as httputil.ReverseProxy, which cannot rewind a body, sends it.
	out = append(out, misbehaviour{
		name: "reset after reading a keyed POST whose body signpost reads", keys: 1,
		run: func(s side, k []differential.Key) []exchangeStep {
			body := `{"status":"open"}`
			req := fmt.Sprintf("POST %s/buffered/mis/%s HTTP/1.1\r\nHost: %s\r\nIdempotency-Key: key-1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				k[0].Prefix(), differential.ModeResetAfterRead, k[0].Host(), len(body), body)
			return warmedThen(s, k[0], req)
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			wantStatuses(t, s, steps[0], 200, 502)
			wantReceived(t, s, k[0].Prefix()+"/buffered/mis/"+differential.ModeResetAfterRead, 1)
		},
	})
	// 10. An error whose body comes after the upstream timeout, on a route
	// whose errors a rule concerns and on one only observed: passed on
	// whole, as it comes, framed by length or chunked.
	for _, route := range []string{"examined", "observed"} {
		for _, mode := range []string{differential.ModeLateError, differential.ModeLateErrorChunked} {
			out = append(out, misbehaviour{
				name: "an error body after the upstream timeout, " + route + ", " + mode, keys: 1,
				run: func(s side, k []differential.Key) []exchangeStep {
					// The body comes past the upstream timeout: the read waits
					// for it, with room for a machine busy with other work.
					raw := get("GET", k[0], "/"+route+"/mis/"+mode)
					r := differential.Send(s.addr, []byte(raw), differential.LateBody+2*time.Second)
					return []exchangeStep{{differential.Case{Name: "GET /" + route + "/mis/" + mode, Raw: []byte(raw)}, s.outcome(r, k[0])}}
				},
				check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
					wantStatuses(t, s, steps[0], 400)
					if as := steps[0].out.Answers; len(as) == 1 && (string(as[0].Body) != differential.LateErrorBody || as[0].Err != "") {
						t.Errorf("%s: %s: body %q (%s); want the upstream's whole, %q", s.name, steps[0].c.Name, as[0].Body, as[0].Err, differential.LateErrorBody)
					}
				},
			})
		}
	}
	// 11. An answer with no Content-Type: signpost passes it untyped, as
	// nginx and HAProxy do, where net/http's server sniffs one.
	for _, mode := range []string{differential.ModeUntyped, differential.ModeUntypedChunked} {
		out = append(out, misbehaviour{
			name: "an answer with no Content-Type, " + mode, keys: 1,
			run: func(s side, k []differential.Key) []exchangeStep {
				return []exchangeStep{s.exchange(get("GET", k[0], "/mis/"+mode), k[0])}
			},
			check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
				wantStatuses(t, s, steps[0], 200)
				if as := steps[0].out.Answers; s.name == "signpost" && len(as) == 1 && as[0].Header["Content-Type"] != nil {
					t.Errorf("signpost: %s: Content-Type %q; want none, as the upstream sent", steps[0].c.Name, as[0].Header["Content-Type"])
				}
			},
		})
	}
	// 12. A 200 whose body the upstream breaks off: the caller never gets
	// a whole answer. Signpost passes on what came and closes; net/http's
	// server, whose buffer still held it, closes having sent nothing.
	out = append(out, misbehaviour{
		name: "a 200 broken off mid-body", keys: 1,
		deliberate: "a body the upstream broke off: what came of it passes on, then the connection closes",
		run: func(s side, k []differential.Key) []exchangeStep {
			return []exchangeStep{s.exchange(get("GET", k[0], "/mis/"+differential.ModeBrokenBody), k[0])}
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			out := steps[0].out
			if len(out.Answers) > 1 || len(out.Answers) == 1 && (out.Answers[0].Status != 200 || out.Answers[0].Err == "") || !out.Closed {
				t.Errorf("%s: %s: want no whole answer, and the connection closed:%s", s.name, steps[0].c.Name, out)
			}
			if s.name == "signpost" && len(out.Answers) == 0 {
				t.Errorf("signpost: %s: nothing passed on of the body that came:%s", steps[0].c.Name, out)
			}
		},
	})
	// 13. A caller that declares a body on a route whose body signpost
	// reads and holds it back: signpost answers 408 once
	// --request-body-timeout passes, calling no one; the reference
	// forwards the head and waits for the caller.
	out = append(out, misbehaviour{
		name: "a body held back on a route whose body signpost reads", keys: 1,
		deliberate: "a request body signpost reads must arrive within --request-body-timeout",
		run: func(s side, k []differential.Key) []exchangeStep {
			raw := fmt.Sprintf("POST %s/buffered/mis/held HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"status\":",
				k[0].Prefix(), k[0].Host())
			r := differential.SendHeld(s.addr, []byte(raw), differentialBodyTimeout+time.Second, differentialLimit)
			return []exchangeStep{{differential.Case{Name: "held back", Raw: []byte(raw)}, s.outcome(r, k[0])}}
		},
		check: func(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
			out := steps[0].out
			if s.name == "reference" {
				for _, a := range out.Answers {
					if !a.AfterHalfClose {
						t.Errorf("reference: answered %d before the caller half-closed; the test expects it to wait for the body", a.Status)
					}
				}
				return
			}
			wantStatuses(t, s, steps[0], http.StatusRequestTimeout)
			wantErrorCode(t, s, steps[0], 0, "request_body_timeout")
			if len(out.Answers) == 1 && (out.Answers[0].AfterHalfClose || !out.Answers[0].Close) {
				t.Errorf("signpost: the 408 came after the half-close, or without Connection: close:%s", out)
			}
			if len(out.Upstream) > 0 {
				t.Errorf("signpost: the upstream received %d requests; want none:%s", len(out.Upstream), out)
			}
		},
	})
	return out
}

// get is a request without a body to the path under k's prefix.
func get(method string, k differential.Key, path string) string {
	return fmt.Sprintf("%s %s%s HTTP/1.1\r\nHost: %s\r\n\r\n", method, k.Prefix(), path, k.Host())
}

// exchange sends raw and names the exchangeStep after its first line.
func (s side) exchange(raw string, k differential.Key) exchangeStep {
	first, _, _ := strings.Cut(raw, "\r\n")
	return exchangeStep{differential.Case{Name: first, Raw: []byte(raw)}, s.send([]byte(raw), k)}
}

// secondCaller sends first on a connection of its own and, once the
// upstream has written the bytes its misbehaviour sends unasked (those of
// the request filed under key late), and 20 ms more, a GET on another
// connection, with the second key. HTTP/1.1 cannot tell bytes that come
// after a request was written from its answer, for any proxy; the wait
// keeps a slow machine from putting the GET there.
func secondCaller(s side, k []differential.Key, late differential.Key, first string) []exchangeStep {
	a := s.exchange(first, k[0])
	for deadline := time.Now().Add(differentialLimit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if wroteLate(s.up.Requests(late)) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond)
	return []exchangeStep{a, s.exchange(get("GET", k[1], "/b"), k[1])}
}

// wroteLate reports whether the upstream has sent what it sends unasked
// for one of rs: late bytes after an answer, or the answer to a request
// it read out of another's body.
func wroteLate(rs []differential.Received) bool {
	for _, r := range rs {
		if !r.LateAt.IsZero() || r.Mode == "" && r.Status != 0 {
			return true
		}
	}
	return false
}

// warmedThen sends a GET and then req on one connection, so that req goes
// to the upstream on a connection the GET left idle.
func warmedThen(s side, k differential.Key, req string) []exchangeStep {
	return []exchangeStep{s.exchange(get("GET", k, "/warm")+req, k)}
}

// wantSecondCallerOwnAnswer checks that the second caller of secondCaller
// got the upstream's answer to its own request.
func wantSecondCallerOwnAnswer(t *testing.T, s side, k []differential.Key, steps []exchangeStep) {
	t.Helper()
	wantStatuses(t, s, steps[1], 200)
	wantOwnAnswer(t, s, steps[1], 0, "GET", k[1].Prefix()+"/b")
}

// wantStatuses checks the statuses of a exchangeStep's answers; 0 stands for any
// 4xx or 5xx.
func wantStatuses(t *testing.T, s side, st exchangeStep, want ...int) {
	t.Helper()
	var got []int
	ok := len(st.out.Answers) == len(want)
	for i, a := range st.out.Answers {
		got = append(got, a.Status)
		if ok && (want[i] == 0 && a.Status < 400 || want[i] != 0 && a.Status != want[i]) {
			ok = false
		}
	}
	if !ok {
		t.Errorf("%s: %s: answered %v, want %v (0: any error)%s", s.name, st.c.Name, got, want, st.out)
	}
}

// wantOwnAnswer checks that a exchangeStep's i-th answer is the upstream's answer
// to method target.
func wantOwnAnswer(t *testing.T, s side, st exchangeStep, i int, method, target string) {
	t.Helper()
	want := differential.NameOf(method, target, nil)
	if i >= len(st.out.Answers) || !st.out.Answers[i].FromUpstream() || !bytes.Equal(st.out.Answers[i].Body, want) {
		t.Errorf("%s: %s: answer %d is not the upstream's answer to %s %s, %s:%s", s.name, st.c.Name, i+1, method, target, want, st.out)
	}
}

// wantErrorCode checks the error member of the JSON body of a exchangeStep's i-th
// answer.
func wantErrorCode(t *testing.T, s side, st exchangeStep, i int, code string) {
	t.Helper()
	var body struct {
		Error string `json:"error"`
	}
	if i >= len(st.out.Answers) || json.Unmarshal(st.out.Answers[i].Body, &body) != nil || body.Error != code {
		t.Errorf("%s: %s: answer %d has no JSON body with error %q:%s", s.name, st.c.Name, i+1, code, st.out)
	}
}

// wantReceived checks how many times the upstream received target.
func wantReceived(t *testing.T, s side, target string, n int) {
	t.Helper()
	if got := s.up.Count(target); got != n {
		t.Errorf("%s: the upstream received %s %d times, want %d", s.name, target, got, n)
	}
}
