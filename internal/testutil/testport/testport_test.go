package testport

import (
	"net"
	"strconv"
	"testing"
)

// TestFreeIsBelowTheEphemeralRangeAndBindable: every address Free returns can be
// listened on, lies below the ports the kernel gives outgoing connections, and is
// never returned twice.
func TestFreeIsBelowTheEphemeralRangeAndBindable(t *testing.T) {
	start := ephemeralStart()
	seen := map[string]bool{}
	for range 50 {
		addr := Free(t)
		if seen[addr] {
			t.Fatalf("%s returned twice", addr)
		}
		seen[addr] = true
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if port < lowest || port >= start {
			t.Errorf("port %d outside %d-%d", port, lowest, start-1)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		ln.Close()
	}
}

// TestFreeSkipsPortsInUseOrGiven: a port something listens on, or one returned
// before, is passed over for the next candidate.
func TestFreeSkipsPortsInUseOrGiven(t *testing.T) {
	ln, err := net.Listen("tcp", Free(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	inUse := ln.Addr().(*net.TCPAddr).Port
	picked.Lock()
	delete(picked.ports, inUse) // only the listener keeps it now
	picked.Unlock()
	given := Free(t)
	_, p, _ := net.SplitHostPort(given)
	givenPort, _ := strconv.Atoi(p)
	want := Free(t)
	_, p, _ = net.SplitHostPort(want)
	wantPort, _ := strconv.Atoi(p)
	picked.Lock()
	delete(picked.ports, wantPort)
	picked.Unlock()

	candidates := []int{inUse, givenPort, wantPort}
	got, err := free(func() int { c := candidates[0]; candidates = candidates[1:]; return c })
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("free returned %s, want %s (after %d, in use, and %d, given)", got, want, inUse, givenPort)
	}
}
