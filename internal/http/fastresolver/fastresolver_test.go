package fastresolver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/fastresolver"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

var (
	known = shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8",
		Target: "https://www.example.com/articles/1/some-long-slug?utm_source=short&id=1"}
	rogue = shorturl.ShortURL{Token: "R0gueR0gue", Path: "https://s.example.com/R0gueR0gue", Target: "javascript:alert(1)"}
)

// store is an in-memory shorturl.Store; the token Down000000 finds Persist down.
type store struct{}

func (store) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	switch tok {
	case known.Token:
		return known, nil
	case rogue.Token:
		return rogue, nil
	case "Down000000":
		return shorturl.ShortURL{}, fmt.Errorf("dial tcp: connection refused: %w", shorturl.ErrUnavailable)
	}
	return shorturl.ShortURL{}, fmt.Errorf("token %s: %w", tok, shorturl.ErrNotFound)
}

func (store) Save(context.Context, shorturl.ShortURL) error { return errors.New("read-only") }

// publisher keeps the click facts it was given. With a gate, each Publish first
// says so on entered and waits for the gate to open, as a journal fsync would.
type publisher struct {
	mu      sync.Mutex
	facts   []string
	gate    chan struct{}
	entered chan struct{}
}

func (p *publisher) Publish(ctx context.Context, f clickfact.Fact) error {
	if p.gate != nil {
		p.entered <- struct{}{}
		select {
		case <-p.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.facts = append(p.facts, string(f.Detail))
	return nil
}

func (p *publisher) taken() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.facts...)
}

type noDLQ struct{}

func (noDLQ) DeadLetter(context.Context, clickfact.DeadLetter) error {
	return errors.New("no dead-letter queue in this test")
}

// newAPI is the resolver API over store, its clicks kept by the publisher it returns.
func newAPI(t *testing.T) (*httpapi.ResolverHandler, *publisher) {
	t.Helper()
	pub := &publisher{}
	return apiOver(t, store{}, pub), pub
}

// apiOver is the resolver API over st, its clicks handed to pub.
func apiOver(t testing.TB, st shorturl.Store, pub shorturl.Publisher) *httpapi.ResolverHandler {
	t.Helper()
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: pub, DeadLetters: noDLQ{},
		EventIDs: func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := shorturl.NewResolver(st, rec, shorturl.Screening{})
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res,
		Health: func() httpapi.Health { lag := int64(42); return httpapi.Health{BusLagBytes: &lag} }})
}

// serveNetHTTP and serveFast run the resolver API on a loopback port, on net/http and
// on fasthttp, and return its address and the clicks it records.
func serveNetHTTP(t *testing.T) (string, *publisher) {
	api, pub := newAPI(t)
	ln := listen(t)
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 32 << 10}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), pub
}

func serveFast(t *testing.T, gated bool) (string, *publisher, *fastresolver.Server) {
	api, pub := newAPI(t)
	if gated {
		pub.gate, pub.entered = make(chan struct{}), make(chan struct{}, 1)
	}
	ln := listen(t)
	srv := fastresolver.New(api, fastresolver.Options{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve after Shutdown = %v, want http.ErrServerClosed", err)
		}
	})
	return ln.Addr().String(), pub, srv
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// exchange sends one raw request and reads the answer.
func exchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(raw, " ")
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%q: body: %v", raw, err)
	}
	return res, body
}

// dial connects to addr for a test that writes raw requests on one connection, with
// a 5 s deadline, and returns the reader of the answers. The connection closes when
// the test ends.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, bufio.NewReader(c)
}

// readRedirect reads the next answer from br, to a request of method, and says how
// it is not a 302 to the known short URL's target.
func readRedirect(br *bufio.Reader, method string) error {
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != known.Target {
		return fmt.Errorf("%d to %q, want 302 to %q", res.StatusCode, res.Header.Get("Location"), known.Target)
	}
	return nil
}

