package fastresolver_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/http/fastresolver"
)

type discard struct{}

func (discard) Publish(context.Context, clickfact.Fact) error { return nil }

// BenchmarkRedirect is the fast path's own work for one redirect, without the
// network: token check, lookup in the store, the click fact handed to a publisher
// that keeps nothing, and the 302's headers.
func BenchmarkRedirect(b *testing.B) {
	h := fastresolver.New(apiOver(b, store{}, discard{}), fastresolver.Options{}).Handler()
	var ctx fasthttp.RequestCtx
	raw := "GET /" + string(known.Token) + " HTTP/1.1\r\nHost: s.example.com\r\nUser-Agent: Mozilla/5.0 (bench)\r\n\r\n"
	if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		b.Fatal(err)
	}
	ctx.SetRemoteAddr(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242})
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		h(&ctx)
		if ctx.Response.StatusCode() != 302 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
	}
}
