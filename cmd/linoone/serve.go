package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/resolverstack"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/flock"
	"github.com/linoone/linoone/internal/foundation/yield"
	"github.com/linoone/linoone/internal/http/fastresolver"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localbus"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
)

// Paths inside LINOONE_DATA_DIR.
const (
	persistFile = "persist.db"
	busDir      = "bus"
	dlqDir      = "dlq"
	factsFile   = "facts.jsonl"
)

// serve runs the whole service on loopback: resolver, management API (SigV4-checked),
// local Persist on an embedded database file, the local bus with its consumer, and the
// local click DLQ. It returns after a graceful shutdown when ctx ends.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if _, err := parse(newFlags("serve"), args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadServe(getenv)
	if err != nil {
		return err
	}
	log := cfg.Logger(stderr)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	if fi, err := os.Stat(cfg.DataDir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the data dir can be read by other users: it holds credentials and every visitor's address; chmod 700 it",
			"data_dir", cfg.DataDir, "mode", fi.Mode().Perm().String())
	}
	creds, err := serveCredentials(cfg, log)
	if err != nil {
		return err
	}
	pcreds, err := persistCredentials(cfg.DataDir, cfg.Persist.Credentials, true, log)
	if err != nil {
		return err
	}

	s := &stack{log: log}
	defer s.close()
	if err := s.listen(cfg); err != nil {
		return err
	}
	pc, err := s.openPersist(ctx, cfg, pcreds, stderr)
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
		PublishTimeout: cfg.PublishTimeout, Logger: log, MetricsOut: stderr, Namespace: cfg.MetricsNamespace,
		Environment: cfg.Environment, Health: s.health, ClickBufferBytes: cfg.ClickBufferBytes, ClickLogFactsPerSecond: cfg.ClickLogFacts,
		Screening: screen})
	if err != nil {
		return err
	}
	mgmt, err := newManagement(cfg, rs.Store, pc, creds, screen, log)
	if err != nil {
		return err
	}
	// The resolver port is fasthttp: a redirect costs it about half of net/http's
	// CPU (package fastresolver); whatever is not a redirect is answered by the
	// same net/http handler as on Lambda.
	s.resolver = fastresolver.New(rs.Handler, fastresolver.Options{Logger: log, MaxConns: connCap(openFileLimit(), resolverConnShare)})
	s.management = newServer(mgmt, log)
	s.recorder = rs.Recorder
	return s.run(ctx, cfg, rs.Metrics)
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

// serveLock is the lock file one serve holds in its data dir for as long as it runs.
const serveLock = "serve.lock"

// lockDataDir takes the data dir for this serve, before anything in it is opened: a
// second serve would migrate local Persist's file under the first, or write the same
// journal and take the same idempotency keys in another process. The lock file holds
// the pid of the serve that has it, for the message of the next.
func lockDataDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, serveLock)
	l, err := flock.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	held, err := l.TryLock()
	if err == nil && held {
		pid, _ := os.ReadFile(path)
		err = fmt.Errorf("another linoone serve (pid %s) is using the data dir %s: stop it, or give this one its own LINOONE_DATA_DIR",
			strings.TrimSpace(string(pid)), dir)
	}
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return func() { _ = l.Close() }, nil // closing releases the lock
}

// denyListPoll is how often serve checks the deny list file for a change: an edit
// is in force within this interval (issue 11: under 5 s locally).
const denyListPoll = 2 * time.Second

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

// serveCredentials are the management API's credentials: the environment pair, or
// the pair in the data directory, created on first start.
func serveCredentials(cfg config.Serve, log *slog.Logger) (sigv4.Credentials, error) {
	creds, credsPath, created, err := sigv4.LoadOrCreate(cfg.DataDir, cfg.Credentials)
	if err != nil {
		return sigv4.Credentials{}, err
	}
	if credsPath != "" {
		// Where the pair is, never the secret itself.
		log.Info("management api credentials", "access_key_id", creds.AccessKeyID, "credentials_file", credsPath, "created", created)
	}
	return creds, nil
}

