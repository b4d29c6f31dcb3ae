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
// the contract, GET /openapi.yaml and its HTML reference GET /docs. On AWS their
// routes have authorization NONE; every other stays AWS_IAM (a HEAD, which has no
// route there, is signed and then finds no route here either).
func isPublic(r *http.Request) bool {
	if isHealth(r) {
		return true
	}
	return r.Method == http.MethodGet && (r.URL.Path == "/openapi.yaml" || r.URL.Path == "/docs")
}

// docsAllow is the Allow header of the documentation paths, "" for other paths.
func docsAllow(path string) string {
	if path == "/openapi.yaml" || path == "/docs" {
		return "GET"
	}
	return ""
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
