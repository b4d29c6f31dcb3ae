// Package mgmtapi is the SigV4-signed management API: it implements the strict server
// interface generated from openapi.yaml's management operations, checks SigV4 (or
// trusts API Gateway's AWS_IAM), strict JSON bodies and the OpenAPI schema before a
// request reaches the domain, and answers errors through httpapi's problem table. It
// is a package of its own so that the resolver (package httpapi) links no OpenAPI
// validator: kin-openapi's JSON Schema compiler alone cost the Resolve function
// ~12 ms of init.
package mgmtapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	middleware "github.com/oapi-codegen/nethttp-middleware"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/logbudget"
	"github.com/linoone/linoone/internal/http/apidocs"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// MaxBodyBytes bounds a management request body. A ShortURLRequest holds at most
// 2048 characters of target_url, which JSON may spell as 12-byte surrogate-pair
// escapes: 2048 × 12 + 17 bytes = 24 KiB and a little, so 32 KiB.
const MaxBodyBytes = 32 << 10

// Clicker reads a short URL and its clicks back from the graph; neither is a visit
// (links.go).
type Clicker interface {
	Link(ctx context.Context, tok shorturl.Token) (shorturl.Link, error)
	Visits(ctx context.Context, tok shorturl.Token, w shorturl.Window) (shorturl.Visits, error)
}

// Authenticator verifies a request's SigV4 signature. Locally the server verifies
// it; on AWS API Gateway's AWS_IAM authorizer already has, and Authenticator is nil.
type Authenticator interface {
	// Verify reads the body (the *sigv4.Verifier checks what needs no body first,
	// and reads few bodies at once whose signature it can check only after the
	// read) and leaves an equivalent r.Body. A body over r.Body's bound fails with
	// sigv4.ErrBodyTooLarge.
	// The response writer's connection paces an unverified body
	// (sigv4.ErrBodyTooSlow).
	VerifyRequest(w http.ResponseWriter, r *http.Request) error
}

// ManagementDeps are what the management API needs.
type ManagementDeps struct {
	Issuer        *shorturl.Issuer
	Clicker       Clicker
	Lister        Lister        // GET /links
	DenyList      DenyList      // nil: no link is reported blocked
	Authenticator Authenticator // nil: requests were authenticated upstream
	Logger        *slog.Logger
	// Caller is the identity of an authenticated request (the SigV4 access key id
	// locally, the IAM principal ARN on AWS); it derives idempotent tokens only.
	Caller func(*http.Request) string
}

type managementServer struct {
	issuer  *shorturl.Issuer
	clicker Clicker
	lister  Lister
	deny    DenyList
	log     *slog.Logger
	docs    func() (apidocs.Page, error) // the HTML reference, rendered once
	persist *httpapi.PersistWatch        // this API's own calls to Persist
}

// observePersist notes, for GET /healthz, err: the outcome of an operation's call into
// the issuer or the clicker. Only an unavailable Persist, a success and "no such
// token" tell of Persist; any other error (an invalid target, a deny-list rule) came
// before a call was made, and says nothing.
func (s managementServer) observePersist(ctx context.Context, err error) {
	if err == nil || errors.Is(err, shorturl.ErrUnavailable) || errors.Is(err, shorturl.ErrNotFound) {
		s.persist.Observe(ctx, err)
	}
}

var _ management.StrictServerInterface = managementServer{}

