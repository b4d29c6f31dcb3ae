package serve

import (
	"net"

	"golang.org/x/net/netutil"
)

// Shares of the open-file limit that each port's connections may take, so that no
// client, however many connections it holds, leaves serve without the files its
// journal, its DLQ and its Persist connections need (an auditor's 20,000 idle
// connections on one port took every descriptor). Local Persist's child has a file
// table of its own.
const (
	resolverConnShare   = 2 // half of the limit
	managementConnShare = 8
	persistConnShare    = 2
)

// connCap is a port's connection cap: limit/share, 0 (no cap) when the limit is not
// known.
func connCap(limit, share int) int {
	if limit <= 0 {
		return 0
	}
	return max(limit/share, 16)
}

// capConns makes ln accept at most n connections at once (0: no cap); the others
// wait in the kernel's backlog until one closes.
func capConns(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, n)
}
