package fastresolver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/linoone/linoone/internal/http/fastresolver"
)

// emptyLinesDropped is raw as a net/http server that ignores empty lines before a
// request line would read it. RFC 9112 (section 2.2) asks a server to ignore at least
// one; fasthttp ignores any number, and net/http up to four CR or LF bytes after a
// POST only. That is no smuggling material: a proxy in front either frames the next
// request the same way (nginx and HAProxy skip such lines too) or refuses it, and
// forwards nothing it did not frame. So the fuzz targets hold fasthttp to net/http's
// answers to raw with those bytes dropped, and to nothing more lenient.
//
// Framing stays net/http's: each request and its body are read with http.ReadRequest,
// and only the CR and LF bytes before a request line are dropped. After them, from
// the first request it cannot read on, raw is kept as sent.
func emptyLinesDropped(raw string) string {
	src := strings.NewReader(raw)
	br := bufio.NewReader(src)
	pos := func() int { return len(raw) - src.Len() - br.Buffered() }
	var out strings.Builder
	for {
		for b, err := br.Peek(1); err == nil && (b[0] == '\r' || b[0] == '\n'); b, err = br.Peek(1) {
			_, _ = br.Discard(1)
		}
		start := pos()
		req, err := http.ReadRequest(br)
		if err == nil {
			_, err = io.Copy(io.Discard, req.Body)
		}
		if err != nil {
			return out.String() + raw[start:]
		}
		out.WriteString(raw[start:pos()])
	}
}

