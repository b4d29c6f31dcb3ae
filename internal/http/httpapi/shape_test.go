package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestEveryErrorOneShape: every error answer of both APIs, whichever layer gives it
// (router, fallback, signature check, body checks, validation, the operations), is
// a problem with the same headers.
func TestEveryErrorOneShape(t *testing.T) {
	resolver, _ := newResolverAPI(t, newStore())
	management, _ := newManagementAPI(t, newStore(), time.Now)
	now := time.Now()
	tests := []struct {
		name string
		h    http.Handler
		req  *http.Request
	}{
		{"resolver unknown token", resolver, httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil)},
		{"resolver unknown token HEAD", resolver, httptest.NewRequest(http.MethodHead, "/7BTadEDkJ8", nil)},
		{"resolver bad token", resolver, httptest.NewRequest(http.MethodGet, "/nope", nil)},
		{"resolver root", resolver, httptest.NewRequest(http.MethodGet, "/", nil)},
		{"resolver deep path", resolver, httptest.NewRequest(http.MethodGet, "/a/b/c", nil)},
		{"resolver method", resolver, httptest.NewRequest(http.MethodPost, "/7BTadEDkJ8", nil)},
		{"resolver healthz method", resolver, httptest.NewRequest(http.MethodPost, "/healthz", nil)},
		{"management unsigned", management, httptest.NewRequest(http.MethodPost, "/shorten", strings.NewReader(`{}`))},
		{"management root", management, signed(t, http.MethodGet, "/", "", nil, creds, now)},
		{"management unknown path", management, signed(t, http.MethodGet, "/nothing/here", "", nil, creds, now)},
		{"management method", management, signed(t, http.MethodGet, "/shorten", "", nil, creds, now)},
		{"management media type", management, signed(t, http.MethodPost, "/shorten", "text/plain", []byte(`x`), creds, now)},
		{"management bad body", management, signed(t, http.MethodPost, "/shorten", "application/json", []byte(`{"x":1}`), creds, now)},
		{"management bad target", management, signed(t, http.MethodPost, "/shorten", "application/json", []byte(`{"target_url":"ftp://x"}`), creds, now)},
		{"management unknown stats", management, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats", "", nil, creds, now)},
		{"management bad stats token", management, signed(t, http.MethodGet, "/links/nope/stats", "", nil, creds, now)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := do(t, tt.h, tt.req)
			if res.StatusCode < 400 {
				t.Fatalf("status %d", res.StatusCode)
			}
			for k, want := range map[string]string{"Content-Type": "application/problem+json", "X-Content-Type-Options": "nosniff"} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%d: %s %q, want %q", res.StatusCode, k, got, want)
				}
			}
			if tt.req.Method == http.MethodHead {
				return // no body
			}
			decodeProblem(t, res, body)
		})
	}
}
