// Package fastresolver serves the resolver API on serve's resolver port with
// fasthttp instead of net/http.
//
// Most of a bare net/http redirect's CPU is net/http's own: request and header
// maps, the response's chunk writer, and the background read it starts for every
// request whose handler blocks, as a redirect does while its click is fsync'ed.
// fasthttp answers the same 302 for less, which leaves more of one core for the
// click's fact, its journal write and the inline consumer (docs/performance.md,
// "the resolver's server").
//
// Only the redirect takes the fast path: GET or HEAD of a path that is exactly "/"
// and a well-formed token, optionally with a query. Its answer is the resolver
// API's own (httpapi.ResolverHandler.Redirect), its errors answered by the API's
// error hook. Every other request, and every error, goes to the net/http handler
// through fasthttpadaptor, so whatever is not a redirect is answered by the same
// code as on net/http and on Lambda. TestAnswersAsNetHTTP holds the two servers to
// the same answers.
package fastresolver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/logbudget"
	"github.com/linoone/linoone/internal/http/httpapi"
)

// Options are the server's limits; zero values take net/http-like defaults.
type Options struct {
	// ReadTimeout bounds reading a request, headers and body (default 5 s: the
	// resolver API takes no body, so this is net/http's ReadHeaderTimeout).
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response (default 30 s).
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a kept-alive
	// connection (default 120 s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header block (default 32 KiB); a
	// larger one is answered 431.
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request body (default 64 KiB); no operation of
	// the resolver API reads one, and fasthttp reads it whole before the
	// handler runs. A larger one is answered 413.
	MaxBodyBytes int
	// MaxConns bounds the connections served at once (0: fasthttp's default, 256
	// Ki); a connection past it is answered 503 and closed.
	MaxConns int
	Logger   *slog.Logger // default: discard
}

// Server is the resolver API on fasthttp.
type Server struct {
	srv    *fasthttp.Server
	api    *httpapi.ResolverHandler
	other  fasthttp.RequestHandler // the net/http handler, through the adaptor
	log    *slog.Logger
	closed chan struct{} // closed by Shutdown, under mu

	mu sync.Mutex
	ln net.Listener // the listener Serve took, which Shutdown closes
}

// New returns the server of api.
func New(api *httpapi.ResolverHandler, o Options) *Server {
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 5 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 120 * time.Second
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 32 << 10
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The requests handed on keep running on shutdown, as the fast path's do (handle):
	// fasthttp ends every request's context as soon as the server starts shutting
	// down, which would fail the lookup of an escaped token's redirect in flight.
	detached := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
	})
	s := &Server{api: api, other: fasthttpadaptor.NewFastHTTPHandler(detached), log: o.Logger, closed: make(chan struct{})}
	s.srv = &fasthttp.Server{
		Handler:                      s.handle,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		IdleTimeout:                  o.IdleTimeout,
		ReadBufferSize:               o.MaxHeaderBytes,
		MaxRequestBodySize:           o.MaxBodyBytes,
		NoDefaultServerHeader:        true,
		NoDefaultContentType:         true,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		// Without it a connection keeps its 32 KiB read buffer while it idles
		// between requests, four times net/http's; with it the buffer goes back
		// to a pool. It makes fasthttp read a request in two reads, which
		// readAhead (see Serve) turns back into one.
		ReduceMemoryUsage: true,
		Concurrency:       o.MaxConns,
		Logger:            &logger{log: o.Logger, budget: logbudget.New(maxLogLinesPerSecond)},
		ErrorHandler:      answerUnreadable,
	}
	return s
}

// Handler is the server's request handler (for benchmarks).
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }

// Serve answers requests on ln until Shutdown, and then returns http.ErrServerClosed
// (as net/http's Serve does). Each connection reads a request in one read(2) where
// the platform allows (readAhead).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return http.ErrServerClosed
	default:
	}
	s.ln = ln
	s.mu.Unlock()
	err := s.srv.Serve(readAhead(retryAccept{Listener: ln, log: s.log}))
	select {
	case <-s.closed:
		return http.ErrServerClosed
	default:
	}
	if err == nil {
		return errors.New("fasthttp server stopped")
	}
	return err
}

