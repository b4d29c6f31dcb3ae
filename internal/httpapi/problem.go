// Package httpapi is the HTTP edge of Linoone: it implements the strict server
// interfaces generated from openapi.yaml for the resolver and the management API,
// converts wire types to domain calls, and maps domain errors to
// application/problem+json answers exactly once.
package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
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
	problemContentType   = "application/problem+json"
	cacheControlRedirect = "private, max-age=0"
)

// problem is the RFC 9457 body; the generated Problem types have the same shape.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

func newProblem(status int, code, detail string) problem {
	return problem{Type: ProblemTypePrefix + code, Title: http.StatusText(status), Status: status, Detail: detail}
}

// writeProblem answers a problem outside the generated handlers (routing, signature
// and validation middleware).
func writeProblem(w http.ResponseWriter, p problem) {
	b, err := json.Marshal(p)
	if err != nil { // a struct of strings and an int always marshals
		b = []byte(`{"type":"` + ProblemTypePrefix + CodeInternal + `","title":"Internal Server Error","status":500,"detail":"problem encoding failed"}`)
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
		log.ErrorContext(r.Context(), "response failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeProblem(w, newProblem(http.StatusInternalServerError, CodeInternal, "the response could not be produced"))
	}
	return param, request, response
}
