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

// browserHead is the head a browser sends when it follows a short URL.
const browserHead = "GET /7BTadEDkJ8 HTTP/1.1\r\nHost: s.example.com\r\nConnection: keep-alive\r\n" +
	"sec-ch-ua: \"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"\r\nsec-ch-ua-mobile: ?0\r\nsec-ch-ua-platform: \"Linux\"\r\n" +
	"Upgrade-Insecure-Requests: 1\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
	"Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n" +
	"Referer: https://news.example.org/\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\n\r\n"

// BenchmarkCheckHead is the check of a browser's head before a redirect.
func BenchmarkCheckHead(b *testing.B) {
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(browserHead))); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if code, _ := checkHead(&h); code != 0 {
			b.Fatal("refused")
		}
	}
}

// TestCheckHead: heads net/http's server serves pass; the others get its refusal; a
// body it would leave unread closes the connection after the answer.
func TestCheckHead(t *testing.T) {
	const get = "GET /7BTadEDkJ8 HTTP/1.1\r\nHost: x\r\n"
	for _, tc := range []struct {
		head       string
		want       int
		unreadBody bool
	}{
		{browserHead, 0, false},
		{"GET /7BTadEDkJ8 HTTP/1.1\nHost: x\nX: y\r\n\r\n", 0, false},
		{"GET /7BTadEDkJ8 HTTP/1.0\r\n\r\n", 0, false},
		{get + "Transfer-Encoding: chunked\r\n\r\n", 0, false},
		{get + "TE: trailers\r\nExpect: 100-continue\r\n\r\n", 0, false},
		{get + "Expect: 100-continue\r\nContent-Length: 0\r\n\r\n", 0, false},
		{get + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\n", 0, true},
		{get + "Expect: foo, 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n", 0, true},
		{get + "Expect:\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", 0, false}, // net/http reads the first
		{"GET /7BTadEDkJ8 HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", 0, false},
		{"GET /7BTadEDkJ8 HTTP/1.1\nHost: x\ntransfer-encoding:  IDENTITY \r\n\r\n", 400, false},
		{get + "X: a\r\n\tb\r\n\r\n", 400, false},
		{get + "Expect: 100-continued\r\n\r\n", 417, false},
		{"GET /7BTadEDkJ8 HTTP/1.9\r\n\r\n", 400, false},
	} {
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(tc.head))); err != nil {
			t.Fatalf("%q: %v", tc.head, err)
		}
		if code, unread := checkHead(&h); code != tc.want || unread != tc.unreadBody {
			t.Errorf("%q: %d, unread body %t; want %d, %t", tc.head, code, unread, tc.want, tc.unreadBody)
		}
	}
}
