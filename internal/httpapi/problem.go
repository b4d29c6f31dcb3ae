// Package httpapi is the HTTP edge of Linoone: it implements the strict server
// interfaces generated from openapi.yaml for the resolver and the management API,
// converts wire types to domain calls, and maps domain errors to
// application/problem+json answers exactly once.
package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/linoone/linoone/internal/shorturl"
)

// ProblemTypePrefix starts every problem type URN.
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

// problem is the RFC 9457 body. Its members are in the order the generated Problem
// types encode them (alphabetical), so every problem either API sends has one shape.
type problem struct {
	Detail string `json:"detail"`
	Status int    `json:"status"`
	Title  string `json:"title"`
	Type   string `json:"type"`
}

func newProblem(status int, code, detail string) problem {
	return problem{Type: ProblemTypePrefix + code, Title: http.StatusText(status), Status: status, Detail: detail}
}

// writeProblem answers a problem outside the generated handlers (routing, signature
// and validation middleware).
func writeProblem(w http.ResponseWriter, p problem) {
	b, err := json.Marshal(p)
	if err != nil { // a struct of strings and an int always marshals
		b = []byte(`{"detail":"problem encoding failed","status":500,"title":"Internal Server Error","type":"` + ProblemTypePrefix + CodeInternal + `"}`)
	}
	h := w.Header()
	h.Set("Content-Type", problemContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(b, '\n'))
}

// fallback answers paths and methods that no operation serves: 405 with Allow when
// the path is known under another method, 404 otherwise.
func fallback(allow func(path string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := allow(r.URL.Path); a != "" {
			w.Header().Set("Allow", a)
			writeProblem(w, newProblem(http.StatusMethodNotAllowed, CodeMethod, r.Method+" is not allowed on this path; allowed: "+a))
			return
		}
		writeProblem(w, newProblem(http.StatusNotFound, CodeNotFound, "no such resource"))
	})
}

// errorHandlers returns the generated code's error hooks answered as problems.
func errorHandlers(log *slog.Logger, paramStatus int) (param, request, response func(http.ResponseWriter, *http.Request, error)) {
	param = func(w http.ResponseWriter, r *http.Request, err error) {
		if paramStatus == http.StatusNotFound {
			writeProblem(w, newProblem(http.StatusNotFound, CodeNotFound, "no such resource"))
			return
		}
		writeProblem(w, newProblem(paramStatus, CodeInvalidRequest, "invalid parameter"))
	}
	request = func(w http.ResponseWriter, r *http.Request, err error) {
		writeProblem(w, newProblem(http.StatusBadRequest, CodeInvalidRequest, "request body is not valid JSON"))
	}
	response = func(w http.ResponseWriter, r *http.Request, err error) {
		p := problemFor(err)
		if p.Status >= http.StatusInternalServerError || errors.Is(err, shorturl.ErrInvalidStored) {
			log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "err", err)
		}
		writeProblem(w, p)
	}
	return param, request, response
}

// problemFor is the one table from the errors of the domain and its adapters to the
// problems clients see. The operations return their errors as they are, and the
// generated code's response error hook answers with problemFor.
func problemFor(err error) problem {
	var rule *shorturl.RuleError
	var blocked *shorturl.BlockedError
	switch {
	case errors.As(err, &rule):
		return newProblem(http.StatusBadRequest, string(rule.Rule), rule.Detail)
	case errors.As(err, &blocked) && errors.Is(err, shorturl.ErrTargetBlocked):
		return newProblem(http.StatusUnprocessableEntity, CodeTargetBlocked,
			"target_url matches a "+blocked.Kind+" rule of the operator's deny list; nothing was written")
	case errors.As(err, &blocked) && errors.Is(err, shorturl.ErrLinkBlocked):
		return newProblem(http.StatusGone, CodeLinkBlocked,
			"this short URL was taken down: its target matches a "+blocked.Kind+" rule of the operator's deny list")
	case errors.Is(err, shorturl.ErrInvalidToken), errors.Is(err, shorturl.ErrNotFound):
		return newProblem(http.StatusNotFound, CodeNotFound, "no short URL has this token")
	case errors.Is(err, shorturl.ErrTokenSpaceBusy):
		return newProblem(http.StatusServiceUnavailable, CodeTokenSpace, "no unused token was found; nothing was written; try again")
	case errors.Is(err, shorturl.ErrUnavailable):
		return newProblem(http.StatusServiceUnavailable, CodeUnavailable, "the short URL store is unavailable; nothing was written; try again")
	}
	return newProblem(http.StatusInternalServerError, CodeInternal, "the response could not be produced")
}