// TestAnswersAsNetHTTP: every request, redirect or not, is answered by the fasthttp
// server as by net/http serving the same handler: status, headers (but Date), body,
// and the click recorded, with the same visitor.
func TestAnswersAsNetHTTP(t *testing.T) {
	const ua = "User-Agent: Mozilla/5.0 (test)\r\n"
	const browser = "Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n"
	host := "Host: s.example.com\r\n"
	for _, tc := range []struct {
		name, raw string
		status    int
		clicks    int
	}{
		{"redirect", "GET /" + string(known.Token) + " HTTP/1.1\r\n" + host + ua + "\r\n", 302, 1},
		{"redirect with a query", "GET /" + string(known.Token) + "?utm_source=x&b=%20 HTTP/1.1\r\n" + host + ua + "\r\n", 302, 1},
		{"redirect, HTTP/1.0", "GET /" + string(known.Token) + " HTTP/1.0\r\n" + ua + "\r\n", 302, 1},
		{"redirect, no user agent", "GET /" + string(known.Token) + " HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n", 302, 1},
		{"HEAD is a check", "HEAD /" + string(known.Token) + " HTTP/1.1\r\n" + host + ua + "\r\n", 302, 0},
		{"escaped token", "GET /%37BTadEDkJ8 HTTP/1.1\r\n" + host + ua + "\r\n", 302, 1},
		{"unknown token", "GET /AAAAAAAAAA HTTP/1.1\r\n" + host + ua + "\r\n", 404, 0},
		{"unknown token, browser", "GET /AAAAAAAAAA HTTP/1.1\r\n" + host + ua + browser + "\r\n", 404, 0},
		{"short token, browser", "GET /AAAA HTTP/1.1\r\n" + host + ua + browser + "\r\n", 404, 0},
		{"markup, browser", "GET /%3Cb%3E HTTP/1.1\r\n" + host + ua + browser + "\r\n", 404, 0},
		{"HEAD unknown token, browser", "HEAD /AAAAAAAAAA HTTP/1.1\r\n" + host + ua + browser + "\r\n", 404, 0},
		{"redirect, browser", "GET /" + string(known.Token) + " HTTP/1.1\r\n" + host + ua + browser + "\r\n", 302, 1},
		{"HEAD unknown token", "HEAD /AAAAAAAAAA HTTP/1.1\r\n" + host + ua + "\r\n", 404, 0},
		{"short token", "GET /AAAA HTTP/1.1\r\n" + host + ua + "\r\n", 404, 0},
		{"not base62", "GET /AAAAA_AAAA HTTP/1.1\r\n" + host + ua + "\r\n", 404, 0},
		{"long token", "GET /AAAAAAAAAAA HTTP/1.1\r\n" + host + ua + "\r\n", 404, 0},
		{"two segments", "GET /" + string(known.Token) + "/x HTTP/1.1\r\n" + host + ua + "\r\n", 404, 0},
		{"root", "GET / HTTP/1.1\r\n" + host + "\r\n", 404, 0},
		{"dot segments", "GET /x/../" + string(known.Token) + " HTTP/1.1\r\n" + host + ua + "\r\n", 0, 0},
		{"rogue stored target", "GET /" + string(rogue.Token) + " HTTP/1.1\r\n" + host + ua + "\r\n", 0, 0},
		{"persist down", "GET /Down000000 HTTP/1.1\r\n" + host + ua + "\r\n", 503, 0},
		{"health", "GET /healthz HTTP/1.1\r\n" + host + "\r\n", 200, 0},
		{"HEAD health", "HEAD /healthz HTTP/1.1\r\n" + host + "\r\n", 200, 0},
		{"POST", "POST /" + string(known.Token) + " HTTP/1.1\r\n" + host + "Content-Length: 4\r\n\r\nbody", 405, 0},
		{"DELETE", "DELETE /" + string(known.Token) + " HTTP/1.1\r\n" + host + "\r\n", 405, 0},
		{"POST health", "POST /healthz HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n", 405, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			netAddr, netPub := serveNetHTTP(t)
			fastAddr, fastPub, _ := serveFast(t, false)
			want, wantBody := exchange(t, netAddr, tc.raw)
			got, gotBody := exchange(t, fastAddr, tc.raw)
			if tc.status != 0 && want.StatusCode != tc.status {
				t.Fatalf("net/http answered %d, the test expects %d", want.StatusCode, tc.status)
			}
			if got.StatusCode != want.StatusCode || !bytes.Equal(gotBody, wantBody) {
				t.Fatalf("fasthttp: %d %q; net/http: %d %q", got.StatusCode, gotBody, want.StatusCode, wantBody)
			}
			for _, h := range []http.Header{got.Header, want.Header} {
				if h.Get("Date") == "" {
					t.Errorf("no Date header in %v", h)
				}
				h.Del("Date")
			}
			if !reflect.DeepEqual(got.Header, want.Header) {
				t.Fatalf("headers differ:\nfasthttp %v\nnet/http %v", got.Header, want.Header)
			}
			gotFacts, wantFacts := fastPub.taken(), netPub.taken()
			if len(wantFacts) != tc.clicks {
				t.Fatalf("net/http recorded %d clicks, the test expects %d", len(wantFacts), tc.clicks)
			}
			if !reflect.DeepEqual(visitors(t, gotFacts), visitors(t, wantFacts)) {
				t.Fatalf("clicks differ:\nfasthttp %q\nnet/http %q", gotFacts, wantFacts)
			}
		})
	}
}