// persistCredentials are local Persist's own SigV4 pair: the environment pair, or the
// pair in the data directory. serve creates it on first start (create); consume only
// reads it, since a new random pair would not match the one serve's Persist checks.
func persistCredentials(dataDir string, fromEnv sigv4.Credentials, create bool, log *slog.Logger) (sigv4.Credentials, error) {
	p := sigv4.PersistPair
	if !create && fromEnv == (sigv4.Credentials{}) {
		if _, err := os.Stat(filepath.Join(dataDir, p.File)); err != nil {
			return sigv4.Credentials{}, fmt.Errorf("no local Persist credentials: set %s and %s, or %s",
				p.EnvAccessKeyID, p.EnvSecretAccessKey, startServeFirst(dataDir))
		}
	}
	creds, path, created, err := p.LoadOrCreate(dataDir, fromEnv)
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("local persist credentials: %w", err)
	}
	if path != "" {
		// Where the pair is, never the secret itself.
		log.Info("local persist credentials", "access_key_id", creds.AccessKeyID, "credentials_file", path, "created", created)
	}
	return creds, nil
}

// newManagement is the management API: the issuer on the resolver's store (sharing
// its hot set), SigV4-checked with the local credentials.
func newManagement(cfg config.Serve, store shorturl.Store, pc *persist.Client, creds sigv4.Credentials, screen shorturl.Screening, log *slog.Logger) (http.Handler, error) {
	// Targets on this service's own addresses are refused like the resolver base
	// URL's host: on loopback that covers every spelling of this machine.
	secret, secretPath, created, err := idempotencySecret(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	log.Info("idempotency secret", "file", secretPath, "created", created) // where, never the secret
	issuer, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: store, Batch: pc, ResolverBaseURL: cfg.ResolverBaseURL, Rand: rand.Reader,
		SelfHosts: []string{cfg.ResolverAddr, cfg.ManagementAddr}, ReservedHosts: cfg.ReservedHosts, Screening: screen, IdempotencySecret: secret,
		Coalesce: true}) // concurrent POST /shorten share one Persist lookup and one ingest
	if err != nil {
		return nil, err
	}
	verifier, err := sigv4.New(creds, cfg.Region, "execute-api", sigv4.WithMaxBodyBytes(mgmtapi.MaxBatchBodyBytes))
	if err != nil {
		return nil, err
	}
	return mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: issuer, Clicker: pc, Authenticator: verifier, Logger: log, Caller: sigv4.Caller})
}

// openPersist starts local Persist when no LINOONE_PERSIST_URL names another, and
// returns the client of the Persist in use, signing with creds. Local Persist
// requires that signature (service execute-api, as the real Persist behind API
// Gateway's AWS_IAM authorizer) on every route but its health check. On Unix it runs
// in a child process (persistProc), whose logs join serve's on stderr.
func (s *stack) openPersist(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, stderr io.Writer) (*persist.Client, error) {
	if cfg.Persist.Start {
		if err := s.startPersist(ctx, cfg, creds, stderr); err != nil {
			return nil, err
		}
		warnIfExposed(s.log, cfg.Persist.Addr)
	}
	return newPersistClient(cfg.Persist, creds, cfg.Region)
}

// persistChildCommand is the command serve runs local Persist with, in a process of
// its own (persistProc). It is not for people: it takes its listener as file
// descriptor 3 and lives exactly as long as its stdin stays open.
const persistChildCommand = "persist-child"