// Shutdown stops accepting connections, closes idle ones and waits for the requests
// in flight to be answered, or for ctx to end. A Serve called after it returns at
// once; one that had not yet handed its listener to fasthttp (whose Shutdown then
// returns at once and would let it serve on for good) ends when the listener closes.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	ln := s.ln
	s.mu.Unlock()
	err := s.srv.ShutdownWithContext(ctx)
	if ln != nil {
		_ = ln.Close() // closed already, unless Serve had not got to fasthttp yet
	}
	return err
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	// fasthttp serves any version on a request line ("HTTP/2.0", "HTTP/0.9") as
	// HTTP/1.x; net/http answers 505, and no such request is a visit.
	if !bytes.HasPrefix(ctx.Request.Header.Protocol(), http1) {
		refuse(ctx, http.StatusHTTPVersionNotSupported, "505 HTTP Version Not Supported: unsupported protocol version")
		return
	}
	code, unreadBody := checkHead(&ctx.Request.Header)
	if code != 0 {
		refuse(ctx, code, strconv.Itoa(code)+" "+http.StatusText(code))
		return
	}
	if unreadBody {
		// Whatever answers it, the connection closes after: set once the answer is.
		defer ctx.SetConnectionClose()
	}
	token, ok := redirectToken(ctx)
	if !ok {
		// net/http's server refuses a request target it cannot parse with 400, before
		// any handler; the adaptor to the net/http handler would answer 500.
		if _, err := url.ParseRequestURI(string(ctx.RequestURI())); err != nil {
			refuse(ctx, http.StatusBadRequest, "400 Bad Request")
			return
		}
		s.other(ctx)
		return
	}
	var visit *shorturl.Visit
	if !ctx.IsHead() {
		visit = &shorturl.Visit{IP: ctx.RemoteIP().String(), UserAgent: string(ctx.UserAgent())}
	}
	// Not ctx: fasthttp ends every request's context as soon as the server starts
	// shutting down, which would fail the lookup of a redirect in flight; net/http
	// lets requests in flight finish.
	target, err := s.api.Redirect(context.Background(), token, visit)
	if err != nil {
		fasthttpadaptor.NewFastHTTPHandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.api.WriteError(w, r, err)
		})(ctx)
		return
	}
	h := &ctx.Response.Header
	h.Set("Location", target)
	h.Set("Cache-Control", httpapi.CacheControlRedirect)
	ctx.SetStatusCode(http.StatusFound)
}

// redirectToken is the token of a request the fast path answers: GET or HEAD of
// "/" and a well-formed token, with or without a query. Anything else (an escaped
// or longer path, an absolute-form request target, another method) is the net/http
// handler's.
func redirectToken(ctx *fasthttp.RequestCtx) (string, bool) {
	if !ctx.IsGet() && !ctx.IsHead() {
		return "", false
	}
	uri := ctx.RequestURI()
	end := bytes.IndexByte(uri, '?')
	if end < 0 {
		end = len(uri)
	}
	if end != shorturl.TokenLength+1 || uri[0] != '/' {
		return "", false
	}
	token := string(uri[1:end])
	return token, shorturl.IsToken(token)
}

// logger is fasthttp's logger on slog, at warning level: it logs what it could not
// serve (a malformed request, a connection error), at most maxLogLinesPerSecond lines
// a second, since anyone can send malformed requests as fast as they like.
type logger struct {
	log    *slog.Logger
	budget *logbudget.Budget
}

const maxLogLinesPerSecond = 10

// Printf logs fasthttp's message without what the request sent. fasthttp's message
// for a connection it could not serve ("error when serving connection "a"<->"b":
// <error>") may quote an offending header's value in the error ("invalid header
// value \"…\"") and end with the head's first and last bytes ("…, contents: …");
// either may hold an Authorization header, a session token or cookies. So the error
// is cut at its first quote, and the head's bytes are never logged.
func (l *logger) Printf(format string, args ...any) {
	ok, dropped := l.budget.Take()
	if !ok {
		return
	}
	msg := fmt.Sprintf(format, args...)
	cut := len(msg)
	if i := strings.Index(msg, ", contents: "); i >= 0 {
		cut = i
	}
	from := 0 // where the error begins: past the connection's quoted addresses
	if i := strings.Index(msg, "\"<->\""); i >= 0 {
		if j := strings.Index(msg[i:], "\": "); j >= 0 {
			from = i + j + len("\": ")
		}
	}
	if q := strings.IndexByte(msg[from:], '"'); q >= 0 {
		cut = min(cut, from+q)
	}
	if cut < len(msg) {
		msg = strings.TrimRight(msg[:cut], " :.,") + " (request head not logged)"
	}
	if dropped > 0 {
		l.log.Warn(msg, "server", "resolver", "lines_left_out_before", dropped)
		return
	}
	l.log.Warn(msg, "server", "resolver")
}
