package serve

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/foundation/yield"
	"github.com/linoone/linoone/internal/local/localbus"
	"github.com/linoone/linoone/internal/persist"
)

// openBus opens the local bus, starts its consumer when serve delivers the bus
// (LINOONE_CONSUMER=inline), and opens the click DLQ.
func (s *stack) openBus(cfg config.Serve, pc *persist.Client) (*localbus.DLQ, error) {
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, datadir.Bus), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region, Sync: cfg.BusSync, Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("local bus: %w", err)
	}
	s.bus = bus
	if cfg.BusFault != "" {
		s.log.Warn("bus fault drill: every publish fails", "fault", cfg.BusFault)
	}
	// Long work in this process (the inline consumer, SigV4 body hashes, and local
	// Persist's ingest and writer where it runs inside serve) yields to redirects
	// while the bus saw a publish in the last 100 ms, and only then: a serve that
	// redirects nothing should not pay for yields (docs/performance.md, "yield").
	// Local Persist in a child process does not yield: the kernel preempts it.
	busy := func() bool { return bus.Active(100 * time.Millisecond) }
	yield.When(busy)
	if cfg.Consumer == localbus.ConsumerInline {
		// Inline, the consumer yields to redirects too: it paces itself while busy.
		// It shares serve's one core with local Persist, so a deeper pipeline than
		// two 3 MiB batches buys it nothing but memory (docs/performance.md, "the
		// inline consumer").
		opts := localbus.ConsumerOptions{Notify: bus.Notify(), Busy: busy, MaxBatchBytes: 3 << 20, Pipeline: 2, FactsLog: cfg.Bounds.FactsLog}
		if s.persistProc != nil {
			// A batch's time then includes what the kernel gave redirects while
			// Persist's process waited: waiting as long as a batch took gives
			// delivery about the share twice as long gives it inside serve
			// (docs/performance.md, "the inline consumer").
			opts.PaceFactor = 1
		}
		if s.consumer, err = newConsumer(cfg.DataDir, pc, opts, s.log); err != nil {
			return nil, err
		}
	}
	dlq, err := localbus.OpenDLQ(filepath.Join(cfg.DataDir, datadir.DLQ), localbus.DLQOptions{Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("click dlq: %w", err)
	}
	return dlq, nil
}

// newConsumer is the local bus consumer: it ingests facts into Persist and appends
// them to facts.jsonl. opts sets the rest (for the inline consumer: wake-ups, pacing
// and batch sizes).
func newConsumer(dataDir string, pc *persist.Client, opts localbus.ConsumerOptions, log *slog.Logger) (*localbus.Consumer, error) {
	opts.Ingester, opts.FactsPath, opts.Logger = pc, filepath.Join(dataDir, datadir.Facts), log
	// Only a document Persist refuses as invalid is set aside; any other failure
	// (Persist down, credentials, a proxy) blocks and is retried: no click is lost.
	opts.IsRejected = func(err error) bool { return errors.Is(err, persist.ErrInvalidDocument) }
	c, err := localbus.NewConsumer(filepath.Join(dataDir, datadir.Bus), opts)
	if err != nil {
		return nil, fmt.Errorf("bus consumer: %w", err)
	}
	return c, nil
}
