//go:build netresolver

package serve

import (
	"log/slog"
	"net"

	"github.com/linoone/linoone/internal/http/httpapi"
)

// resolverServer is the resolver port on net/http (-tags netresolver): see
// resolver_fast.go.
func resolverServer(h *httpapi.ResolverHandler, ln net.Listener, log *slog.Logger) (server, net.Listener) {
	return newServer(h, log), capConns(ln, connCap(openFileLimit(), resolverConnShare))
}
