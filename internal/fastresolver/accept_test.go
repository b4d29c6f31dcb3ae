package fastresolver_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/fastresolver"
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
