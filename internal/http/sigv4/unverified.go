package sigv4

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"
)

// An unverified body is read before anything signed vouches for it, by anyone who
// names the access key id (serve logs it; issue 44 finding 3): ten connections
// trickling a byte every 0.5 s held every slot for the server's whole 15 s read
// timeout, and a signed curl --aws-sigv4 (which declares no body hash) waited 12 s.
// So each remote address holds few slots, and a body must arrive at a minimum rate
// after a short grace, within a short deadline.
const (
	// MaxUnverifiedPerAddress bounds the unverified bodies one remote address (an
	// IPv6 /64) reads at once; its further requests wait for one of its own turns.
	MaxUnverifiedPerAddress = 2
	// UnverifiedGrace is how long an unverified body may take before any byte
	// counts against the minimum rate.
	UnverifiedGrace = time.Second
	// UnverifiedMinRate is the slowest an unverified body may arrive after the
	// grace, in bytes a second (a 4 MiB batch in 16 s).
	UnverifiedMinRate = 256 << 10
	// UnverifiedDeadline bounds the time an unverified body's read takes at all.
	UnverifiedDeadline = 10 * time.Second
)

// ErrBodyTooSlow is matched by the error of an unverified body that did not arrive
// within UnverifiedGrace plus its length at UnverifiedMinRate, or UnverifiedDeadline.
var ErrBodyTooSlow = errors.New("sigv4: unverified body too slow")

// addressGate is a counting semaphore per remote address.
type addressGate struct {
	mu     sync.Mutex
	held   map[string]int
	freed  chan struct{} // closed and replaced whenever a turn is released
	perKey int
}

func newAddressGate(perKey int) *addressGate {
	return &addressGate{held: map[string]int{}, freed: make(chan struct{}), perKey: perKey}
}

// acquire takes one of key's turns, or fails when ctx ends first.
func (g *addressGate) acquire(ctx context.Context, key string) (release func(), err error) {
	for {
		g.mu.Lock()
		if g.held[key] < g.perKey {
			g.held[key]++
			g.mu.Unlock()
			return func() { g.release(key) }, nil
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting to read an unverified body from this address: %w", ctx.Err())
		}
	}
}

func (g *addressGate) release(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[key]--; g.held[key] <= 0 {
		delete(g.held, key)
	}
	close(g.freed)
	g.freed = make(chan struct{})
}

// addressKey is the remote address a request's unverified reads count against: its
// IP, an IPv6 address's /64 (one host commonly holds a whole /64).
func addressKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr // inside Lambda, the bare source IP
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// deadlines paces the read of an unverified body through the connection's read
// deadline: a blocked Read can be ended no other way.
type deadlines struct {
	rc    *http.ResponseController
	start time.Time
}

// set puts the read deadline where read bytes stop being enough: past the grace,
// at the minimum rate, never past UnverifiedDeadline.
func (d deadlines) set(read int64) {
	if d.rc == nil {
		return
	}
	at := d.start.Add(UnverifiedGrace + time.Duration(float64(read)/UnverifiedMinRate*float64(time.Second)))
	if limit := d.start.Add(UnverifiedDeadline); at.After(limit) {
		at = limit
	}
	_ = d.rc.SetReadDeadline(at) // unsupported (a recorder, Lambda): the body is in memory already
}

// clear lifts the deadline once the body is read.
func (d deadlines) clear() {
	if d.rc != nil {
		_ = d.rc.SetReadDeadline(time.Time{})
	}
}

// pacedReader sets the next read deadline before each Read.
type pacedReader struct {
	r    interface{ Read([]byte) (int, error) }
	d    deadlines
	read int64
}

func (p *pacedReader) Read(b []byte) (int, error) {
	p.d.set(p.read)
	n, err := p.r.Read(b)
	p.read += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, fmt.Errorf("%w: %d bytes in %s", ErrBodyTooSlow, p.read, time.Since(p.d.start).Round(time.Millisecond))
	}
	return n, err
}
