// Package serve is local mode's service: `linoone serve` runs the resolver, the
// SigV4-checked management API, local Persist (in a child process on Unix), the
// local bus with its consumer and the local click DLQ on loopback, and stops them
// in order; `linoone consume` runs the bus's consumer apart from it. The parts it
// assembles live in core/, http/, persist/ and local/; this package only wires
// them to the data dir (package datadir) and the configuration (package config).
package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/app/resolverstack"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/persist"
)

// Run runs the whole service on loopback: resolver, management API (SigV4-checked),
// local Persist on an embedded database file, the local bus with its consumer, and the
// local click DLQ. It returns after a graceful shutdown when ctx ends.
func Run(ctx context.Context, cfg config.Serve, stderr io.Writer) error {
	log := cfg.Logger(stderr)
	s := &stack{log: log}
	err := s.start(ctx, cfg, stderr)
	// The last line, once everything is closed, so that whoever watches the log
	// knows serve is gone, and whether it left work for the next start.
	switch {
	case !s.served:
	case err != nil:
		log.Error("linoone serve stopped", "err", err)
	default:
		log.Info("linoone serve stopped")
	}
	return err
}

// start makes the data dir and the stack, serves until ctx ends and closes it all.
func (s *stack) start(ctx context.Context, cfg config.Serve, stderr io.Writer) error {
	log := s.log
	defer s.close()
	if _, err := os.Stat(cfg.DataDir); errors.Is(err, os.ErrNotExist) {
		// A serve that cannot bind must leave no new data dir behind (credentials
		// nobody will use); an existing one is locked first, so that a second serve
		// on it hears that rather than of a port.
		if err := s.listen(cfg); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := datadir.CheckFiles(cfg.DataDir, log); err != nil {
		return err
	}
	unlock, err := datadir.Lock(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	if fi, err := os.Stat(cfg.DataDir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the data dir can be read by other users: it holds credentials and every visitor's address; chmod 700 it",
			"data_dir", cfg.DataDir, "mode", fi.Mode().Perm().String())
	}
	creds, err := datadir.ServeCredentials(cfg.DataDir, cfg.Credentials, log)
	if err != nil {
		return err
	}
	pcreds, err := datadir.PersistCredentials(cfg.DataDir, cfg.Persist.Credentials, true, log)
	if err != nil {
		return err
	}

	s.watchDisk(ctx, cfg)
	if err := s.listen(cfg); err != nil {
		return err
	}
	emf, observe, err := persistLatency(cfg, stderr)
	if err != nil {
		return err
	}
	pc, err := s.openPersist(ctx, cfg, pcreds, stderr, observe)
	if err != nil {
		return stoppedEarly(ctx, err, log)
	}
	dlq, err := s.openBus(cfg, pc)
	if err != nil {
		return err
	}
	screen, err := s.openDenyList(cfg)
	if err != nil {
		return err
	}
	rs, err := resolverstack.New(resolverstack.Deps{Store: pc, Publisher: s.bus, DeadLetters: dlq, CacheSize: cfg.CacheSize,
		PublishTimeout: cfg.PublishTimeout, Logger: log, MetricsOut: emfOut(cfg, stderr), Namespace: cfg.MetricsNamespace,
		Environment: cfg.Environment, Health: s.health, ClickBufferBytes: cfg.ClickBufferBytes, ClickLogFactsPerSecond: cfg.ClickLogFacts,
		Screening: screen})
	if err != nil {
		return err
	}
	mgmt, err := newManagement(cfg, rs.Store, pc, creds, screen, s.denyList.Holder, log)
	if err != nil {
		return err
	}
	s.resolver, s.resolverLn = resolverServer(rs.Handler, s.resolverLn, log)
	s.management = newServer(mgmt, log)
	s.recorder = rs.Recorder
	return s.run(ctx, cfg, append(emf, rs.Metrics))
}

// persistLatency is the EMF writer of Persist call durations and the client's
// Observe, when EMF lines are written somewhere; else none and nil.
func persistLatency(cfg config.Serve, stderr io.Writer) (metrics.Group, func(string, time.Duration), error) {
	if !cfg.EMF {
		return nil, nil, nil
	}
	lat, err := metrics.NewLatency(emfOut(cfg, stderr), cfg.MetricsNamespace, cfg.Environment,
		metrics.PersistLatency, metrics.DimensionOperation, persist.Calls...)
	if err != nil {
		return nil, nil, err
	}
	return metrics.Group{lat}, lat.Observe, nil
}

// emfOut is where serve writes CloudWatch EMF lines: among its logs on Lambda or
// when LINOONE_EMF=on asks, else nowhere, as no one reads them on a terminal.
func emfOut(cfg config.Serve, stderr io.Writer) io.Writer {
	if cfg.EMF {
		return stderr
	}
	return io.Discard
}

// stoppedEarly is err, unless err is the stop signal cancelling the start: a
// service manager that stops serve while local Persist starts (which waits out a
// migration of its file, however long) stopped it, and that is no failure.
func stoppedEarly(ctx context.Context, err error, log *slog.Logger) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		log.Info("stopped before serving")
		return nil
	}
	return err
}

// DenyListPoll is how often serve checks the deny list file for a change: an edit
// is in force within this interval (issue 11: under 5 s locally).
const DenyListPoll = 2 * time.Second

// openDenyList loads the deny list file (absent: nothing blocked) and returns the
// screening both the issuer and the resolver apply. A file that exists but cannot
// be read stops the start: serving with no list would silently lift every block.
func (s *stack) openDenyList(cfg config.Serve) (shorturl.Screening, error) {
	h, counters := &denylist.Holder{}, &shorturl.ScreenCounters{}
	s.denyList = &denylist.Poller{Path: cfg.DenyListFile, Holder: h, Log: s.log, Failures: &counters.DenyListUnreadable}
	if _, err := s.denyList.Reload(); err != nil {
		return shorturl.Screening{}, fmt.Errorf("deny list: %w", err)
	}
	return shorturl.Screening{Screen: h, Counters: counters, Logger: s.log}, nil
}

// newManagement is the management API: the issuer on the resolver's store (sharing
// its hot set), SigV4-checked with the local credentials.
func newManagement(cfg config.Serve, store shorturl.Store, pc *persist.Client, creds sigv4.Credentials, screen shorturl.Screening, deny *denylist.Holder, log *slog.Logger) (http.Handler, error) {
	// Targets on this service's own addresses are refused like the resolver base
	// URL's host: on loopback that covers every spelling of this machine.
	secret, secretPath, created, err := datadir.IdempotencySecret(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	log.Info("idempotency secret", "file", secretPath, "created", created) // where, never the secret
	issuer, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: store, Batch: pc, ResolverBaseURL: cfg.ResolverBaseURL, Rand: rand.Reader,
		SelfHosts: []string{cfg.ResolverAddr, cfg.ManagementAddr}, MachineNames: machineNames(hostsFile), ReservedHosts: cfg.ReservedHosts, Screening: screen, IdempotencySecret: secret,
		Coalesce: true}) // concurrent POST /shorten share one Persist lookup and one ingest
	if err != nil {
		return nil, err
	}
	verifier, err := sigv4.New(creds, cfg.Region, "execute-api", sigv4.WithMaxBodyBytes(mgmtapi.MaxBatchBodyBytes))
	if err != nil {
		return nil, err
	}
	return mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: issuer, Clicker: pc, Lister: pc, DenyList: deny, Authenticator: verifier, Logger: log, Caller: sigv4.Caller})
}
