//go:build unix

package fastresolver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// acceptedPair is a loopback connection: the server end as readAhead accepts it, and
// the client end.
func acceptedPair(t *testing.T) (*readAheadConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := readAhead(ln).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ra, ok := c.(*readAheadConn)
	if !ok {
		t.Fatalf("Accept returned a %T, want a *readAheadConn", c)
	}
	_ = ra.SetDeadline(time.Now().Add(5 * time.Second))
	return ra, client.(*net.TCPConn)
}

// fasthttp's wait for a request reads one byte; the read that takes it reads the
// whole request, and the read of the rest is answered from that, not from the socket.
func TestReadAheadOneReadForARequest(t *testing.T) {
	c, client := acceptedPair(t)
	req := "GET /7BTadEDkJ8 HTTP/1.1\r\nHost: s.example.com\r\nUser-Agent: test\r\n\r\n"
	if _, err := io.WriteString(client, req); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1)
	if n, err := c.Read(first); n != 1 || err != nil || first[0] != 'G' {
		t.Fatalf("first Read = %d %q, %v; want 1 \"G\"", n, first[:n], err)
	}
	if c.ahead == nil || c.w-c.r != len(req)-1 {
		t.Fatalf("%d bytes read ahead, want the request's other %d", c.w-c.r, len(req)-1)
	}
	// The socket now holds nothing but the end of the stream: what comes next can only
	// come from the buffer.
	if err := client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	rest := make([]byte, 32<<10)
	n, err := c.Read(rest)
	if err != nil || string(first)+string(rest[:n]) != req {
		t.Fatalf("second Read = %q, %v; want the rest of %q", rest[:n], err, req)
	}
	if c.ahead != nil {
		t.Error("the buffer is still held after it was read")
	}
	if n, err := c.Read(rest); n != 0 || err != io.EOF {
		t.Errorf("third Read = %d, %v; want 0, io.EOF", n, err)
	}
}

// A request longer than the buffer is read whole, in order: the buffer first, then
// the socket.
func TestReadAheadLongRequest(t *testing.T) {
	c, client := acceptedPair(t)
	want := []byte("GET / HTTP/1.1\r\nX-Long: " + strings.Repeat("abcdefgh", 3*aheadSize/8) + "\r\n\r\n")
	go func() {
		_, _ = client.Write(want)
		_ = client.CloseWrite()
	}()
	got := make([]byte, 1, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000) // more than peekMax: read from the buffer, then the socket
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
}

// An idle connection holds no buffer while it waits, and its deadline still ends
// the wait with a timeout.
func TestReadAheadIdleHoldsNoBuffer(t *testing.T) {
	c, _ := acceptedPair(t)
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Read(make([]byte, 1))
	var netErr net.Error
	if n != 0 || !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("Read of an idle connection = %d, %v; want a timeout", n, err)
	}
	if c.ahead != nil {
		t.Error("an idle connection holds a buffer")
	}
}

// A peer that closes is the end of the stream; one that resets is an error of the
// connection, as net.Conn reports it.
func TestReadAheadEndAndReset(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		c, client := acceptedPair(t)
		client.Close()
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("Read = %d, %v; want 0, io.EOF", n, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		c, client := acceptedPair(t)
		_ = client.SetLinger(0) // Close sends a reset
		client.Close()
		n, err := c.Read(make([]byte, 1))
		var opErr *net.OpError
		if n != 0 || !errors.As(err, &opErr) || !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("Read = %d, %v; want a *net.OpError of ECONNRESET", n, err)
		}
		if c.ahead != nil {
			t.Error("a reset connection holds a buffer")
		}
	})
}

// pipeListener accepts net.Pipe connections, which cannot be read through a
// syscall.RawConn.
type pipeListener struct{ conns chan net.Conn }

func (l pipeListener) Accept() (net.Conn, error) { return <-l.conns, nil }
func (pipeListener) Close() error                { return nil }
func (pipeListener) Addr() net.Addr              { return &net.TCPAddr{} }

func TestReadAheadLeavesOtherConnections(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	l := pipeListener{conns: make(chan net.Conn, 1)}
	l.conns <- server
	c, err := readAhead(l).Accept()
	if err != nil || c != server {
		t.Fatalf("Accept = %T, %v; want the pipe itself", c, err)
	}
}