// NewManagement returns the SigV4-signed management API: POST /shorten,
// GET /links, GET /links/{token}, its /stats and /qr, GET /healthz and the contract,
// GET /openapi.yaml and GET /docs. Every operation but healthz and the contract needs
// a valid signature (403 otherwise, before anything else happens), and every request
// is validated against openapi.yaml before it reaches the domain.
func NewManagement(d ManagementDeps) (http.Handler, error) {
	if d.Issuer == nil || d.Clicker == nil {
		return nil, errors.New("management api needs an issuer and a clicker")
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	spec, err := loadSpec()
	if err != nil {
		return nil, fmt.Errorf("load embedded openapi spec: %w", err)
	}
	spec.Servers = nil
	validate := middleware.OapiRequestValidatorWithOptions(spec, &middleware.Options{
		Options: openapi3filter.Options{
			// The signature was checked before validation (or by API Gateway).
			AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		},
		ErrorHandlerWithOpts: validationProblem,
	})
	param, request, response := httpapi.ErrorHandlers(log, http.StatusNotFound)
	strict := management.NewStrictHandlerWithOptions(managementServer{issuer: d.Issuer, clicker: d.Clicker, lister: d.Lister, deny: d.DenyList, log: log, docs: sync.OnceValues(renderDocs), persist: &httpapi.PersistWatch{}},
		[]management.StrictMiddlewareFunc{withRequestHost, withCaller(d.Caller), withNoSniff},
		management.StrictHTTPServerOptions{RequestErrorHandlerFunc: request, ResponseErrorHandlerFunc: response})
	mux := http.NewServeMux()
	mux.Handle("/", httpapi.Fallback(func(path string) string {
		switch {
		case path == "/shorten", path == "/shorten/batch":
			return "POST"
		case path == "/links", isLinkPath(path):
			// As the contract and the API Gateway routes: a HEAD finds no route (404).
			return "GET"
		}
		return publicAllow(path)
	}))
	// Middlewares run last-to-first: body limit and signature, then media type, the
	// strict JSON scan and schema validation, then the handler.
	mws := []management.MiddlewareFunc{validate, strictJSON, requireJSON,
		authenticate(d.Authenticator, refusals{log, logbudget.New(maxRefusalLinesPerSecond)})}
	return headAsGet(management.HandlerWithOptions(strict, management.StdHTTPServerOptions{BaseRouter: mux, Middlewares: mws, ErrorHandlerFunc: paramProblem(param)})), nil
}

func isHealth(r *http.Request) bool { return r.URL.Path == "/healthz" }

// isLinkPath reports whether path has the shape of a route on a link,
// /links/{token}, /links/{token}/stats or /links/{token}/qr, whatever the token: other paths under
// /links/ name no resource (404), as on API Gateway, which has no route for them.
func isLinkPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/links/")
	tok, sub, _ := strings.Cut(rest, "/")
	return ok && tok != "" && (sub == "" && !strings.HasSuffix(rest, "/") || sub == "stats" || sub == "qr")
}

type requestHostKey struct{}

// withRequestHost hands issuance the Host the request was sent to: a target there
// points back at this API (on AWS its own execute-api domain, which no configuration
// names).
func withRequestHost(f management.StrictHandlerFunc, operationID string) management.StrictHandlerFunc {
	if operationID != "Shorten" && operationID != "ShortenBatch" {
		return f
	}
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
		return f(context.WithValue(ctx, requestHostKey{}, r.Host), w, r, req)
	}
}

// authenticate reads the whole body up front, bounded, so that the signature check
// and the validator see the same bytes and an oversized body is a clear 413, and
// lets only a signed request (a public route aside) go on. A Content-Length over the
// bound is refused before anything is read. The body is bounded before Verify reads
// it, so that Verify, which checks the Authorization header, its key, scope and date
// (and the signature of a declared body hash) before it reads anything, and reads
// few unverified bodies at once, is what reads a signed request's body from the
// connection: an anonymous client reserves no buffer (an auditor's 200 had held
// 1.9 GB when the body was read before the signature was looked at).
func authenticate(a Authenticator, log refusals) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			limit := bodyLimit(r)
			tooLarge := func() { // formatted only for the requests it answers
				httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusRequestEntityTooLarge, httpapi.CodeTooLarge, fmt.Sprintf("request body is larger than %d bytes", limit)))
			}
			if r.ContentLength > int64(limit) {
				tooLarge()
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, int64(limit))
			if a != nil && !isPublic(r) {
				switch err := a.VerifyRequest(w, r); {
				case errors.Is(err, sigv4.ErrBodyTooLarge):
					tooLarge()
					return
				case errors.Is(err, sigv4.ErrBodyTooSlow):
					// Said plainly: a client on a slow link learns why, and the
					// connection, whose read deadline has passed, is not reused.
					w.Header().Set("Connection", "close")
					httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusRequestTimeout, httpapi.CodeInvalidRequest,
						fmt.Sprintf("request body arrived too slowly: a body without X-Amz-Content-Sha256 must arrive within %v, then at %d KiB/s at least",
							sigv4.UnverifiedGrace, sigv4.UnverifiedMinRate>>10)))
					return
				case err != nil:
					log.refuse(w, r, err)
					return
				}
			}
			b, err := io.ReadAll(r.Body)
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				tooLarge()
				return
			case err != nil:
				httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, "request body could not be read"))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
			next.ServeHTTP(w, r)
		})
	}
}

// maxRefusalLinesPerSecond bounds the refusals logged a second: anyone can send
// unsigned requests as fast as they like (an auditor's one client wrote 660 KB of
// them a second).
const maxRefusalLinesPerSecond = 10

// refusals logs the requests whose signature failed, within a budget.
type refusals struct {
	log    *slog.Logger
	budget *logbudget.Budget
}

