// Package httpapi is the HTTP edge of Linoone's resolver: it implements the strict
// server interface generated from openapi.yaml for GET /{token} and GET /healthz, and
// it holds what both APIs answer errors with: the problem+json body and the one table
// from domain errors to problems (problemFor). The management API is package mgmtapi.
package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// ProblemTypePrefix starts every Problem type URN.
const ProblemTypePrefix = "urn:linoone:problem:"

// Problem codes that are not target URL rules.
const (
	CodeInvalidRequest   = "invalid-request"
	CodeUnknownField     = "unknown-field"
	CodeNotFound         = "not-found"
	CodeMethod           = "method-not-allowed"
	CodeForbidden        = "signature-invalid"
	CodeTooLarge         = "body-too-large"
	CodeMediaType        = "unsupported-media-type"
	CodeUnavailable      = "persist-unavailable"
	CodeTokenSpace       = "token-space-busy"
	CodeInternal         = "internal-error"
	CodeTargetBlocked    = "target-url-blocked"
	CodeLinkBlocked      = "link-blocked"
	problemContentType   = "application/problem+json"
	cacheControlRedirect = "private, max-age=0"
)

// Problem is the RFC 9457 body. Its members are in the order the generated Problem
// types encode them (alphabetical), so every Problem either API sends has one shape.
type Problem struct {
	Detail string `json:"detail"`
	Status int    `json:"status"`
	Title  string `json:"title"`
	Type   string `json:"type"`
}

// NewProblem is the problem of status, with type ProblemTypePrefix+code.
func NewProblem(status int, code, detail string) Problem {
	return Problem{Type: ProblemTypePrefix + code, Title: http.StatusText(status), Status: status, Detail: detail}
}

// WriteProblem answers a Problem outside the generated handlers (routing, signature
// and validation middleware).
func WriteProblem(w http.ResponseWriter, p Problem) {
	b, err := json.Marshal(p)
	if err != nil { // a struct of strings and an int always marshals
		b = []byte(`{"detail":"problem encoding failed","status":500,"title":"Internal Server Error","type":"` + ProblemTypePrefix + CodeInternal + `"}`)
	}
	h := w.Header()
	h.Set("Content-Type", problemContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	h.Set("X-Content-Type-Options", "nosniff")
	// No cache may keep an error: a browser that kept a 410 of a blocked link, as
	// Chromium keeps one without a Cache-Control, would not see the 302 come back
	// when the rule is lifted, nor a 404 or 503 turn into a redirect.
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(b, '\n'))
}

// Fallback answers paths and methods that no operation serves: 405 with Allow when
// the path is known under another method, 404 otherwise.
func Fallback(allow func(path string) string) http.Handler {
	return fallback(allow, writeProblem)
}

// problemWriter answers a problem; the resolver's also answers a browser with a page.
type problemWriter func(http.ResponseWriter, *http.Request, Problem)

func writeProblem(w http.ResponseWriter, _ *http.Request, p Problem) { WriteProblem(w, p) }

func fallback(allow func(path string) string, write problemWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := allow(r.URL.Path); a != "" {
			w.Header().Set("Allow", a)
			write(w, r, NewProblem(http.StatusMethodNotAllowed, CodeMethod, r.Method+" is not allowed on this path; allowed: "+a))
			return
		}
		write(w, r, NewProblem(http.StatusNotFound, CodeNotFound, "no such resource"))
	})
}

// ErrorHandlers returns the generated code's error hooks answered as problems.
func ErrorHandlers(log *slog.Logger, paramStatus int) (param, request, response func(http.ResponseWriter, *http.Request, error)) {
	return errorHandlers(log, paramStatus, writeProblem)
}

