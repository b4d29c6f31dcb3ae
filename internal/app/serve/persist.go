package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/core/hostname"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
)

// openPersist starts local Persist when no LINOONE_PERSIST_URL names another, and
// returns the client of the Persist in use, signing with creds. Local Persist
// requires that signature (service execute-api, as the real Persist behind API
// Gateway's AWS_IAM authorizer) on every route but its health check. On Unix it runs
// in a child process (persistProc), whose logs join serve's on stderr.
func (s *stack) openPersist(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, stderr io.Writer, observe func(string, time.Duration)) (*persist.Client, error) {
	if cfg.Persist.Start {
		if err := s.startPersist(ctx, cfg, creds, stderr); err != nil {
			return nil, err
		}
		warnIfExposed(s.log, cfg.Persist.Addr)
	}
	return newPersistClient(cfg.Persist, creds, cfg.Region, observe)
}

// ChildCommand is the linoone command serve runs local Persist with, in a process
// of its own (persistProc), which runs PersistChild. It is not for people: it takes
// its listener as file descriptor 3 and lives exactly as long as its stdin stays
// open.
const ChildCommand = "persist-child"

// openLocalPersist opens local Persist on the data dir's database, checking every
// request's signature against creds.
func openLocalPersist(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, log *slog.Logger) (*localpersist.Store, error) {
	verifier, err := sigv4.New(creds, cfg.Region, persistService, sigv4.WithMaxBodyBytes(localpersist.DefaultMaxBodyBytes))
	if err != nil {
		return nil, fmt.Errorf("local persist: %w", err)
	}
	lp, err := localpersist.Open(ctx, filepath.Join(cfg.DataDir, datadir.PersistDB), localpersist.Options{Logger: log, Authenticator: verifier})
	if err != nil {
		return nil, fmt.Errorf("local persist: %w", err)
	}
	return lp, nil
}

// persistService is the SigV4 service of Persist calls.
const persistService = "execute-api"

// warnIfExposed warns when local Persist listens beyond loopback: the graph, with
// every visitor's IP address and User-Agent, is then reachable from the network,
// guarded by the signature alone.
func warnIfExposed(log *slog.Logger, addr string) {
	if isLoopback(addr) {
		return
	}
	log.Warn("local persist listens on a non-loopback address: the graph, with every visitor's IP address and User-Agent, "+
		"is reachable from the network (SigV4 signatures are still required); bind LINOONE_PERSIST_ADDR to 127.0.0.1 unless that is intended",
		"persist_addr", addr)
}

// isLoopback reports whether addr (host:port) listens on loopback only. An empty
// host, an unspecified IP or any other name is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && hostname.IsLoopback(host)
}

// newPersistClient is the client of the Persist a local command uses: it signs every
// call with local Persist's pair (harmless for a Persist that checks no signature).
// observe, when set, is told each call's duration.
func newPersistClient(p config.LocalPersist, creds sigv4.Credentials, region string, observe func(string, time.Duration)) (*persist.Client, error) {
	return persist.New(persist.Config{BaseURL: p.URL, Timeout: p.Timeout, InlineLiterals: p.InlineLiterals, Observe: observe,
		SigV4: &persist.SigV4{Credentials: credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""),
			Region: region, Service: persistService}})
}
