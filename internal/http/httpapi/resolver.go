package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/linoone/linoone/api/resolver"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// ResolverDeps are what the resolver API needs.
type ResolverDeps struct {
	Resolver *shorturl.Resolver
	Logger   *slog.Logger
	Health   func() Health // optional: what GET /healthz reports besides "ok"
}

// HealthPersist is what GET /healthz, on either API, names as degraded while the
// last call that API's process made to Persist failed as unavailable (no answer in
// time, a 5xx, an answer it cannot read). The next call Persist answers clears it.
const HealthPersist = "persist"

// PersistWatch remembers whether the last call to Persist failed as unavailable, for
// GET /healthz to name HealthPersist. It is safe for concurrent use.
type PersistWatch struct{ failing atomic.Bool }

// Observe notes err, the outcome of a call that reached Persist: unavailable sets the
// flag, any answer clears it. A call whose caller gave up (a visitor who hung up)
// says nothing about Persist.
func (p *PersistWatch) Observe(ctx context.Context, err error) {
	if ctx.Err() == nil {
		p.failing.Store(errors.Is(err, shorturl.ErrUnavailable))
	}
}

// Failing reports whether the last call Observe noted found Persist unavailable.
func (p *PersistWatch) Failing() bool { return p.failing.Load() }

// Health is what a process reports on GET /healthz beyond being alive.
type Health struct {
	Degraded    []string // what works in a reduced way; empty: status ok
	BusLagBytes *int64   // local mode, inline consumer: journal bytes not delivered yet
}

type resolverServer struct {
	r      *shorturl.Resolver
	log    *slog.Logger
	health func() Health
}

var _ resolver.StrictServerInterface = resolverServer{}

type visitKey struct{}

// NewResolver returns the public resolver API: GET /{token} and GET /healthz.
func NewResolver(d ResolverDeps) *ResolverHandler {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	param, request, response := errorHandlers(log, http.StatusNotFound, writeResolverProblem)
	strict := resolver.NewStrictHandlerWithOptions(resolverServer{r: d.Resolver, log: log, health: d.Health},
		[]resolver.StrictMiddlewareFunc{withVisit},
		resolver.StrictHTTPServerOptions{RequestErrorHandlerFunc: request, ResponseErrorHandlerFunc: response})
	mux := http.NewServeMux()
	mux.Handle("/", fallback(func(path string) string {
		if path == "/healthz" || (len(path) > 1 && !strings.Contains(path[1:], "/")) {
			return "GET, HEAD"
		}
		return ""
	}, writeResolverProblem))
	return &ResolverHandler{r: d.Resolver, fail: response,
		generated: resolver.HandlerWithOptions(strict, resolver.StdHTTPServerOptions{BaseRouter: mux, ErrorHandlerFunc: param})}
}

// ResolverHandler is the resolver API: every request, the redirect included, goes
// through the generated router, on Lambda and wherever net/http serves it. serve's
// resolver port (package fastresolver) answers the redirect itself with Redirect and
// WriteError, and hands it every other request.
type ResolverHandler struct {
	r         *shorturl.Resolver
	fail      func(http.ResponseWriter, *http.Request, error)
	generated http.Handler
}

// CacheControlRedirect is the Cache-Control of every 302: a browser may not reuse a
// redirect without asking again, so that each visit is a click.
const CacheControlRedirect = cacheControlRedirect

func (h *ResolverHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.generated.ServeHTTP(w, r)
}

// Redirect is GET /{token} (a click by visit) or, with a nil visit, HEAD /{token}
// (a check, recording nothing): the target the 302 sends the visitor to, with
// Cache-Control CacheControlRedirect, or the error WriteError answers.
func (h *ResolverHandler) Redirect(ctx context.Context, token string, visit *shorturl.Visit) (string, error) {
	var u shorturl.ShortURL
	var err error
	if visit == nil {
		u, err = h.r.Find(ctx, token)
	} else {
		u, err = h.r.Resolve(ctx, token, *visit)
	}
	return u.Target, err
}

// WriteError answers a failed Redirect as the resolver API does.
func (h *ResolverHandler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h.fail(w, r, err)
}

// withVisit hands the click's visitor data from the HTTP request to the use case.
func withVisit(f resolver.StrictHandlerFunc, operationID string) resolver.StrictHandlerFunc {
	if operationID != "Resolve" {
		return f
	}
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
		if r.Method == http.MethodHead {
			return f(ctx, w, r, req) // a check, not a visit: no visitor, no click
		}
		v := shorturl.Visit{IP: clientIP(r.RemoteAddr), UserAgent: r.UserAgent()}
		return f(context.WithValue(ctx, visitKey{}, v), w, r, req)
	}
}

// clientIP is the connection's peer address without the port. Behind API Gateway the
// Lambda adapter sets RemoteAddr to requestContext.http.sourceIp, which has no port.
// Forwarding headers are not trusted: any visitor can write them.
func clientIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

func (s resolverServer) GetHealth(ctx context.Context, _ resolver.GetHealthRequestObject) (resolver.GetHealthResponseObject, error) {
	res := resolver.GetHealth200JSONResponse{Status: resolver.Ok}
	if s.health == nil {
		return res, nil
	}
	h := s.health()
	res.BusLagBytes = h.BusLagBytes
	if len(h.Degraded) > 0 {
		res.Status, res.Degraded = resolver.Degraded, &h.Degraded
	}
	return res, nil
}

func (s resolverServer) Resolve(ctx context.Context, req resolver.ResolveRequestObject) (resolver.ResolveResponseObject, error) {
	var u shorturl.ShortURL
	var err error
	if v, visit := ctx.Value(visitKey{}).(shorturl.Visit); visit {
		u, err = s.r.Resolve(ctx, req.Token, v)
	} else { // HEAD (withVisit): answered as GET, not recorded
		u, err = s.r.Find(ctx, req.Token)
	}
	if err != nil {
		return nil, err
	}
	return redirect(u.Target), nil
}

// redirect is the 302 of GET (and HEAD) /{token}, as the generated
// Resolve302Response writes it but without formatting each header value with
// fmt.Sprint and canonicalizing each key on every redirect.
type redirect string

var cacheControlValue = []string{cacheControlRedirect} // shared: never modified

func (r redirect) VisitResolveResponse(w http.ResponseWriter) error {
	h := w.Header()
	h["Location"] = []string{string(r)}
	h["Cache-Control"] = cacheControlValue
	w.WriteHeader(http.StatusFound)
	return nil
}
