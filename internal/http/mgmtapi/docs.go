package mgmtapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/linoone/linoone"
	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/http/apidocs"
)

// isPublic reports the requests served without a signature: the liveness probe and
// the contract, GET /openapi.yaml and its HTML reference GET /docs (HEAD of them is
// a GET by then: headAsGet). On AWS their routes have authorization NONE; every
// other stays AWS_IAM.
func isPublic(r *http.Request) bool {
	if isHealth(r) {
		return true
	}
	return r.Method == http.MethodGet && isPublicPath(r.URL.Path)
}

func isPublicPath(path string) bool {
	return path == "/openapi.yaml" || path == "/docs" || path == "/healthz"
}

// publicAllow is the Allow header of the public paths, "" for other paths.
func publicAllow(path string) string {
	if isPublicPath(path) {
		return "GET, HEAD"
	}
	return ""
}

// headAsGet answers HEAD on a public path as GET (RFC 9110 9.3.2): a probe or a
// link checker asking whether /docs is there gets what GET gets, without the body.
// The operations are GET in the contract and its validator, so the request goes on
// as a GET; the server still knows the client asked HEAD and sends no body.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && isPublicPath(r.URL.Path) {
			get := r.Clone(r.Context())
			get.Method = http.MethodGet
			next.ServeHTTP(w, get)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withNoSniff marks the documentation answers nosniff, as every error answer is.
func withNoSniff(f management.StrictHandlerFunc, operationID string) management.StrictHandlerFunc {
	if operationID != "GetOpenAPI" && operationID != "GetDocs" {
		return f
	}
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		return f(ctx, w, r, req)
	}
}

func (s managementServer) GetOpenAPI(context.Context, management.GetOpenAPIRequestObject) (management.GetOpenAPIResponseObject, error) {
	return management.GetOpenAPI200ApplicationYamlResponse{Body: strings.NewReader(linoone.OpenAPI), ContentLength: int64(len(linoone.OpenAPI))}, nil
}

// GetDocs answers the reference rendered from the embedded openapi.yaml, rendered on
// the first request (the Issue Lambda's init does not pay for it).
func (s managementServer) GetDocs(context.Context, management.GetDocsRequestObject) (management.GetDocsResponseObject, error) {
	page, err := s.docs()
	if err != nil {
		return nil, fmt.Errorf("render api reference: %w", err)
	}
	return management.GetDocs200TextHTMLResponse{
		Body:          bytes.NewReader(page.HTML),
		ContentLength: int64(len(page.HTML)),
		Headers:       management.GetDocs200ResponseHeaders{ContentSecurityPolicy: page.CSP},
	}, nil
}

// renderDocs renders the reference of the embedded openapi.yaml.
func renderDocs() (apidocs.Page, error) { return apidocs.Render([]byte(linoone.OpenAPI)) }
