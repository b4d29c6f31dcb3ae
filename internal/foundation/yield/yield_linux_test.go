package yield

import (
	"net"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestNowLetsTheNetworkIn runs on one P: a goroutine waits to read a connection,
// a byte arrives, and the test goroutine, which never blocks, yields once. The
// reader should have run by the time Now returns. With runtime.Gosched in Now's
// place it runs only once sysmon polls the network (up to 10 ms later) or a thread
// already waiting in the poller happens to wake it: 0–1 rounds of 200 when this
// test was written, against 190–192 for Now. Now has no guarantee either (such a
// thread may hold the reader's wake-up while Now polls), so the test asks for half.
func TestNowLetsTheNetworkIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	var read atomic.Int64
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := server.Read(b); err != nil {
				return
			}
			read.Add(1)
		}
	}()
	const rounds = 200
	inTime := 0
	for i := range int64(rounds) {
		if _, err := client.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		Now()
		if read.Load() == i+1 {
			inTime++
		}
		for read.Load() != i+1 { // the next round starts with the reader parked
			runtime.Gosched()
		}
	}
	if inTime < rounds/2 {
		t.Errorf("the reader had run when Now returned in %d of %d rounds, want at least %d", inTime, rounds, rounds/2)
	}
}
