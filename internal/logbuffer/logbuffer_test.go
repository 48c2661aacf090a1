package logbuffer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is an output that records what it is given, and can be made to
// block or to fail.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	gate   chan struct{} // if set, each Write waits for it to close
	err    error
}

func (s *sink) Write(p []byte) (int, error) {
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	s.writes++
	return s.buf.Write(p)
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func line(i int) []byte { return fmt.Appendf(nil, `{"msg":"line","n":%04d}`+"\n", i) }

// TestNothingLostAtClose has writers log at once and checks that Close
// leaves every line in the output, whole and once.
func TestNothingLostAtClose(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Delay: time.Hour}) // only batches and Close write
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				w.Write(line(g*each + i))
			}
		})
	}
	wg.Wait()
	w.Close()
	got := strings.Split(strings.TrimSuffix(s.String(), "\n"), "\n")
	if len(got) != writers*each {
		t.Fatalf("%d lines written; want %d", len(got), writers*each)
	}
	seen := map[string]bool{}
	for _, l := range got {
		if seen[l] || !strings.HasPrefix(l, `{"msg":"line","n":`) {
			t.Fatalf("line %q torn or written twice", l)
		}
		seen[l] = true
	}
	if d := w.Dropped(); d != 0 {
		t.Errorf("Dropped() = %d; want 0", d)
	}
}

// TestFullBufferDrops blocks the output: writes still return, the lines
// past the bound are dropped and counted, and those kept are written once
// the output moves again.
func TestFullBufferDrops(t *testing.T) {
	s := &sink{gate: make(chan struct{})}
	w := New(s, Options{Size: 1000, Batch: 1000, Delay: time.Hour})
	n := len(line(0))
	done := make(chan struct{})
	go func() {
		for i := range 100 {
			w.Write(line(i))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Write waited on a blocked output")
	}
	kept := 1000 / n
	if d := w.Dropped(); d != uint64(100-kept) {
		t.Errorf("Dropped() = %d; want %d (lines of %d bytes in 1000)", d, 100-kept, n)
	}
	close(s.gate)
	w.Close()
	if got := strings.Count(s.String(), "\n"); got != kept {
		t.Errorf("%d lines written; want the %d kept", got, kept)
	}
	if !strings.HasPrefix(s.String(), string(line(0))) {
		t.Errorf("the first lines kept are not the first written: %.60q", s.String())
	}
}

// TestWhenWritten checks the two triggers of a write: a line waits no
// longer than the delay, and a full batch is written at once.
func TestWhenWritten(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     Options
		lines int
	}{
		{"one line, after the delay", Options{Delay: 10 * time.Millisecond}, 1},
		{"a full batch, before the delay", Options{Batch: 200, Delay: time.Hour}, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &sink{}
			w := New(s, c.o)
			defer w.Close()
			for i := range c.lines {
				w.Write(line(i))
			}
			for deadline := time.Now().Add(5 * time.Second); strings.Count(s.String(), "\n") < c.lines; {
				if time.Now().After(deadline) {
					t.Fatalf("after 5 s, %d of %d lines written", strings.Count(s.String(), "\n"), c.lines)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// TestBatched checks that lines logged together leave in one write.
func TestBatched(t *testing.T) {
	s := &sink{}
	w := New(s, Options{Delay: time.Second})
	for i := range 100 {
		w.Write(line(i))
	}
	w.Close()
	if s.writes != 1 {
		t.Errorf("100 lines logged at once took %d writes; want 1", s.writes)
	}
}

// TestOutputFails counts the lines of a batch the output refused.
func TestOutputFails(t *testing.T) {
	s := &sink{err: errors.New("disk full")}
	w := New(s, Options{Delay: time.Hour})
	for i := range 7 {
		w.Write(line(i))
	}
	w.Close()
	if d := w.Dropped(); d != 7 {
		t.Errorf("Dropped() = %d; want the 7 lines the output refused", d)
	}
}

// TestAfterClose writes a line logged after Close straight to the output.
func TestAfterClose(t *testing.T) {
	s := &sink{}
	w := New(s, Options{})
	w.Write(line(1))
	w.Close()
	w.Write(line(2))
	if want := string(line(1)) + string(line(2)); s.String() != want {
		t.Errorf("output %q; want %q", s.String(), want)
	}
	if err := w.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestBurstBuffersLetGo checks the memory a burst leaves behind: the
// buffers grow no bigger than Size while the lines come fast; a batch
// written when its delay was up but bigger than keptCap keeps its
// buffer; and once the lines come slowly again (a small batch written
// when its delay was up), neither buffer keeps more than keptCap.
func TestBurstBuffersLetGo(t *testing.T) {
	s := &sink{}
	// The delay is long enough that the steady lines below, written in a
	// loop, fall in one delay even on a loaded machine under -race.
	o := Options{Size: 512 << 10, Batch: 128 << 10, Delay: 250 * time.Millisecond}
	w := New(s, o)
	defer w.Close()
	caps := func() (filling, writing int) {
		w.outMu.Lock()
		defer w.outMu.Unlock()
		w.mu.Lock()
		defer w.mu.Unlock()
		return cap(w.filling), cap(w.writing)
	}
	waitFor := func(lines int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); strings.Count(s.String(), "\n") < lines; {
			if time.Now().After(deadline) {
				t.Fatalf("after 5 s, %d of %d lines written", strings.Count(s.String(), "\n"), lines)
			}
			time.Sleep(time.Millisecond)
		}
	}
	burst := (1 << 20) / len(line(0)) // 1 MiB of lines, several batches
	most := 0
	for i := range burst {
		w.Write(line(i))
		if i%1000 == 0 {
			f, wr := caps()
			most = max(most, f, wr)
		}
	}
	waitFor(burst - int(w.Dropped()))
	f, wr := caps()
	if most = max(most, f, wr); most > o.Size {
		t.Errorf("a buffer grew to %d bytes; want at most Size, %d", most, o.Size)
	}
	if most <= keptCap {
		t.Fatalf("the burst grew no buffer past %d bytes: nothing to let go", keptCap)
	}
	// Lines that keep coming, more than keptCap a delay, keep their buffer.
	written := burst - int(w.Dropped())
	steady := 3 * keptCap / 2 / len(line(0)) // under the Batch of 128 KiB: written when the delay is up
	for i := range steady {
		w.Write(line(i))
	}
	written += steady
	waitFor(written)
	if f, wr := caps(); max(f, wr) <= keptCap {
		t.Errorf("after a slow batch of %d bytes, buffers of %d and %d bytes; want one kept past %d", steady*len(line(0)), f, wr, keptCap)
	}
	w.Write(line(0))
	waitFor(written + 1)
	if f, wr := caps(); f > keptCap || wr > keptCap {
		t.Errorf("after a slow batch, buffers of %d and %d bytes kept; want at most %d", f, wr, keptCap)
	}
}