// TestLimits: a header block over MaxHeaderBytes is 431, as on net/http; a body over
// MaxBodyBytes is 413 before any handler runs (net/http would read and discard it); a
// malformed request is 400; none of them is a click.
func TestLimits(t *testing.T) {
	addr, pub, _ := serveFast(t, false)
	res, _ := exchange(t, addr, "GET /"+string(known.Token)+" HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 40<<10)+"\r\n\r\n")
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("40 KiB header: %d, want 431", res.StatusCode)
	}
	body := strings.Repeat("a", 100<<10)
	res, _ = exchange(t, addr, fmt.Sprintf("POST /%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", known.Token, len(body), body))
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("100 KiB body: %d, want 413", res.StatusCode)
	}
	res, body2 := exchange(t, addr, "GET /"+string(known.Token)+" HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n")
	if res.StatusCode != http.StatusBadRequest || string(body2) != "400 Bad Request" {
		t.Errorf("malformed request: %d %q, want 400", res.StatusCode, body2)
	}
	if n := len(pub.taken()); n != 0 {
		t.Errorf("%d clicks recorded, want none", n)
	}
}

// TestSlowClientTimedOut: a client that sends part of a head and then nothing is
// answered 408 once ReadTimeout passes and its connection closed, so that slow
// clients cannot hold the resolver's connections; a click is not recorded.
func TestSlowClientTimedOut(t *testing.T) {
	api, pub := newAPI(t)
	ln := listen(t)
	srv := fastresolver.New(api, fastresolver.Options{ReadTimeout: 200 * time.Millisecond})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	c, br := dial(t, ln.Addr().String())
	start := time.Now()
	if _, err := io.WriteString(c, "GET /"+string(known.Token)+" HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("no answer to a head left unfinished: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusRequestTimeout || !res.Close {
		t.Errorf("unfinished head: %d, close %t; want 408 and the connection closed", res.StatusCode, res.Close)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("answered after %v, before the read timeout", waited)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the 408: %v, want the connection closed", err)
	}
	if n := len(pub.taken()); n != 0 {
		t.Errorf("%d clicks recorded, want none", n)
	}
}

// TestRefusesWhatNetHTTPRefuses: requests net/http's server refuses as malformed or
// ambiguous (the raw material of request smuggling behind a proxy) are refused by
// the fasthttp server too, and record no click.
func TestRefusesWhatNetHTTPRefuses(t *testing.T) {
	get := "GET /" + string(known.Token) + " HTTP/1.1\r\n"
	for _, raw := range []string{
		get + "Host: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde",
		get + "Host: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
		get + "Host: x\r\nHost: y\r\n\r\n",
		get + "\r\n",                                        // HTTP/1.1 without Host
		"GET /" + string(known.Token) + " HTTP/1.9\r\n\r\n", // a later HTTP/1.x without Host (found by FuzzServeRaw)
		get + "Host: x\r\nX: a\nb\r\n\r\n",
		get + "Host: x\r\n X-Folded: y\r\n\r\n",
		get + "Host: x\r\nX Spaced: y\r\n\r\n",                 // a name holding a space (found by FuzzServeRaw)
		get + "Host: \"x\r\n\r\n",                              // a Host that is not a host (found by FuzzServeRaw)
		get + "Host: x\r\nTransfer-Encoding: identity\r\n\r\n", // RFC 9112: the last coding must be chunked
		get + "Host: x\r\nExpect: 200-ok\r\n\r\n",              // 417 Expectation Failed
		"GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n",                 // a path net/http cannot parse
		"GET /" + string(known.Token) + "%zz HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		netAddr, netPub := serveNetHTTP(t)
		fastAddr, fastPub, _ := serveFast(t, false)
		want, _ := exchange(t, netAddr, raw)
		got, _ := exchange(t, fastAddr, raw)
		if want.StatusCode < 400 {
			t.Fatalf("%q: net/http answered %d, the test expects a refusal", raw, want.StatusCode)
		}
		if got.StatusCode < 400 || got.StatusCode >= 500 {
			t.Errorf("%q: fasthttp answered %d (net/http %d), want a 4xx refusal", raw, got.StatusCode, want.StatusCode)
		}
		if n, m := len(fastPub.taken()), len(netPub.taken()); n != 0 || m != 0 {
			t.Errorf("%q: %d and %d clicks recorded, want none", raw, n, m)
		}
	}
}

// TestIgnoresEmptyLinesBeforeARequest: empty lines before a request line are ignored,
// as RFC 9112 (section 2.2) asks, before the first request on a connection and
// between two: each request is served and records its click. net/http refuses them
// except after a POST; they are no smuggling material (emptyLinesDropped says why),
// and the fuzz targets hold fasthttp to net/http's answers with them dropped.
func TestIgnoresEmptyLinesBeforeARequest(t *testing.T) {
	addr, pub, _ := serveFast(t, false)
	get := "GET /" + string(known.Token) + " HTTP/1.1\r\nHost: x\r\n\r\n"
	c, br := dial(t, addr)
	if _, err := io.WriteString(c, "\r\n\r\n"+get+"\n\r\n"+get); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := readRedirect(br, http.MethodGet); err != nil {
			t.Errorf("answer %d: %v", i+1, err)
		}
	}
	if n := len(pub.taken()); n != 2 {
		t.Errorf("%d clicks recorded, want 2", n)
	}
}