func errorHandlers(log *slog.Logger, paramStatus int, write problemWriter) (param, request, response func(http.ResponseWriter, *http.Request, error)) {
	param = func(w http.ResponseWriter, r *http.Request, err error) {
		if paramStatus == http.StatusNotFound {
			write(w, r, NewProblem(http.StatusNotFound, CodeNotFound, "no such resource"))
			return
		}
		write(w, r, NewProblem(paramStatus, CodeInvalidRequest, "invalid parameter"))
	}
	request = func(w http.ResponseWriter, r *http.Request, err error) {
		write(w, r, NewProblem(http.StatusBadRequest, CodeInvalidRequest, "request body is not valid JSON"))
	}
	response = func(w http.ResponseWriter, r *http.Request, err error) {
		p := problemFor(err)
		if p.Status >= http.StatusInternalServerError || errors.Is(err, shorturl.ErrInvalidStored) {
			log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "err", err)
		}
		write(w, r, p)
	}
	return param, request, response
}

// problemFor is the one table from the errors of the domain and its adapters to the
// problems clients see. The operations return their errors as they are, and the
// generated code's response error hook answers with problemFor.
func problemFor(err error) Problem {
	var rule *shorturl.RuleError
	var blocked *shorturl.BlockedError
	var window *shorturl.WindowError
	var unknown *UnknownFieldError
	var item *ItemError
	var param *shorturl.ParamError
	switch {
	case errors.As(err, &param):
		return NewProblem(http.StatusBadRequest, param.Rule, param.Detail)
	case errors.As(err, &rule):
		return NewProblem(http.StatusBadRequest, string(rule.Rule), rule.Detail)
	case errors.As(err, &window):
		return NewProblem(http.StatusBadRequest, string(window.Rule), window.Detail)
	case errors.As(err, &unknown):
		return NewProblem(http.StatusBadRequest, CodeUnknownField, unknown.Error())
	case errors.As(err, &item):
		return NewProblem(http.StatusBadRequest, CodeInvalidRequest, item.Detail)
	case errors.Is(err, shorturl.ErrIdempotencyKeyInvalid):
		return NewProblem(http.StatusBadRequest, CodeIdempotencyKeyInvalid, "Idempotency-Key must be 1 to 255 printable ASCII characters (space to ~), given once, without a comma, and without a space at either end or beside another")
	case errors.Is(err, shorturl.ErrIdempotencyKeyReused): // before ErrNotFound: it may wrap ErrInvalidStored
		return NewProblem(http.StatusUnprocessableEntity, CodeIdempotencyKeyReused,
			"this Idempotency-Key already names a short URL with another target_url; nothing was written")
	case errors.Is(err, shorturl.ErrIdempotencyUnavailable):
		return NewProblem(http.StatusServiceUnavailable, CodeIdempotencyUnavailable,
			"idempotent issuance is not configured on this deployment; nothing was written; retry without Idempotency-Key or ask the operator")
	case errors.Is(err, shorturl.ErrBatchSize):
		return NewProblem(http.StatusBadRequest, CodeInvalidRequest, err.Error())
	case errors.As(err, &blocked) && errors.Is(err, shorturl.ErrTargetBlocked):
		return NewProblem(http.StatusUnprocessableEntity, CodeTargetBlocked,
			"target_url matches a "+blocked.Kind+" rule of the operator's deny list; nothing was written")
	case errors.As(err, &blocked) && errors.Is(err, shorturl.ErrLinkBlocked):
		return NewProblem(http.StatusGone, CodeLinkBlocked,
			"this short URL was taken down: its target matches a "+blocked.Kind+" rule of the operator's deny list")
	case errors.Is(err, shorturl.ErrInvalidToken), errors.Is(err, shorturl.ErrNotFound):
		return NewProblem(http.StatusNotFound, CodeNotFound, "no short URL has this token")
	case errors.Is(err, shorturl.ErrTokenSpaceBusy):
		return NewProblem(http.StatusServiceUnavailable, CodeTokenSpace, "no unused token was found; nothing was written; try again")
	case errors.Is(err, shorturl.ErrUnavailable):
		// Not "nothing was written": a write whose answer timed out or was lost may
		// have been stored, issued to no one (a keyed retry returns it; docs/api.md).
		return NewProblem(http.StatusServiceUnavailable, CodeUnavailable, "the short URL store is unavailable or did not answer in time; try again")
	}
	return NewProblem(http.StatusInternalServerError, CodeInternal, "the response could not be produced")
}
