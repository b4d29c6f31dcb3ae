package fastresolver

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestRedirectToken: the fast path takes exactly GET and HEAD of "/" and a
// well-formed token, with or without a query; everything else goes to net/http.
func TestRedirectToken(t *testing.T) {
	for _, tc := range []struct {
		request string
		token   string // "" if net/http answers
	}{
		{"GET /7BTadEDkJ8 HTTP/1.1", "7BTadEDkJ8"},
		{"HEAD /7BTadEDkJ8 HTTP/1.1", "7BTadEDkJ8"},
		{"GET /7BTadEDkJ8?utm_source=x HTTP/1.1", "7BTadEDkJ8"},
		{"GET /7BTadEDkJ8? HTTP/1.1", "7BTadEDkJ8"},
		{"POST /7BTadEDkJ8 HTTP/1.1", ""},
		{"OPTIONS /7BTadEDkJ8 HTTP/1.1", ""},
		{"GET /%37BTadEDkJ8 HTTP/1.1", ""},
		{"GET /7BTadEDkJ8/ HTTP/1.1", ""},
		{"GET /7BTadEDkJ8x HTTP/1.1", ""},
		{"GET /7BTadEDk_8 HTTP/1.1", ""},
		{"GET /7BTadEDkJ HTTP/1.1", ""},
		{"GET //BTadEDkJ8 HTTP/1.1", ""},
		{"GET http://s.example.com/7BTadEDkJ8 HTTP/1.1", ""},
		{"GET /healthz HTTP/1.1", ""},
		{"GET / HTTP/1.1", ""},
	} {
		var ctx fasthttp.RequestCtx
		raw := tc.request + "\r\nHost: s.example.com\r\n\r\n"
		if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatalf("%q: %v", tc.request, err)
		}
		token, ok := redirectToken(&ctx)
		if ok != (tc.token != "") || token != tc.token && ok {
			t.Errorf("%q: redirectToken = %q, %v; want %q", tc.request, token, ok, tc.token)
		}
	}
}
