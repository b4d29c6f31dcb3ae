//go:build unix

package fastresolver

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
)

// readAhead makes the connections ln accepts answer fasthttp's wait for the next
// request with one read(2) instead of two.
//
// With ReduceMemoryUsage a connection between requests holds no read buffer:
// fasthttp waits for the next request by reading one byte, and only then takes a
// buffer and reads the rest, so every request costs two reads. On a loaded server
// the whole request has usually arrived by then. A readAheadConn answers that
// one-byte read with a read of what has arrived into a pooled buffer, and the read
// of the rest from that buffer. It takes the buffer only once the socket is
// readable, inside the poller's callback, so an idle connection still holds none.
func readAhead(ln net.Listener) net.Listener { return readAheadListener{ln} }

type readAheadListener struct{ net.Listener }

// Accept wraps the connections that can be read through a syscall.RawConn; any
// other is returned as it is.
func (l readAheadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c, nil
	}
	ra := &readAheadConn{Conn: c, rc: rc}
	ra.fill = ra.readArrived
	return ra, nil
}

// peekMax is the longest read a readAheadConn answers from its own buffer: fasthttp's
// wait for a request reads one byte; its buffered reader asks for far more.
const peekMax = 16

// aheadSize is the pooled buffer's size: a whole redirect request, headers and all,
// in the common case; the rest of a longer one is read into fasthttp's own buffer.
const aheadSize = 4 << 10

var aheadPool = sync.Pool{New: func() any { b := make([]byte, aheadSize); return &b }}

// readAheadConn is a connection whose short reads read ahead. Like any net.Conn
// under fasthttp, it is read by one goroutine at a time.
type readAheadConn struct {
	net.Conn
	rc   syscall.RawConn
	fill func(fd uintptr) bool // readArrived, bound once

	ahead *[]byte // pooled: bytes read and not yet returned, ahead[r:w]; nil when none
	r, w  int
	err   error // what the last fill's read(2) failed with
}

func (c *readAheadConn) Read(p []byte) (int, error) {
	if c.ahead != nil {
		n := copy(p, (*c.ahead)[c.r:c.w])
		if c.r += n; c.r == c.w {
			c.release()
		}
		return n, nil
	}
	if len(p) == 0 || len(p) > peekMax {
		return c.Conn.Read(p)
	}
	if err := c.rc.Read(c.fill); err != nil {
		return 0, err // a deadline or a closed connection, as net.Conn reports them
	}
	if c.err != nil {
		err := c.err
		c.err = nil
		return 0, &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if c.ahead == nil {
		return 0, io.EOF
	}
	return c.Read(p)
}

// readArrived is the poller's callback: it reads what has arrived into a pooled
// buffer, or gives the buffer back and asks the poller to wait for the socket.
func (c *readAheadConn) readArrived(fd uintptr) bool {
	b := aheadPool.Get().(*[]byte)
	for {
		n, err := syscall.Read(int(fd), *b)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			aheadPool.Put(b)
			return false
		case err != nil:
			aheadPool.Put(b)
			c.err = err
		case n == 0:
			aheadPool.Put(b) // the peer closed: Read reports io.EOF
		default:
			c.ahead, c.r, c.w = b, 0, n
		}
		return true
	}
}

// release gives the buffer back once it is read. A connection closed with bytes
// still ahead leaves its buffer to the garbage collector: Close may run on another
// goroutine (a shutdown closing idle connections) than the one reading.
func (c *readAheadConn) release() {
	aheadPool.Put(c.ahead)
	c.ahead, c.r, c.w = nil, 0, 0
}
