// Package testport picks loopback ports for servers that tests start in other
// processes, such as `linoone serve` or the Lambda runtime interface emulator.
//
// Such a port is picked, released, and bound by the other process later, sometimes
// twice (a test that restarts serve on the same ports). A port the kernel hands out
// for 127.0.0.1:0 lies in its ephemeral range, from which it also draws the local
// port of every outgoing connection: under `make test`, where packages run at once
// and some open thousands of connections, one of them could take the port in the
// gap, and the server would fail to bind. Free picks below that range instead, where
// only an explicit bind can take a port.
package testport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ports below lowest are left to the services a machine commonly runs; the
// ephemeral range starts at 32768 on Linux by default and at 49152 on macOS and
// Windows, and Free stays below both.
const (
	lowest            = 10000
	defaultEphemeral  = 32768
	ephemeralSettings = "/proc/sys/net/ipv4/ip_local_port_range"
)

// picked holds every port Free returned in this process.
var picked = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Free returns "127.0.0.1:PORT" for a port that nobody listened on when it was
// picked, that lies below the kernel's ephemeral range, and that this process has
// not returned before. Where that range starts below lowest+1000, it returns the
// kernel's choice instead.
func Free(t testing.TB) string {
	t.Helper()
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Addr is Free for code that has no testing.TB: a TestMain that starts one server
// for every test and example of its package.
func Addr() (string, error) {
	hi := ephemeralStart()
	if hi-lowest < 1000 { // a range set unusually low: fall back to the kernel's choice
		return kernelPort()
	}
	return free(func() int { return lowest + rand.IntN(hi-lowest) })
}

// free tries up to 200 of the ports candidate returns.
func free(candidate func() int) (string, error) {
	picked.Lock()
	defer picked.Unlock()
	for range 200 {
		port := candidate()
		if picked.ports[port] {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue // in use
		}
		ln.Close()
		picked.ports[port] = true
		return addr, nil
	}
	return "", errors.New("testport: no free port among 200 tried")
}

// ephemeralStart is the first port of the kernel's ephemeral range.
func ephemeralStart() int {
	b, err := os.ReadFile(ephemeralSettings)
	if err != nil {
		return defaultEphemeral
	}
	var lo, hi int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &lo, &hi); err != nil || lo <= 0 {
		return defaultEphemeral
	}
	return min(lo, defaultEphemeral)
}

func kernelPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testport: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
