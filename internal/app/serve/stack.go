package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/diskfree"
	"github.com/linoone/linoone/internal/foundation/yield"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/local/localbus"
)

// stack is what serve started, so that it stops in the right order.
type stack struct {
	log                           *slog.Logger
	resolverLn, managementLn, pLn net.Listener
	served                        bool         // it got to serving: Run logs its stop
	resolver                      server       // fastresolver (net/http with -tags netresolver)
	management, persist           *http.Server // persist: local Persist inside serve (not Unix)
	persistProc                   *persistProc // local Persist in a child process (Unix)
	bus                           *localbus.Bus
	consumer                      *localbus.Consumer
	recorder                      *shorturl.Recorder // flushes the click buffer while serving
	denyList                      *denylist.Poller   // keeps the deny list in step with its file
	disk                          *diskfree.Watch    // the data dir's free space
	closers                       []func() error
}

// listen binds every address first, so a port in use is reported before anything
// starts.
func (s *stack) listen(cfg config.Serve) error {
	if s.resolverLn != nil { // Run bound before making a new data dir
		return nil
	}
	var err error
	if s.resolverLn, err = bind("resolver", cfg.ResolverAddr, "LINOONE_RESOLVER_ADDR"); err != nil {
		return err
	}
	if s.managementLn, err = bind("management api", cfg.ManagementAddr, "LINOONE_MANAGEMENT_ADDR"); err != nil {
		return err
	}
	s.managementLn = capConns(s.managementLn, connCap(openFileLimit(), managementConnShare))
	if cfg.Persist.Start {
		if s.pLn, err = bind("local persist", cfg.Persist.Addr, "LINOONE_PERSIST_ADDR"); err != nil {
			return err
		}
	}
	return nil
}

// bind listens on addr; when the address is taken (another serve, most often), the
// error names the variable that moves it.
func bind(name, addr, variable string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s: %s is in use (another linoone serve?): set %s to another address: %w", name, addr, variable, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ln, nil
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
	workers.Go(func() { s.denyList.Run(bg, DenyListPoll) })
	// After the servers stop it flushes the click buffer once more and logs the
	// rest whole, before the bus closes.
	workers.Go(func() { s.recorder.Run(bg) })

	if pid, err := s.recordListening(cfg); err != nil {
		s.log.Warn("listeners' addresses not recorded: linoone status asks where LINOONE_*_ADDR say", "err", err)
	} else {
		defer datadir.RemoveListening(cfg.DataDir, pid)
	}
	s.served = true
	resolver, management := "http://"+s.resolverLn.Addr().String(), "http://"+s.managementLn.Addr().String()
	s.log.Info(fmt.Sprintf("linoone serving: resolver on %s, management API on %s", resolver, management),
		"resolver", resolver,
		"management", management,
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
	force, unforce := signal.NotifyContext(context.Background(), StopSignals()...)
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

// recordListening records in the data dir where this serve listens and which deny
// list it polls, for linoone status and block, and returns the pid it recorded.
func (s *stack) recordListening(cfg config.Serve) (int, error) {
	l := datadir.Listening{PID: os.Getpid(), Resolver: datadir.Dialable(s.resolverLn.Addr()), Management: datadir.Dialable(s.managementLn.Addr())}
	if abs, err := filepath.Abs(cfg.DenyListFile); err == nil {
		l.DenyList = abs
	}
	if s.pLn != nil {
		l.Persist = datadir.Dialable(s.pLn.Addr())
	}
	return l.PID, datadir.RecordListening(cfg.DataDir, l)
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
	if s.disk != nil && s.disk.Low(time.Now()) {
		h.Degraded = append(h.Degraded, healthDiskLow)
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
