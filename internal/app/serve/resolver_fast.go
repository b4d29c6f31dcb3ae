//go:build !netresolver

package serve

import (
	"log/slog"
	"net"

	"github.com/linoone/linoone/internal/http/fastresolver"
	"github.com/linoone/linoone/internal/http/httpapi"
)

// resolverServer is the resolver port's server: fasthttp, for the CPU a redirect
// costs (package fastresolver); whatever is not a redirect is answered by the same
// net/http handler as on Lambda. Built with -tags netresolver, net/http serves it
// instead, for the comparison in docs/performance.md ("The resolver's server").
func resolverServer(h *httpapi.ResolverHandler, ln net.Listener, log *slog.Logger) (server, net.Listener) {
	return fastresolver.New(h, fastresolver.Options{Logger: log, MaxConns: connCap(openFileLimit(), resolverConnShare)}), ln
}