// slowStore answers a lookup once gate is closed, or fails as the Persist client
// does when its context ends first.
type slowStore struct{ entered, gate chan struct{} }

func (s slowStore) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	s.entered <- struct{}{}
	select {
	case <-s.gate:
	case <-ctx.Done():
		return shorturl.ShortURL{}, fmt.Errorf("lookup: %w: %w", shorturl.ErrUnavailable, ctx.Err())
	}
	if tok == known.Token {
		return known, nil
	}
	return shorturl.ShortURL{}, shorturl.ErrNotFound
}

func (slowStore) Save(context.Context, shorturl.ShortURL) error { return nil }

// TestShutdownAnswersLookupsInFlight: a redirect whose lookup is in flight when the
// server starts shutting down gets its 302, on the fast path and on the requests it
// hands to the net/http handler (an escaped token, an absolute-form target).
func TestShutdownAnswersLookupsInFlight(t *testing.T) {
	for _, target := range []string{"/" + string(known.Token), "/%" + fmt.Sprintf("%02X", known.Token[0]) + string(known.Token[1:]),
		"http://s.example.com/" + string(known.Token)} {
		st := slowStore{entered: make(chan struct{}, 1), gate: make(chan struct{})}
		ln := listen(t)
		srv := fastresolver.New(apiOver(t, st, &publisher{}), fastresolver.Options{})
		go func() { _ = srv.Serve(ln) }()
		got := make(chan int, 1)
		go func() {
			resp, _ := exchange(t, ln.Addr().String(), "GET "+target+" HTTP/1.1\r\nHost: s.example.com\r\n\r\n")
			got <- resp.StatusCode
		}()
		<-st.entered
		shut := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			shut <- srv.Shutdown(ctx)
		}()
		time.Sleep(100 * time.Millisecond) // Shutdown has begun
		close(st.gate)
		if status := <-got; status != http.StatusFound {
			t.Errorf("GET %s in flight at shutdown: %d, want 302", target, status)
		}
		if err := <-shut; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}
}