// TestEmptyLinesDropped: the fuzz targets' model of a net/http that ignores empty
// lines before a request line drops them where net/http frames a request, and only
// there: a body keeps its own, and from a request net/http cannot read on, nothing
// is dropped.
func TestEmptyLinesDropped(t *testing.T) {
	get := "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
	body := "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n\r\n\r\n"
	bad := "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n\r\n"
	for raw, want := range map[string]string{
		"":                            "",
		get:                           get,
		"\r\n\n" + get + "\r\n" + get: get + get,
		body + "\r\n" + get:           body + get,
		get + bad + "\r\n" + get:      get + bad + "\r\n" + get,
		get + "\r\r\nx":               get + "x",
	} {
		if got := emptyLinesDropped(raw); got != want {
			t.Errorf("emptyLinesDropped(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzServeRaw sends the resolver on fasthttp, and the same handler on net/http, one
// request head of any bytes (it ends at the first empty line, which the target adds)
// through an in-memory connection. fasthttp's answer, if any, is a well-formed HTTP/1.x
// response; no request makes it fail (500) but a lookup Persist cannot answer (503) or
// an HTTP version it does not serve (505); a 302 goes to the stored target. It
// redirects, and records a click, only where net/http does (the raw material of
// request smuggling behind a proxy, TestRefusesWhatNetHTTPRefuses), and as often.
func FuzzServeRaw(f *testing.F) {
	tok := string(known.Token)
	for _, head := range []string{
		"GET /" + tok + " HTTP/1.1\r\nHost: s.example.com\r\nUser-Agent: Mozilla/5.0 (test)",
		"GET /" + tok + "?utm_source=x&b=%20 HTTP/1.1\r\nHost: s.example.com",
		"GET /" + tok + " HTTP/1.0\r\nUser-Agent: \xff\"}]}",
		"HEAD /" + tok + " HTTP/1.1\r\nHost: s.example.com",
		"GET /%37BTadEDkJ8 HTTP/1.1\r\nHost: s.example.com",
		"GET http://s.example.com/" + tok + " HTTP/1.1\r\nHost: s.example.com",
		"GET /x/../" + tok + " HTTP/1.1\r\nHost: x",
		"GET /" + string(rogue.Token) + " HTTP/1.1\r\nHost: x",
		"GET /Down000000 HTTP/1.1\r\nHost: x",
		"GET /healthz HTTP/1.1\r\nHost: x",
		"POST /" + tok + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nHost: y",
		"GET /" + tok + " HTTP/1.1",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\n X-Folded: y",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked",
		"GET /" + tok + "%zz HTTP/1.1\r\nHost: x",
		"GET /" + tok + " HTTP/2.0\r\nHost: x",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nExpect: foo, 100-Continue\r\nExpect: bar",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nExpect: foo",
		"GET /" + tok + " HTTP/1.1\r\nHost: x\r\nExpect:\r\nExpect: foo",
	} {
		f.Add(head)
	}
	fast, slow := serveInMemory(f, true), serveInMemory(f, false)
	f.Fuzz(func(t *testing.T, head string) {
		if strings.Contains(head, "\n\n") || strings.Contains(head, "\n\r\n") || strings.HasSuffix(head, "\n") {
			return // one request head: the target writes its end
		}
		raw := head + "\r\n\r\n"
		method, _, _ := strings.Cut(strings.TrimLeft(head, "\r\n"), " ")
		fastRes, fastClicks := fast.answer(t, raw, method)
		slowRes, slowClicks := slow.answer(t, emptyLinesDropped(raw), method)
		if fastRes != nil {
			switch code := fastRes.StatusCode; {
			case code == http.StatusInternalServerError ||
				code > 500 && code != http.StatusServiceUnavailable && code != http.StatusHTTPVersionNotSupported:
				t.Fatalf("%q: fasthttp answered %d", raw, code)
			case code == http.StatusServiceUnavailable && !strings.Contains(raw, "Down000000"):
				t.Fatalf("%q: fasthttp answered 503 with Persist up", raw)
			case code == http.StatusFound && fastRes.Header.Get("Location") != known.Target:
				t.Fatalf("%q: 302 to %q", raw, fastRes.Header.Get("Location"))
			}
		}
		// fasthttp refuses some heads net/http takes (an empty Host, a Host with a
		// %-escape): a 4xx, checked above. It never takes one net/http refuses.
		if fastClicks > 1 || (fastClicks == 1 && !redirected(fastRes)) ||
			(redirected(fastRes) && (!redirected(slowRes) || fastClicks != slowClicks)) {
			t.Fatalf("%q: fasthttp %s with %d clicks, net/http %s with %d", raw, status(fastRes), fastClicks, status(slowRes), slowClicks)
		}
	})
}

// FuzzServePipelined sends a request head of any bytes, a body of any bytes after it,
// and then, on the same connection, a last request that asks for the connection to
// close: to fasthttp and to net/http. Where the two read a body's end differently
// (Content-Length, chunked framing), what one takes for the body the other reads as
// requests of their own: behind a proxy that frames as net/http does, a request
// smuggled past it. fasthttp must record no more clicks than net/http does.
func FuzzServePipelined(f *testing.F) {
	tok := string(known.Token)
	get := "GET /" + tok + " HTTP/1.1\r\nHost: x"
	for _, seed := range [][2]string{
		{get, ""},
		{get + "\r\nContent-Length: 5", "abcde"},
		{get + "\r\nContent-Length: 36", get + "\r\n\r\n"},
		{get + "\r\nTransfer-Encoding: chunked", "0\r\n\r\n"},
		{get + "\r\nTransfer-Encoding: chunked", "5\r\nabcde\r\n0\r\n\r\n" + get + "\r\n\r\n"},
		{get + "\r\nTransfer-Encoding: chunked", "5;ext=1\r\nabcde\r\n0\r\nTrailer: x\r\n\r\n"},
		{get + "\r\nTransfer-Encoding: chunked", "5\nabcde\n0\n\n" + get + "\r\n\r\n"},
		{get + "\r\nTransfer-Encoding: chunked", " 5\r\nabcde\r\n0\r\n\r\n"},
		{get + "\r\nTransfer-Encoding: chunked", "0x5\r\nabcde\r\n0\r\n\r\n"},
		{get + "\r\nContent-Length: 0\r\nTransfer-Encoding: chunked", "0\r\n\r\n" + get + "\r\n\r\n"},
		{"GET /" + tok + " HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2", "ab"},
		{get + "\r\nTransfer-Encoding: identity", get + "\r\n\r\n"},
		{get + "\r\nX Spaced: y", get + "\r\n\r\n"},
		{"GET /" + tok + " HTTP/1.9", get + "\r\n\r\n"},
		{"GET /" + tok + " HTTP/2.0\r\nHost: x", get + "\r\n\r\n"},
		{"GET /%zz HTTP/1.1\r\nHost: x", get + "\r\n\r\n"},
		{get + "\r\nExpect: 100-continue\r\nContent-Length: 5", "abcde" + get + "\r\n\r\n"},
		{get + "\r\nExpect: x, 100-continue\r\nContent-Length: 5", "abcde" + get + "\r\n\r\n"},
		{get + "\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked", "0\r\n\r\n" + get + "\r\n\r\n"},
	} {
		f.Add(seed[0], seed[1])
	}
	fast, slow := serveInMemory(f, true), serveInMemory(f, false)
	const last = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	f.Fuzz(func(t *testing.T, head, body string) {
		if strings.Contains(head, "\n\n") || strings.Contains(head, "\n\r\n") || strings.HasSuffix(head, "\n") {
			return // one request head: the target writes its end
		}
		raw := head + "\r\n\r\n" + body + last
		fastClicks, fastOut := fast.pipelined(t, raw)
		slowClicks, slowOut := slow.pipelined(t, emptyLinesDropped(raw))
		if fastClicks > slowClicks {
			t.Fatalf("%q: fasthttp recorded %d clicks, net/http %d\nfasthttp answered %q\nnet/http answered %q", raw, fastClicks, slowClicks, fastOut, slowOut)
		}
	})
}

// pipelined sends raw on a connection of its own, reads what the server answers
// until it closes the connection, and returns the clicks recorded and the answers.
func (s *memServer) pipelined(t *testing.T, raw string) (int, []byte) {
	t.Helper()
	c, before := s.dial(t)
	go func() { _, _ = io.WriteString(c, raw) }() // the server may stop reading first
	out, _ := io.ReadAll(c)
	return s.hangUp(t, c, raw, before), out
}

// dial opens a connection of its own, with a deadline, and returns it with the
// number of clicks recorded so far.
func (s *memServer) dial(t *testing.T) (net.Conn, int) {
	t.Helper()
	before := len(s.pub.taken())
	c, err := s.mem.Dial()
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, before
}

// hangUp closes c, once raw was sent on it, and returns the clicks recorded since
// before, once the server is done with the connection.
func (s *memServer) hangUp(t *testing.T, c net.Conn, raw string, before int) int {
	t.Helper()
	_ = c.Close()
	select { // no handler runs on once the server has closed its end
	case <-s.ln.closed:
	case <-time.After(5 * time.Second):
		t.Fatalf("%q: %s still holds the connection 5 s after the client closed it", raw, s.name)
	}
	return len(s.pub.taken()) - before
}

// memServer is the resolver API on an in-memory listener, on fasthttp or net/http.
type memServer struct {
	name string
	mem  *fasthttputil.InmemoryListener
	ln   *closeListener
	pub  *publisher
}

// serveInMemory starts the resolver on fasthttp or on net/http until the test ends.
func serveInMemory(f testing.TB, onFast bool) *memServer {
	s := &memServer{name: "net/http", mem: fasthttputil.NewInmemoryListener(), pub: &publisher{}}
	s.ln = &closeListener{Listener: s.mem, closed: make(chan struct{}, 1)}
	api := apiOver(f, store{}, s.pub)
	const timeout = 100 * time.Millisecond // a head that asks for a body never sent
	var shutdown func(context.Context) error
	served := make(chan error, 1)
	if onFast {
		s.name = "fasthttp"
		srv := fastresolver.New(api, fastresolver.Options{ReadTimeout: timeout, IdleTimeout: timeout})
		go func() { served <- srv.Serve(s.ln) }()
		shutdown = srv.Shutdown
	} else {
		srv := &http.Server{Handler: api, ReadHeaderTimeout: timeout, ReadTimeout: timeout, IdleTimeout: timeout, MaxHeaderBytes: 32 << 10}
		go func() { served <- srv.Serve(s.ln) }()
		shutdown = srv.Shutdown
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(ctx)
		<-served
	})
	return s
}

// answer sends raw on a connection of its own and returns the answer (nil when the
// server closed the connection without one) and the clicks it recorded, once the
// server is done with the connection.
func (s *memServer) answer(t *testing.T, raw, method string) (*http.Response, int) {
	t.Helper()
	c, before := s.dial(t)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var res *http.Response
	if _, err := br.Peek(1); err == nil {
		res, err = http.ReadResponse(br, &http.Request{Method: method})
		for err == nil && res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols {
			// An interim answer: fasthttp sends 100 Continue to any HTTP/1.1 Expect:
			// 100-continue, net/http only when it reads a body. The final one follows.
			res, err = http.ReadResponse(br, &http.Request{Method: method})
		}
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
		}
		if err != nil && s.name == "fasthttp" {
			t.Fatalf("%q: fasthttp's answer is not HTTP: %v", raw, err)
		}
	}
	return res, s.hangUp(t, c, raw, before)
}

// closeListener is a listener whose connections say when the server closed them.
type closeListener struct {
	net.Listener
	closed chan struct{}
}

func (l *closeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &closeConn{Conn: c, closed: l.closed}, nil
}

type closeConn struct {
	net.Conn
	once   sync.Once
	closed chan<- struct{}
}

func (c *closeConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.closed <- struct{}{} })
	return err
}

func redirected(res *http.Response) bool { return res != nil && res.StatusCode == http.StatusFound }

func status(res *http.Response) string {
	if res == nil {
		return "no answer"
	}
	return res.Status
}
