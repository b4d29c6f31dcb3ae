package serve

import (
	"net"
	"runtime"
	"testing"
	"time"
)

// TestConnectionCaps: serve caps each port's connections under the open-file limit
// (on Unix, where there is one), and a capped listener makes a connection past the
// cap wait for one to close.
func TestConnectionCaps(t *testing.T) {
	limit := openFileLimit()
	if runtime.GOOS != "windows" && limit <= 0 {
		t.Fatalf("open-file limit %d on %s", limit, runtime.GOOS)
	}
	if got := connCap(20_000, resolverConnShare) + connCap(20_000, managementConnShare); got >= 20_000 {
		t.Errorf("the resolver's and the management port's caps add up to %d of 20,000 files", got)
	}
	if connCap(0, resolverConnShare) != 0 || connCap(10, managementConnShare) != 16 {
		t.Errorf("caps: %d with no known limit (want 0), %d with a tiny one (want 16)", connCap(0, resolverConnShare), connCap(10, managementConnShare))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	capped := capConns(ln, 1)
	defer capped.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := capped.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first := <-accepted
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted past a cap of 1")
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not accepted once the first closed")
	}
}