// TestShutdownAnswersRedirectsInFlight: Shutdown stops taking connections but lets
// a redirect whose click is being journaled finish with its 302; the click is not
// given up because the server is stopping.
func TestShutdownAnswersRedirectsInFlight(t *testing.T) {
	addr, pub, srv := serveFast(t, true)
	type answer struct {
		status int
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noFollow.Get("http://" + addr + "/" + string(known.Token) + "?x=1")
		if err != nil {
			answered <- answer{err: err}
			return
		}
		res.Body.Close()
		answered <- answer{status: res.StatusCode}
	}()
	<-pub.entered
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a redirect was in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("the server still accepts connections while shutting down")
	}
	close(pub.gate)
	if a := <-answered; a.err != nil || a.status != http.StatusFound {
		t.Fatalf("redirect in flight: %d, %v; want 302", a.status, a.err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := len(pub.taken()); n != 1 {
		t.Fatalf("%d clicks recorded, want 1", n)
	}
}

// visitors is the visitor of each click fact: its IP address and user agent (the
// rest is the same for both servers but for the time).
func visitors(t *testing.T, facts []string) []string {
	t.Helper()
	var out []string
	for _, f := range facts {
		if _, err := clickfact.Parse([]byte(f)); err != nil {
			t.Fatalf("fact %q: %v", f, err)
		}
		var env struct {
			GraphSON graphson.Document `json:"graphson"`
		}
		if err := json.Unmarshal([]byte(f), &env); err != nil {
			t.Fatal(err)
		}
		p := env.GraphSON.Edges[0].Properties
		out = append(out, fmt.Sprintf("ip=%v ua=%v", p[clickfact.PropVisitorIP], p[clickfact.PropUserAgent]))
	}
	return out
}

// TestKeepAliveAndPipelining: requests one after another on one connection, and two
// sent in one write, are each answered, in order, and each click recorded once.
func TestKeepAliveAndPipelining(t *testing.T) {
	addr, pub, _ := serveFast(t, false)
	c, br := dial(t, addr)
	get := "GET /" + string(known.Token) + " HTTP/1.1\r\nHost: x\r\nUser-Agent: keep-alive\r\n\r\n"
	head := "HEAD /" + string(known.Token) + " HTTP/1.1\r\nHost: x\r\n\r\n"
	for i, batch := range [][]string{{get}, {get}, {get, head, get}} {
		if _, err := io.WriteString(c, strings.Join(batch, "")); err != nil {
			t.Fatal(err)
		}
		for j, raw := range batch {
			method, _, _ := strings.Cut(raw, " ")
			if err := readRedirect(br, method); err != nil {
				t.Fatalf("write %d, answer %d: %v", i, j, err)
			}
		}
	}
	if n := len(pub.taken()); n != 4 { // every GET, not the HEAD
		t.Fatalf("%d clicks recorded, want 4", n)
	}
}

// serveLogging serves the resolver on fasthttp with log as its logger, and returns
// its address and the function that shuts it down.
func serveLogging(t *testing.T, log *slog.Logger) (string, func()) {
	t.Helper()
	api, _ := newAPI(t)
	ln := listen(t)
	srv := fastresolver.New(api, fastresolver.Options{Logger: log})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	}
}

// TestOtherHTTPVersionsRefused: a request line of a version other than HTTP/1.x is
// answered 505 and closed, as net/http answers it, and is no click; fasthttp alone
// took "HTTP/2.0" and "HTTP/0.9" for HTTP/1.1 and redirected.
func TestOtherHTTPVersionsRefused(t *testing.T) {
	netAddr, netPub := serveNetHTTP(t)
	fastAddr, fastPub, _ := serveFast(t, false)
	for _, proto := range []string{"HTTP/2.0", "HTTP/0.9", "HTTP/3.0"} {
		raw := "GET /" + string(known.Token) + " " + proto + "\r\nHost: s.example.com\r\n\r\n"
		want, wantBody := exchange(t, netAddr, raw)
		got, gotBody := exchange(t, fastAddr, raw)
		if want.StatusCode != http.StatusHTTPVersionNotSupported {
			t.Fatalf("%s: net/http answered %d, the test expects 505", proto, want.StatusCode)
		}
		if got.StatusCode != want.StatusCode || !bytes.Equal(gotBody, wantBody) || !got.Close {
			t.Errorf("%s: fasthttp %d %q (close %v); net/http %d %q", proto, got.StatusCode, gotBody, got.Close, want.StatusCode, wantBody)
		}
	}
	if n, m := len(fastPub.taken()), len(netPub.taken()); n != 0 || m != 0 {
		t.Errorf("clicks recorded: fasthttp %d, net/http %d; want none", n, m)
	}
}

// TestMalformedRequestLogIsBounded: anyone can send malformed requests as fast as
// they like; the log takes a bounded number of lines a second of them.
func TestMalformedRequestLogIsBounded(t *testing.T) {
	var logs syncbuf.Buffer
	addr, stop := serveLogging(t, slog.New(slog.NewJSONHandler(&logs, nil)))
	const sent = 60
	for range sent {
		resp, _ := exchange(t, addr, "GET /"+string(known.Token)+" HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n")
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("malformed request: %d, want 400", resp.StatusCode)
		}
	}
	stop()
	time.Sleep(100 * time.Millisecond) // fasthttp logs after the connection's answer
	lines := strings.Count(logs.String(), "\n")
	if lines == 0 || lines >= sent/2 {
		t.Fatalf("%d log lines for %d malformed requests sent within a few seconds, want a few", lines, sent)
	}
}

