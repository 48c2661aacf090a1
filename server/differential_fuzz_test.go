package server

import (
	"context"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/test/differential"
)

// differentialRules is a rule file with one route no input uses, passing
// upstream errors through as they are.
const differentialRules = `
unmatched: passthrough
routes:
  unused:
    method: GET
    path: /-/differential/unused/{id}
`

// fuzzLimit bounds each read of an exchange. Answers come within a few
// milliseconds; an input one side answers and the other waits on is a
// difference either way, and a short bound keeps such inputs, and failing
// seeds, from slowing the run.
const fuzzLimit = 250 * time.Millisecond

// FuzzServeAgainstNetHTTP sends each input, as raw bytes on a fresh
// connection, to Serve running in process and to net/http's Server in
// front of httputil.ReverseProxy, each in front of an upstream of its own,
// and fails on any difference differential.Compare does not put down to a
// deliberate one. The seeds are the differential corpus; $P and $H in an
// input become a fresh path prefix and host, which tell its requests apart
// at the upstream. Inputs over 8 KiB are skipped.
//
// With -parallel 1 on a 2-core machine an exec that both sides answer at
// once takes about 0.6 ms, some 1,500 execs/s: two real TCP exchanges on
// loopback, caller to proxy to upstream, each ending only when the proxy
// closes the connection after the caller half-closes it. An input on
// which one side answers and the other waits costs fuzzLimit.
func FuzzServeAgainstNetHTTP(f *testing.F) {
	names := map[string]string{}
	for _, c := range differential.Corpus() {
		f.Add(c.Raw)
		names[string(c.Raw)] = c.Name
	}
	var env judged
	f.Cleanup(env.stop)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 8<<10 {
			t.Skip("over 8 KiB")
		}
		k := differential.NewKey()
		sent, ok := differential.Expand(raw, k)
		if !ok {
			t.Skip("expands past differential.MaxExpanded")
		}
		env.start(t)
		var sp, ref differential.Result
		var both sync.WaitGroup
		both.Go(func() { sp = differential.Send(env.signpost, sent, fuzzLimit) })
		both.Go(func() { ref = differential.Send(env.reference.Addr, sent, fuzzLimit) })
		both.Wait()
		c := differential.Case{Name: names[string(raw)], Raw: raw}
		if c.Name == "" {
			c.Name = "fuzz input"
		}
		spOut := differential.Outcome{Result: sp, Upstream: received(env.spUp, k)}
		refOut := differential.Outcome{Result: ref, Upstream: received(env.refUp, k)}
		if d := differential.Compare(c, spOut, refOut); len(d) > 0 {
			t.Fatal(differential.Report(c, spOut, refOut, d))
		}
	})
}

// judged is what the fuzz target judges, started once per process on the
// first input: Serve and the reference, each in front of an upstream.
type judged struct {
	once             sync.Once
	err              error
	spUp, refUp      *differential.Upstream
	reference        *differential.Reference
	signpost         string
	cancel           context.CancelFunc
	served           chan error
	started, stopped bool
}

// start starts everything on its first call, and fails t if that failed.
func (j *judged) start(t *testing.T) {
	j.once.Do(func() { j.err = j.startOnce() })
	if j.err != nil {
		t.Fatal(j.err)
	}
}

func (j *judged) startOnce() error {
	j.started = true
	cfg, err := rules.Parse("differential.yaml", []byte(differentialRules))
	if err != nil {
		return err
	}
	if j.spUp, err = differential.NewUpstream(); err != nil {
		return err
	}
	if j.refUp, err = differential.NewUpstream(); err != nil {
		return err
	}
	if j.reference, err = differential.NewReference(j.refUp.URL()); err != nil {
		return err
	}
	upstream, _ := url.Parse(j.spUp.URL())
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel, j.served = cancel, make(chan error, 1)
	go func() {
		j.served <- Serve(ctx, cfg, ServeOptions{
			Options: proxy.Options{Upstream: upstream, UpstreamTimeout: differential.UpstreamTimeout},
			Listen:  "127.0.0.1:0", Admin: "127.0.0.1:0", DrainTimeout: time.Second,
			Ready: func(listen, _ net.Addr) { ready <- listen.String() },
		})
	}()
	select {
	case j.signpost = <-ready:
		return nil
	case err := <-j.served:
		j.served <- err
		return err
	}
}

// stop stops what start started, Serve first, so that no goroutine
// outlives the test.
func (j *judged) stop() {
	if !j.started || j.stopped {
		return
	}
	j.stopped = true
	if j.cancel != nil {
		j.cancel()
		<-j.served
	}
	if j.reference != nil {
		j.reference.Close()
	}
	for _, u := range []*differential.Upstream{j.spUp, j.refUp} {
		if u != nil {
			u.Close()
		}
	}
}

// received returns what up received for k, with what it received for no
// case since the last input, which inputs run one at a time make this
// one's, in the order received.
func received(up *differential.Upstream, k differential.Key) []differential.Received {
	all := append(up.Requests(k), up.TakeUnattributed()...)
	slices.SortFunc(all, func(a, b differential.Received) int { return a.Seq - b.Seq })
	return all
}
