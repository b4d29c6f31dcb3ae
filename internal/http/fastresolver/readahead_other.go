//go:build !unix

package fastresolver

import "net"

// readAhead is the listener itself where sockets cannot be read through a
// syscall.RawConn the same way (see readahead_unix.go).
func readAhead(ln net.Listener) net.Listener { return ln }
