package rawconn

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection, the first read
// and written with raw system calls.
func tcpPair(t *testing.T) (net.Conn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	nb := Nonblocking(c)
	if _, ok := nb.(*nonblockingConn); !ok {
		t.Fatalf("Nonblocking(%T) = %T, want a *nonblockingConn", c, nb)
	}
	t.Cleanup(func() { nb.Close(); peer.Close() })
	return nb, peer.(*net.TCPConn)
}

// TestNonblockingCarriesEveryByte sends more than the socket buffers hold
// each way, so that writes wait for room and reads for data.
func TestNonblockingCarriesEveryByte(t *testing.T) {
	c, peer := tcpPair(t)
	out := make([]byte, 8<<20)
	for i := range out {
		out[i] = byte(rand.IntN(256))
	}
	echoed := make(chan error, 1)
	go func() { // the peer sends back what it reads
		_, err := io.Copy(peer, peer)
		echoed <- err
	}()
	wrote := make(chan error, 1)
	go func() {
		n, err := c.Write(out)
		if err == nil && n != len(out) {
			err = io.ErrShortWrite
		}
		wrote <- err
	}()
	back := make([]byte, len(out))
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("writing: %v", err)
	}
	if !bytes.Equal(back, out) {
		t.Fatal("the bytes read back differ from those written")
	}
	peer.CloseWrite()
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("Read after the peer's FIN = %d, %v; want 0, io.EOF", n, err)
	}
	c.Close()
	<-echoed
}

// TestNonblockingErrors checks that failures read as net.Conn's own do:
// deadlines as timeouts, a reset as ECONNRESET, a closed socket as
// net.ErrClosed.
func TestNonblockingErrors(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		c, _ := tcpPair(t)
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := c.Read(make([]byte, 8))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read past the deadline: %v; want a timeout", err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		c, peer := tcpPair(t)
		peer.SetLinger(0)
		peer.Close() // sends RST
		time.Sleep(20 * time.Millisecond)
		_, err := c.Read(make([]byte, 8))
		var op *net.OpError
		if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
			t.Errorf("Read after a reset: %#v; want a read *net.OpError wrapping ECONNRESET", err)
		}
		var werr error
		for range 10 { // the first write after a reset may still succeed
			if _, werr = c.Write([]byte("x")); werr != nil {
				break
			}
		}
		if !errors.Is(werr, syscall.EPIPE) && !errors.Is(werr, syscall.ECONNRESET) {
			t.Errorf("Write after a reset: %v; want EPIPE or ECONNRESET", werr)
		}
	})
	t.Run("closed", func(t *testing.T) {
		c, _ := tcpPair(t)
		c.Close()
		if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after Close: %v; want net.ErrClosed", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after Close: %v; want net.ErrClosed", err)
		}
	})
	t.Run("closed while reading", func(t *testing.T) {
		c, _ := tcpPair(t)
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		c.Close()
		select {
		case err := <-done:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("Read cut by Close: %v; want net.ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a Read waiting on the poller outlived Close")
		}
	})
}

// TestNonblockingLeavesOtherConns returns a connection with no socket as it
// is.
func TestNonblockingLeavesOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := Nonblocking(a); got != a {
		t.Errorf("Nonblocking(net.Pipe end) = %T, want it unchanged", got)
	}
}