// openLocalPersist opens local Persist on the data dir's database, checking every
// request's signature against creds.
func openLocalPersist(ctx context.Context, cfg config.Serve, creds sigv4.Credentials, log *slog.Logger) (*localpersist.Store, error) {
	verifier, err := sigv4.New(creds, cfg.Region, persistService, sigv4.WithMaxBodyBytes(localpersist.DefaultMaxBodyBytes))
	if err != nil {
		return nil, fmt.Errorf("local persist: %w", err)
	}
	lp, err := localpersist.Open(ctx, filepath.Join(cfg.DataDir, persistFile), localpersist.Options{Logger: log, Authenticator: verifier})
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

// isLoopback reports whether addr (host:port) listens on loopback only: "localhost"
// or a loopback IP. An empty host, an unspecified IP or any other name is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// openBus opens the local bus, starts its consumer when serve delivers the bus
// (LINOONE_CONSUMER=inline), and opens the click DLQ.
func (s *stack) openBus(cfg config.Serve, pc *persist.Client) (*localbus.DLQ, error) {
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, busDir), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region, Sync: cfg.BusSync, Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("local bus: %w", err)
	}
	s.bus = bus
	if cfg.BusFault != "" {
		s.log.Warn("bus fault drill: every publish fails", "fault", cfg.BusFault)
	}
	// Long work in this process (the inline consumer, SigV4 body hashes, and local
	// Persist's ingest and writer where it runs inside serve) yields to redirects
	// while the bus saw a publish in the last 100 ms, and only then: an external
	// consumer draining the journal into a serve that redirects nothing (make bench
	// D) would otherwise pay a yield every 500 µs for nothing. Local Persist in a
	// child process does not yield: the kernel preempts it for redirects.
	busy := func() bool { return bus.Active(100 * time.Millisecond) }
	yield.When(busy)
	if cfg.Consumer == localbus.ConsumerInline {
		// Inline, the consumer yields to redirects too: it paces itself while busy.
		// It shares serve's one core with local Persist, so a deeper pipeline buys
		// it nothing: catching up after 10 s of load (make bench A) took as long
		// with 3 MiB bodies two at a time as with 6 MiB three at a time (~23k
		// clicks/s either way), with a peak RSS of 230 MB instead of 450.
		opts := localbus.ConsumerOptions{Notify: bus.Notify(), Busy: busy, MaxBatchBytes: 3 << 20, Pipeline: 2}
		if s.persistProc != nil {
			// A batch's time then includes what the kernel gave redirects while
			// Persist's process waited: waiting as long as a batch took gives
			// delivery about the share twice as long gives it inside serve. Measured
			// as make bench A, twice each: 24,739–25,983 redirects/s, every click
			// delivered 4.2–5.2 s after the load; with twice as long, 29,005–30,332/s
			// and 6.6–7.4 s.
			opts.PaceFactor = 1
		}
		if s.consumer, err = newConsumer(cfg.DataDir, pc, opts, s.log); err != nil {
			return nil, err
		}
	}
	dlq, err := localbus.OpenDLQ(filepath.Join(cfg.DataDir, dlqDir), localbus.DLQOptions{Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("click dlq: %w", err)
	}
	return dlq, nil
}

// newPersistClient is the client of the Persist a local command uses: it signs every
// call with local Persist's pair (harmless for a Persist that checks no signature).
func newPersistClient(p config.LocalPersist, creds sigv4.Credentials, region string) (*persist.Client, error) {
	return persist.New(persist.Config{BaseURL: p.URL, Timeout: p.Timeout, InlineLiterals: p.InlineLiterals,
		SigV4: &persist.SigV4{Credentials: credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""),
			Region: region, Service: persistService}})
}

// stack is what serve started, so that it stops in the right order.
type stack struct {
	log                           *slog.Logger
	resolverLn, managementLn, pLn net.Listener
	resolver                      server       // fasthttp
	management, persist           *http.Server // persist: local Persist inside serve (not Unix)
	persistProc                   *persistProc // local Persist in a child process (Unix)
	bus                           *localbus.Bus
	consumer                      *localbus.Consumer
	recorder                      *shorturl.Recorder // flushes the click buffer while serving
	denyList                      *denylist.Poller   // keeps the deny list in step with its file
	closers                       []func() error
}