// refuse answers a request whose signature failed: 403, the failed check in the
// server's log only, never the secret or the signature.
func (l refusals) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if ok, leftOut := l.budget.Take(); ok {
		l.log.WarnContext(r.Context(), "request refused: signature", "method", r.Method, "path", r.URL.Path, "reason", err.Error(),
			"refusals_left_out_before", leftOut)
	}
	// The client learns no more than AWS tells it: which check failed is in the
	// server's log only.
	httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusForbidden, httpapi.CodeForbidden, forbiddenDetail))
}

// forbiddenDetail is every 403's detail, whichever check failed.
const forbiddenDetail = "the request is unsigned or its SigV4 signature (service execute-api, this API's region, " +
	"signed within 5 minutes of the server's clock, body hash included) does not verify"

func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusUnsupportedMediaType, httpapi.CodeMediaType, "request body must be application/json"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// validationProblem turns an OpenAPI validation error into a problem naming the rule.
func validationProblem(ctx context.Context, err error, w http.ResponseWriter, r *http.Request, opts middleware.ErrorHandlerOpts) {
	if opts.MatchedRoute == nil {
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusNotFound, httpapi.CodeNotFound, "no such resource"))
		return
	}
	var reqErr *openapi3filter.RequestError
	if !errors.As(err, &reqErr) {
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, "the request does not match the API"))
		return
	}
	if reqErr.Parameter != nil {
		if reqErr.Parameter.Name == "Idempotency-Key" {
			httpapi.WriteProblem(w, httpapi.ProblemOf(shorturl.ErrIdempotencyKeyInvalid))
			return
		}
		if reqErr.Parameter.In == openapi3.ParameterInPath {
			httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusNotFound, httpapi.CodeNotFound, "no such resource"))
			return
		}
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, "parameter "+reqErr.Parameter.Name+" is invalid"))
		return
	}
	var schemaErr *openapi3.SchemaError
	if !errors.As(err, &schemaErr) {
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, "request body is not a valid JSON object"))
		return
	}
	field := strings.Join(schemaErr.JSONPointer(), ".")
	switch {
	case schemaErr.SchemaField == "additionalProperties",
		schemaErr.SchemaField == "properties" && strings.HasSuffix(schemaErr.Reason, " is unsupported"): // kin-openapi's additionalProperties: false
		exactly := `{"target_url": "…"}`
		if r.URL.Path == "/shorten/batch" {
			exactly = `{"items": [{"target_url": "…"}, …]}`
		}
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeUnknownField, schemaErr.Reason+"; the body is exactly "+exactly))
	case field == "target_url" && schemaErr.SchemaField == "maxLength":
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, string(shorturl.RuleLength), fmt.Sprintf("target_url is longer than %d characters", shorturl.MaxTargetLength)))
	case field == "target_url" && schemaErr.SchemaField == "minLength",
		schemaErr.SchemaField == "required" && strings.Contains(schemaErr.Reason, `"target_url"`):
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, string(shorturl.RuleRequired), "target_url is required"))
	default:
		detail := schemaErr.Reason
		if field != "" {
			detail = field + ": " + detail
		}
		httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest, detail))
	}
}

func (s managementServer) GetHealth(ctx context.Context, _ management.GetHealthRequestObject) (management.GetHealthResponseObject, error) {
	h := management.GetHealth200JSONResponse{Status: management.Ok}
	var degraded []string
	if s.persist.Failing() { // issuance and lookups answer 503 meanwhile
		degraded = append(degraded, httpapi.HealthPersist)
	}
	if s.deny != nil {
		n := s.deny.List().Malformed()
		h.DenyListMalformed = &n
		if n > 0 { // a takedown the operator believes in force may be one of them
			degraded = append(degraded, "deny-list")
		}
	}
	if len(degraded) > 0 {
		h.Status, h.Degraded = management.Degraded, &degraded
	}
	return h, nil
}

func (s managementServer) Shorten(ctx context.Context, req management.ShortenRequestObject) (management.ShortenResponseObject, error) {
	if req.Body == nil {
		return nil, &shorturl.RuleError{Rule: shorturl.RuleRequired, Detail: "target_url is required"}
	}
	if id := idempotent(ctx, req.Params.IdempotencyKey); id != nil {
		return s.shortenIdempotent(ctx, req.Body.TargetURL, id)
	}
	host, _ := ctx.Value(requestHostKey{}).(string)
	u, err := s.issuer.ShortenFor(ctx, req.Body.TargetURL, host)
	s.observePersist(ctx, err)
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "short url issued", "short_url_token", string(u.Token))
	return management.Shorten201JSONResponse{Token: string(u.Token), ShortURL: u.Path}, nil
}
