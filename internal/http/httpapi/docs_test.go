package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone"
)

// TestDocsAreServedUnsigned: GET /openapi.yaml and GET /docs answer without a
// signature (on AWS their routes are NONE), and nothing else does: the bypass is
// exactly these two paths for GET.
func TestDocsAreServedUnsigned(t *testing.T) {
	h, _ := newManagementAPI(t, newStore(), time.Now)

	res, body := do(t, h, httptest.NewRequest(http.MethodGet, "/openapi.yaml", nil))
	if res.StatusCode != http.StatusOK || string(body) != linoone.OpenAPI {
		t.Fatalf("GET /openapi.yaml: %d, body is the embedded openapi.yaml: %v", res.StatusCode, string(body) == linoone.OpenAPI)
	}
	for k, want := range map[string]string{"Content-Type": "application/yaml", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("GET /openapi.yaml: %s %q, want %q", k, got, want)
		}
	}

	res, body = do(t, h, httptest.NewRequest(http.MethodGet, "/docs?from=bookmark", nil))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /docs: %d %s", res.StatusCode, body)
	}
	for k, want := range map[string]string{"Content-Type": "text/html", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("GET /docs: %s %q, want %q", k, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; ") {
		t.Errorf("GET /docs: Content-Security-Policy %q", csp)
	}
	if !strings.Contains(string(body), `id="operation/shorten"`) {
		t.Error("GET /docs: no shorten operation in the page")
	}

	// Still signed: every other operation, and HEAD on them (HEAD on the docs
	// routes answers as GET: mgmtapi's TestHeadOnPublicRoutes).
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/shorten", strings.NewReader(`{"target_url":"https://example.com/"}`)),
		httptest.NewRequest(http.MethodGet, "/links/7BTadEDkJ8/stats", nil),
		httptest.NewRequest(http.MethodHead, "/links/7BTadEDkJ8", nil),
	} {
		req.Header.Set("Content-Type", "application/json")
		if res, body := do(t, h, req); res.StatusCode != http.StatusForbidden {
			t.Errorf("unsigned %s %s: %d %s, want 403", req.Method, req.URL.Path, res.StatusCode, body)
		}
	}
	// Other methods and paths that only resemble the docs reach no operation.
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/docs", nil),
		httptest.NewRequest(http.MethodDelete, "/openapi.yaml", nil),
		httptest.NewRequest(http.MethodGet, "/docs/", nil),
		httptest.NewRequest(http.MethodGet, "/docs/openapi.yaml", nil),
		httptest.NewRequest(http.MethodGet, "/openapi.json", nil),
	} {
		if res, body := do(t, h, req); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("unsigned %s %s: %d %s, want 404 or 405", req.Method, req.URL.Path, res.StatusCode, body)
		}
	}
}

// TestDocsMethodNotAllowed: a signed request with another method gets 405 and an
// Allow that names what the route serves: GET and HEAD on the public paths, GET on
// the signed ones, as on API Gateway, where a HEAD finds no route.
func TestDocsMethodNotAllowed(t *testing.T) {
	h, _ := newManagementAPI(t, newStore(), time.Now)
	for path, allow := range map[string]string{"/docs": "GET, HEAD", "/openapi.yaml": "GET, HEAD", "/healthz": "GET, HEAD",
		"/links/7BTadEDkJ8": "GET", "/links/7BTadEDkJ8/stats": "GET"} {
		res, body := do(t, h, signed(t, http.MethodPost, path, "application/json", []byte(`{}`), creds, time.Now()))
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != allow {
			t.Errorf("POST %s: %d Allow %q %s", path, res.StatusCode, res.Header.Get("Allow"), body)
		}
		decodeProblem(t, res, body)
	}
}
