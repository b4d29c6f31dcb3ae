package mgmtapi

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
)

// MaxBatchBodyBytes bounds a POST /shorten/batch body: 1,000 items of 2,048-character
// ASCII target URLs are about 2.1 MB. It stays under what reaches a Lambda: API
// Gateway takes 10 MB, but a synchronous invocation's event is at most 6 MB.
const MaxBatchBodyBytes = 4 << 20

// bodyLimit is the largest body a request's route accepts.
func bodyLimit(r *http.Request) int {
	if r.URL.Path == "/shorten/batch" {
		return MaxBatchBodyBytes
	}
	return MaxBodyBytes
}

type callerKey struct{}

// withCaller hands issuance the caller's identity (Deps.Caller), which derives
// idempotent tokens and is never stored or logged.
func withCaller(caller func(*http.Request) string) management.StrictMiddlewareFunc {
	return func(f management.StrictHandlerFunc, operationID string) management.StrictHandlerFunc {
		if caller == nil || (operationID != "Shorten" && operationID != "ShortenBatch") {
			return f
		}
		return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
			return f(context.WithValue(ctx, callerKey{}, caller(r)), w, r, req)
		}
	}
}

// idempotent is the derivation input of a request with an Idempotency-Key, or nil
// without one.
func idempotent(ctx context.Context, key *string) *shorturl.Idempotent {
	if key == nil {
		return nil
	}
	caller, _ := ctx.Value(callerKey{}).(string)
	return &shorturl.Idempotent{Caller: caller, Key: *key}
}

// shortenIdempotent is POST /shorten with an Idempotency-Key: 201 when written, 200
// with Idempotent-Replayed when the key already names this target.
func (s managementServer) shortenIdempotent(ctx context.Context, target string, id *shorturl.Idempotent) (management.ShortenResponseObject, error) {
	host, _ := ctx.Value(requestHostKey{}).(string)
	u, replayed, err := s.issuer.ShortenIdempotent(ctx, target, host, *id)
	s.observePersist(ctx, err)
	if err != nil {
		return nil, err
	}
	body := management.ShortURL{Token: string(u.Token), ShortURL: u.Path}
	if replayed {
		s.log.InfoContext(ctx, "short url replayed", "short_url_token", string(u.Token))
		return management.Shorten200JSONResponse{Body: body, Headers: management.Shorten200ResponseHeaders{IdempotentReplayed: "true"}}, nil
	}
	s.log.InfoContext(ctx, "short url issued", "short_url_token", string(u.Token), "idempotent", true)
	return management.Shorten201JSONResponse(body), nil
}

// ShortenBatch is POST /shorten/batch: each item checked on its own, the valid ones
// issued with one Persist query and one ingest.
func (s managementServer) ShortenBatch(ctx context.Context, req management.ShortenBatchRequestObject) (management.ShortenBatchResponseObject, error) {
	if req.Body == nil {
		return nil, shorturl.ErrBatchSize
	}
	items := make([]shorturl.BatchItem, len(req.Body.Items))
	faults := itemFaults(ctx)
	for i, it := range req.Body.Items {
		if err := faults[i]; err != nil {
			items[i].Err = err
			continue
		}
		if len(it.AdditionalProperties) > 0 {
			names := make([]string, 0, len(it.AdditionalProperties))
			for n := range it.AdditionalProperties {
				names = append(names, n)
			}
			slices.Sort(names)
			items[i].Err = &httpapi.UnknownFieldError{Names: names}
			continue
		}
		if it.TargetURL != nil {
			items[i].Target = *it.TargetURL
		}
	}
	host, _ := ctx.Value(requestHostKey{}).(string)
	results, err := s.issuer.ShortenBatch(ctx, items, host, idempotent(ctx, req.Params.IdempotencyKey))
	if err != nil {
		s.observePersist(ctx, err)
		return nil, err
	}
	out := management.ShortenBatch200JSONResponse{Results: make([]management.BatchResult, len(results))}
	var issued, replayed, failed int
	for i, r := range results {
		if r.Err != nil {
			p := httpapi.ProblemOf(r.Err)
			out.Results[i].Problem = &management.Problem{Type: p.Type, Title: p.Title, Status: p.Status, Detail: p.Detail}
			failed++
			continue
		}
		tok, path := string(r.URL.Token), r.URL.Path
		out.Results[i].Token, out.Results[i].ShortURL = &tok, &path
		if r.Replayed {
			out.Results[i].Replayed = &r.Replayed
			replayed++
		} else {
			issued++
		}
	}
	if issued+replayed > 0 { // a batch of invalid items only never reached Persist
		s.observePersist(ctx, nil)
	}
	s.log.InfoContext(ctx, "short url batch", "items", len(results), "issued", issued, "replayed", replayed, "failed", failed)
	return out, nil
}

// paramProblem answers the generated code's parameter errors: a malformed or
// repeated Idempotency-Key is 400 idempotency-key-invalid, a malformed path token what
// next answers (404: no such link), and any other parameter (a stats window's from or
// to, malformed or given twice) 400 invalid-request naming it.
func paramProblem(next func(http.ResponseWriter, *http.Request, error)) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		switch name := paramName(err); name {
		case "Idempotency-Key":
			httpapi.WriteProblem(w, httpapi.ProblemOf(shorturl.ErrIdempotencyKeyInvalid))
		case "token", "":
			next(w, r, err)
		default:
			httpapi.WriteProblem(w, httpapi.NewProblem(http.StatusBadRequest, httpapi.CodeInvalidRequest,
				"query parameter "+name+" is malformed or given more than once"))
		}
	}
}

// paramName is the parameter a generated binding error names ("" for another error).
func paramName(err error) string {
	var many *management.TooManyValuesForParamError
	var format *management.InvalidParamFormatError
	var required *management.RequiredParamError
	switch {
	case errors.As(err, &many):
		return many.ParamName
	case errors.As(err, &format):
		return format.ParamName
	case errors.As(err, &required):
		return required.ParamName
	}
	return ""
}