// TestMalformedRequestLogsNoHeaders: fasthttp logs a request head it cannot parse
// with the head's bytes; the log keeps the error and leaves out the head, which may
// carry an Authorization header or cookies.
func TestMalformedRequestLogsNoHeaders(t *testing.T) {
	var logs syncbuf.Buffer
	addr, stop := serveLogging(t, slog.New(slog.NewTextHandler(&logs, nil)))
	const signature = "Signature=5ecre7f00d"
	for _, head := range []string{
		"Authorization: AWS4-HMAC-SHA256 Credential=LNKX/20261201/us-east-1/execute-api/aws4_request, SignedHeaders=host, " + signature + "\r\n" +
			"Cookie: session=c00k1e\r\nContent-Length: x\r\n",
		// fasthttp quotes the value of a header it refuses in its error.
		"X-Amz-Security-Token: 5ess10nt0ken\x01\r\n",
	} {
		resp, _ := exchange(t, addr, "GET /"+string(known.Token)+" HTTP/1.1\r\nHost: x\r\n"+head+"\r\n")
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("malformed request: %d, want 400", resp.StatusCode)
		}
	}
	stop()
	// fasthttp logs once the connection's goroutine returns, which may be after the
	// client has its answer.
	out := logs.String()
	for deadline := time.Now().Add(2 * time.Second); !strings.Contains(out, "error when serving") && time.Now().Before(deadline); out = logs.String() {
		time.Sleep(10 * time.Millisecond)
	}
	for deadline := time.Now().Add(2 * time.Second); strings.Count(out, "request head not logged") < 2 && time.Now().Before(deadline); out = logs.String() {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(out, "request head not logged"); n != 2 {
		t.Errorf("%d warnings for the 2 malformed requests in %q", n, out)
	}
	for _, secret := range []string{signature, "c00k1e", "Credential=", "5ess10nt0ken"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q: %s", secret, out)
		}
	}
}

// TestShutdownAtStartEndsServe: serve shuts down at once when its signal came
// during startup. A Serve called after Shutdown returns, and so does one racing
// it: fasthttp's own Shutdown returns at once while Serve has not registered its
// listener, and that Serve would then have served on for good (serve hung in
// servers.Wait, 1 to 3 starts in 100).
func TestShutdownAtStartEndsServe(t *testing.T) {
	api, _ := newAPI(t)
	after := fastresolver.New(api, fastresolver.Options{})
	if err := after.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended := func(what string, served <-chan error) {
		t.Helper()
		select {
		case err := <-served:
			if !errors.Is(err, http.ErrServerClosed) {
				t.Fatalf("%s: Serve = %v, want http.ErrServerClosed", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Serve still running 5 s after Shutdown returned", what)
		}
	}
	ln := listen(t)
	served := make(chan error, 1)
	go func() { served <- after.Serve(ln) }()
	ended("Serve after Shutdown", served)
	for i := range 50 {
		srv := fastresolver.New(api, fastresolver.Options{})
		ln, served := listen(t), make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		ended(fmt.Sprintf("start %d", i), served)
	}
}

// TestPagesForBrowsers: the fast path answers a browser's 404 with the resolver's
// page and any other client with the problem (TestAnswersAsNetHTTP holds the bytes
// equal to net/http's).
func TestPagesForBrowsers(t *testing.T) {
	addr, _, _ := serveFast(t, false)
	for accept, want := range map[string]string{
		"text/html,application/xhtml+xml,*/*;q=0.8": "text/html; charset=utf-8",
		"application/json":                          "application/problem+json",
		"*/*":                                       "application/problem+json",
	} {
		res, body := exchange(t, addr, "GET /AAAAAAAAAA HTTP/1.1\r\nHost: s.example.com\r\nAccept: "+accept+"\r\n\r\n")
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != want || res.Header.Get("Vary") != "Accept" {
			t.Errorf("Accept %s: %d %q Vary %q", accept, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Vary"))
		}
		if isPage := strings.HasPrefix(string(body), "<!doctype html>"); isPage != strings.HasPrefix(want, "text/html") {
			t.Errorf("Accept %s: body %s", accept, body)
		}
		if strings.HasPrefix(want, "text/html") && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("no strict CSP: %q", res.Header.Get("Content-Security-Policy"))
		}
	}
}