// listen binds every address first, so a port in use is reported before anything
// starts.
func (s *stack) listen(cfg config.Serve) error {
	var err error
	if s.resolverLn, err = net.Listen("tcp", cfg.ResolverAddr); err != nil {
		return fmt.Errorf("resolver: %w", err)
	}
	if s.managementLn, err = net.Listen("tcp", cfg.ManagementAddr); err != nil {
		return fmt.Errorf("management api: %w", err)
	}
	s.managementLn = capConns(s.managementLn, connCap(openFileLimit(), managementConnShare))
	if cfg.Persist.Start {
		if s.pLn, err = net.Listen("tcp", cfg.Persist.Addr); err != nil {
			return fmt.Errorf("local persist: %w", err)
		}
	}
	return nil
}

// server is what serve runs on a listener: *http.Server, or the resolver's
// *fastresolver.Server.
type server interface {
	Serve(net.Listener) error // http.ErrServerClosed after Shutdown
	Shutdown(context.Context) error
}

func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

func (s *stack) run(ctx context.Context, cfg config.Serve, emf metrics.Group) error {
	consumer := s.consumer
	errc := make(chan error, 3)
	var servers sync.WaitGroup
	serveOn := func(srv server, ln net.Listener, name string) {
		servers.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	if s.persist != nil {
		serveOn(s.persist, s.pLn, "local persist")
	}
	serveOn(s.resolver, s.resolverLn, "resolver")
	serveOn(s.management, s.managementLn, "management api")

	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	if consumer != nil {
		workers.Go(func() {
			if err := consumer.Run(bg); err != nil && !errors.Is(err, context.Canceled) {
				s.log.Error("bus consumer stopped", "err", err)
			}
		})
	}
	// The metrics stop last, after the recorder's last flush has counted what it
	// published, dead-lettered or logged whole at shutdown.
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	var metricsDone sync.WaitGroup
	metricsDone.Go(func() { _ = emf.Run(mctx, 10*time.Second) })
	workers.Go(func() { s.denyList.Run(bg, denyListPoll) })
	// After the servers stop it flushes the click buffer once more and logs the
	// rest whole, before the bus closes.
	workers.Go(func() { s.recorder.Run(bg) })

	if pid, err := s.recordListening(cfg.DataDir); err != nil {
		s.log.Warn("listeners' addresses not recorded: linoone status asks where LINOONE_*_ADDR say", "err", err)
	} else {
		defer removeListening(cfg.DataDir, pid)
	}
	s.log.Info("linoone serving",
		"resolver", "http://"+s.resolverLn.Addr().String(),
		"management", "http://"+s.managementLn.Addr().String(),
		"persist", cfg.Persist.URL,
		"resolver_base_url", cfg.ResolverBaseURL,
		"bus_consumer", cfg.Consumer.String(),
		"bus_sync", cfg.BusSync.String(),
		"data_dir", cfg.DataDir)

	var runErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down", s.lagAttrs()...)
	case runErr = <-errc:
		s.log.Error("server failed; shutting down", "err", runErr)
	}
	// A second stop signal cuts what is left short: the requests in flight and the
	// journal's delivery, which the next start finishes.
	force, unforce := signal.NotifyContext(context.Background(), stopSignals()...)
	defer unforce()

	// Stop taking requests, let the bus write what it acknowledged, deliver the
	// journal into Persist, then stop Persist: each step with its own bound.
	rctx, cancel := context.WithTimeout(force, shutdownRequests)
	defer cancel()
	var shut sync.WaitGroup
	for _, srv := range []server{s.resolver, s.management} {
		shut.Go(func() { _ = srv.Shutdown(rctx) })
	}
	shut.Wait()
	stopBG()
	workers.Wait()
	stopMetrics()
	metricsDone.Wait()
	var undelivered error
	if consumer != nil {
		undelivered = s.drain(force, consumer)
	}
	if force.Err() != nil {
		s.log.Warn("stop signal repeated: stopping now")
	}
	s.stopPersist(force)
	servers.Wait()
	return errors.Join(runErr, undelivered)
}

