package fastresolver

import (
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// retryAccept makes a listener's Accept wait and try again after an error that
// passes, as net/http's server does: fasthttp retries only an error that says it
// timed out and returns every other, EMFILE included, and serve takes a server that
// returns for a fatal fault. So one client that held enough idle connections to use
// up the process's file descriptors stopped all of serve; now the resolver waits
// until connections close (idle ones within IdleTimeout) and serves on.
type retryAccept struct {
	net.Listener
	log *slog.Logger
}

func (l retryAccept) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil || !passing(err) {
			return c, err
		}
		if delay == 0 {
			delay = 5 * time.Millisecond
			l.log.Warn("resolver cannot accept connections for now; retrying", "err", err)
		} else {
			delay = min(2*delay, time.Second)
		}
		time.Sleep(delay)
	}
}

// passing reports whether an Accept error is one that connections closing elsewhere
// clear: no file descriptor, no buffer or memory for now, a connection the peer
// aborted before it was taken.
func passing(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
