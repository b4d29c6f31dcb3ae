package fastresolver

// What fasthttp does not do as net/http's server does, done here as net/http does it.
// Every function in this file mirrors a piece of net/http (Go 1.26's net/http/server.go
// unless said otherwise), and the tests named with it hold it to net/http; FuzzServeRaw
// and FuzzServePipelined send the same bytes to this server and to net/http serving
// the same handler, and compare the answers, for all of them at once. Nothing else in
// the package copies net/http. (readahead_unix.go is no copy: it undoes a cost of
// fasthttp's ReduceMemoryUsage, TestReadAheadOneReadForARequest.)
//
//	http1, http10      the versions conn.readRequest serves (505 past them) and the one
//	                   that may leave out Host: TestOtherHTTPVersionsRefused
//	refuse             conn.serve's plain-text refusal that closes the connection:
//	                   TestRefusesWhatNetHTTPRefuses
//	checkHead          readRequest's and conn.serve's checks of a head (Host, header
//	                   names, folding, Transfer-Encoding, Expect): TestCheckHead,
//	                   TestRefusesWhatNetHTTPRefuses
//	lowerASCII         net/http/internal/ascii.EqualFold against a lower-case name
//	hasToken           hasToken, with which Request.expectsContinue reads Expect
//	                   (both through TestCheckHead's "100-Continue" and "IDENTITY")
//	answerUnreadable   conn.serve's answers to a head it cannot read (431, 400); 413
//	                   and 408 where net/http reads on or closes silently: TestLimits,
//	                   TestSlowClientTimedOut
//	retryAccept        Server.Serve's wait-and-retry after an Accept error that
//	                   passes: TestServesOnAfterRunningOutOfFiles

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http/httpguts"
)

// http1 is the prefix of every protocol version the resolver serves, as net/http.
var http1 = []byte("HTTP/1.")

// http10 is the one version in which a request may leave out Host.
var http10 = []byte("HTTP/1.0")

// refuse answers a request as net/http's server refuses one it could not read, in
// plain text, and closes the connection: what follows such a head on it cannot be
// trusted to be the next request. (ctx.Error resets the whole response, the
// connection's close with it, so the close comes after.)
func refuse(ctx *fasthttp.RequestCtx, code int, msg string) {
	ctx.Error(msg, code)
	ctx.SetConnectionClose()
}

// checkHead is the status (400 or 417) with which net/http's server, and RFC 9112,
// refuse a request head that fasthttp reads, or 0 for one that is fine. Such heads
// are the raw material of request smuggling behind a proxy, and none is a visit:
//   - a header name holding a space, or a line folded onto the one before it (fasthttp
//     takes a name with a space, and refuses every other byte a name may not hold);
//   - a Host that is not a host, or no Host in a version past HTTP/1.0 (fasthttp asks
//     for one only in "HTTP/1.1"; net/http, as RFC 9110 has it, reads "HTTP/1.9" as
//     HTTP/1.1 at least);
//   - a Transfer-Encoding other than chunked: fasthttp reads "identity" as no coding,
//     where RFC 9112 has the server refuse a request whose last coding is not chunked
//     with 400 (net/http answers 501);
//   - an Expect other than 100-continue, which net/http answers with 417 (it reads
//     the first Expect, as fasthttp does).
//
// unreadBody reports a request whose body net/http would not read, so that it closes
// the connection after its answer: one past HTTP/1.0 that announces a body and asks
// for 100-continue (net/http never asks for a body no handler reads; fasthttp asks
// for it, reads it, and would serve what follows as the next request).
func checkHead(h *fasthttp.RequestHeader) (refusal int, unreadBody bool) {
	host := h.Host()
	http11 := !bytes.Equal(h.Protocol(), http10)
	if !httpguts.ValidHostHeader(string(host)) || len(host) == 0 && http11 {
		return http.StatusBadRequest, false
	}
	expectSeen, continues := false, false
	for k, v := range h.All() {
		if bytes.IndexByte(k, ' ') >= 0 {
			return http.StatusBadRequest, false
		}
		if !expectSeen && lowerASCII(k, "expect") {
			expectSeen = true
			switch {
			case hasToken(v, "100-continue"):
				continues = http11
			case len(v) > 0:
				return http.StatusExpectationFailed, false
			}
		}
	}
	chunked := false
	// fasthttp keeps no trace of a Transfer-Encoding of identity, nor, once it has
	// read the body, of chunked, but the line as sent.
	for raw := h.RawHeaders(); len(raw) > 0; {
		line := raw
		if end := bytes.IndexByte(raw, '\n'); end >= 0 {
			line, raw = raw[:end], raw[end+1:]
		} else {
			raw = nil
		}
		if len(line) == 0 {
			continue // an empty line, which fasthttp takes for the head's end
		}
		switch line[0] {
		case ' ', '\t':
			return http.StatusBadRequest, false // obsolete line folding
		case 'T', 't':
			name, value, _ := bytes.Cut(line, colon)
			if lowerASCII(name, "transfer-encoding") {
				if !lowerASCII(bytes.TrimSpace(value), "chunked") {
					return http.StatusBadRequest, false
				}
				chunked = true
			}
		}
	}
	// Once fasthttp has read a chunked body, its Content-Length is the body's size.
	return 0, continues && (chunked || h.ContentLength() > 0)
}

var colon = []byte(":")

// lowerASCII reports whether b is lower in ASCII's cases alone (net/http's
// ascii.EqualFold: no Unicode folding, "ſ" is not "s").
func lowerASCII(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether v, a list separated by commas or spaces, holds token
// (lower case) in ASCII's cases alone: net/http's reading of Expect.
func hasToken(v []byte, token string) bool {
	for sp := 0; sp+len(token) <= len(v); sp++ {
		if sp > 0 && !tokenBoundary(v[sp-1]) {
			continue
		}
		if end := sp + len(token); end != len(v) && !tokenBoundary(v[end]) {
			continue
		}
		if lowerASCII(v[sp:sp+len(token)], token) {
			return true
		}
	}
	return false
}

func tokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }

// answerUnreadable answers a request fasthttp could not read as net/http's server
// does, in plain text: 431 for a header block over the limit, 413 for a body over it
// (which net/http would have read and dropped), 408 for a read that timed out, and
// 400 for anything malformed. The connection is closed after it.
func answerUnreadable(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.As(err, &small):
		ctx.Error("431 Request Header Fields Too Large", http.StatusRequestHeaderFieldsTooLarge)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ctx.Error("413 Request Entity Too Large", http.StatusRequestEntityTooLarge)
	case errors.As(err, &netErr) && netErr.Timeout():
		ctx.Error("408 Request Timeout", http.StatusRequestTimeout)
	default:
		ctx.Error("400 Bad Request", http.StatusBadRequest)
	}
}

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