// recordListening records in the data dir where this serve listens, for linoone
// status, and returns the pid it recorded.
func (s *stack) recordListening(dataDir string) (int, error) {
	l := listening{PID: os.Getpid(), Resolver: dialable(s.resolverLn.Addr()), Management: dialable(s.managementLn.Addr())}
	if s.pLn != nil {
		l.Persist = dialable(s.pLn.Addr())
	}
	return l.PID, recordListening(dataDir, l)
}

// The bounds of serve's shutdown steps. A second stop signal ends each at once.
const (
	// shutdownRequests bounds the wait for requests in flight once serve takes no new
	// ones.
	shutdownRequests = 15 * time.Second
	// shutdownDrain bounds the inline consumer's delivery of the journal into local
	// Persist. What it leaves is delivered at the next start, and serve exits 1.
	shutdownDrain = 20 * time.Second
	// drainProgress is how often a long delivery at shutdown says how much is left.
	drainProgress = 5 * time.Second
	// persistStopGrace bounds how long stopping local Persist waits for it to finish
	// the ingests it took: the child process on Unix (then it is killed), the
	// in-process server elsewhere.
	persistStopGrace = 20 * time.Second
)

// drain delivers the journal into Persist before serve stops, for at most
// shutdownDrain, saying every drainProgress how much is left. It returns an error
// saying what is left when it could not deliver everything: nothing is lost (the
// journal keeps it for the next start), but an operator about to move the data dir
// or downgrade needs to know.
func (s *stack) drain(ctx context.Context, c *localbus.Consumer) error {
	dctx, cancel := context.WithTimeout(ctx, shutdownDrain)
	defer cancel()
	done := make(chan struct{})
	var progress sync.WaitGroup
	progress.Go(func() {
		t := time.NewTicker(drainProgress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.log.Info("delivering the bus into persist before stopping", s.lagAttrs()...)
			}
		}
	})
	err := c.Drain(dctx)
	close(done)
	progress.Wait()
	cut := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	lag, lerr := c.Lag()
	if err == nil || cut && lerr == nil && lag == 0 { // a second signal with nothing queued cuts nothing short
		s.log.Info("bus delivered")
		return nil
	}
	left := "the rest of the bus was"
	if lerr == nil {
		left = fmt.Sprintf("%d bytes of the bus were", lag)
	}
	if !cut {
		return fmt.Errorf("%s not delivered into persist at shutdown: %w", left, err) // the consumer's own error says what to do
	}
	return fmt.Errorf("%s not delivered into persist at shutdown (%w); nothing is lost: the next start delivers them", left, err)
}

// lagAttrs is the inline consumer's lag as log attributes (none without one).
func (s *stack) lagAttrs() []any {
	if h := s.health(); h.BusLagBytes != nil {
		return []any{"bus_lag_bytes", *h.BusLagBytes}
	}
	return nil
}

// healthClickDelivery is what GET /healthz names as degraded while the inline
// consumer fails to deliver the journal into Persist (localbus.Consumer.Failing):
// the clicks are journaled and wait, bus_lag_bytes grows, and stats lag behind.
const healthClickDelivery = "click-delivery"

// health is what the resolver's GET /healthz reports: the inline consumer's lag, and
// whether its delivery fails.
func (s *stack) health() httpapi.Health {
	var h httpapi.Health
	if s.consumer != nil {
		if lag, err := s.consumer.Lag(); err == nil {
			h.BusLagBytes = &lag
		}
		if s.consumer.Failing() {
			h.Degraded = append(h.Degraded, healthClickDelivery)
		}
	}
	return h
}

