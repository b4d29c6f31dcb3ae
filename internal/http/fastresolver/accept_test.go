package fastresolver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/http/fastresolver"
)

// exhausted is a listener out of file descriptors for its first failures Accepts.
type exhausted struct {
	net.Listener
	failures atomic.Int32
}

func (l *exhausted) Accept() (net.Conn, error) {
	if l.failures.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestServesOnAfterRunningOutOfFiles: an Accept that fails for want of a file
// descriptor (EMFILE, as when clients hold every one the process may open) is tried
// again, and the server serves on; fasthttp alone returned it from Serve, which
// stopped all of serve.
func TestServesOnAfterRunningOutOfFiles(t *testing.T) {
	api, _ := newAPI(t)
	ln := &exhausted{Listener: listen(t)}
	ln.failures.Store(5)
	srv := fastresolver.New(api, fastresolver.Options{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	resp, _ := exchange(t, ln.Addr().String(), "GET /"+string(known.Token)+" HTTP/1.1\r\nHost: s.example.com\r\n\r\n")
	if resp.StatusCode != http.StatusFound {
		t.Errorf("after running out of files: %d, want 302", resp.StatusCode)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned: %v", err)
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Errorf("Serve after Shutdown: %v", err)
	}
}

// TestConnectionsCapped: past MaxConns connections at once, a new one is answered
// 503 and closed, and the ones held are served on; serve sets the cap under its
// open-file limit, so that no client can take every descriptor it has.
func TestConnectionsCapped(t *testing.T) {
	api, _ := newAPI(t)
	ln := listen(t)
	srv := fastresolver.New(api, fastresolver.Options{MaxConns: 2})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	req := "GET /" + string(known.Token) + " HTTP/1.1\r\nHost: s.example.com\r\n\r\n"
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		held = append(held, c)
		if res := roundTrip(t, c, req); res.StatusCode != http.StatusFound {
			t.Fatalf("connection %d: %d, want 302", len(held), res.StatusCode)
		}
	}
	if res, _ := exchange(t, ln.Addr().String(), req); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a connection past the cap: %d, want 503", res.StatusCode)
	}
	if res := roundTrip(t, held[0], req); res.StatusCode != http.StatusFound {
		t.Errorf("a connection held: %d, want 302", res.StatusCode)
	}
}

// roundTrip sends raw on c, a kept-alive connection, and reads the answer.
func roundTrip(t *testing.T, c net.Conn, raw string) *http.Response {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}