// close releases what was opened, last first.
func (s *stack) close() {
	if s.consumer != nil {
		_ = s.consumer.Close()
	}
	if s.bus != nil {
		yield.When(nil) // openBus made yields ask this stack's bus
		_ = s.bus.Close()
		st := s.bus.Stats()
		s.log.Info("bus closed", "publishes", st.Publishes, "batches", st.Batches, "fsyncs", st.Fsyncs, "max_batch", st.MaxBatch)
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		_ = s.closers[i]()
	}
	for _, ln := range []net.Listener{s.resolverLn, s.managementLn, s.pLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// newConsumer is the local bus consumer: it ingests facts into Persist and appends
// them to facts.jsonl. opts sets the rest (for the inline consumer: wake-ups, pacing
// and batch sizes).
func newConsumer(dataDir string, pc *persist.Client, opts localbus.ConsumerOptions, log *slog.Logger) (*localbus.Consumer, error) {
	opts.Ingester, opts.FactsPath, opts.Logger = pc, filepath.Join(dataDir, factsFile), log
	// Only a document Persist refuses as invalid is set aside; any other failure
	// (Persist down, credentials, a proxy) blocks and is retried: no click is lost.
	opts.IsRejected = func(err error) bool { return errors.Is(err, persist.ErrInvalidDocument) }
	c, err := localbus.NewConsumer(filepath.Join(dataDir, busDir), opts)
	if err != nil {
		return nil, fmt.Errorf("bus consumer: %w", err)
	}
	return c, nil
}

// consume runs the local bus consumer on its own, for LINOONE_CONSUMER=external: the
// way production consumers run apart from the resolver. With --drain it delivers
// what is queued and exits, with an error if Persist refused a fact: the fact is kept
// in refused.jsonl, but delivered it is not, and a script that drains must see it.
func consume(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("consume")
	drain := fs.Bool("drain", false, "deliver what is queued, then exit")
	timeout := fs.Duration("timeout", 0, "with --drain: give up after this long (e.g. 5m), exit 1; 0: wait for Persist as long as it takes")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *timeout < 0 || (*timeout > 0 && !*drain) {
		return &usageError{fs: fs, err: errors.New("--timeout is a positive duration, and goes with --drain")}
	}
	cfg, err := config.LoadConsume(getenv)
	if err != nil {
		return err
	}
	log := cfg.Logger(stderr)
	creds, err := persistCredentials(cfg.DataDir, cfg.Persist.Credentials, false, log)
	if err != nil {
		return err
	}
	pc, err := newPersistClient(cfg.Persist, creds, cfg.Region)
	if err != nil {
		return err
	}
	c, err := newConsumer(cfg.DataDir, pc, localbus.ConsumerOptions{}, log)
	if err != nil {
		return err
	}
	defer c.Close()
	if *drain {
		// A drain retries a Persist that fails (backing off to 5 s) for as long as it
		// fails; a script or a cron job gives it a bound. What it delivered before the
		// bound stays delivered: the offset moves batch by batch.
		dctx, cancel := ctx, context.CancelFunc(func() {})
		if *timeout > 0 {
			dctx, cancel = context.WithTimeout(ctx, *timeout)
		}
		err := c.Drain(dctx)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			lag, _ := c.Lag()
			return fmt.Errorf("not drained within %s: delivered %d, %d bytes of the journal still queued (run it again once Persist answers): %w",
				*timeout, c.Stats().Delivered, lag, err)
		}
		if err != nil {
			return err
		}
	} else if err := c.Run(ctx); err != nil {
		return err
	}
	st := c.Stats()
	if _, err := fmt.Fprintf(stdout, "delivered %d, invalid %d, refused %d\n", st.Delivered, st.Invalid, st.Refused); err != nil {
		return err
	}
	if *drain && st.Refused > 0 {
		return fmt.Errorf("persist refused %d click facts, kept in %s: once Persist takes them, run linoone recover --from-log %s",
			st.Refused, c.RefusedPath(), c.RefusedPath())
	}
	return nil
}
