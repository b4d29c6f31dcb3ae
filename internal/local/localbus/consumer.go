package localbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/foundation/flock"
	"github.com/linoone/linoone/internal/foundation/nofollow"
	"github.com/linoone/linoone/internal/foundation/rotlog"
	"github.com/linoone/linoone/internal/foundation/yield"
)

const (
	consumerLock   = "consumer.lock"
	consumerOffset = "consumer.offset"

	// A large batch costs Persist fewer pages per event: one transaction rewrites
	// each index page it touches once, and clicks of one short URL share pages.
	// The bound is the body's (under local Persist's 8 MiB limit), not the events'
	// (docs/performance.md, "consumer batches"; BenchmarkConsumerDeliver).
	defaultMaxBatch      = 10000
	defaultMaxBatchBytes = 6 << 20
	// batchReadFactor is how many times MaxBatchBytes of journal a batch reads: a
	// click's GraphSON is about 40% of its event, so that the body bound, not the
	// read, ends a batch of clicks.
	batchReadFactor      = 3
	defaultPollInterval  = 200 * time.Millisecond
	defaultMinBackoff    = 100 * time.Millisecond
	defaultMaxBackoff    = 5 * time.Second
	defaultIngestTimeout = 10 * time.Second
	loggedRecordBytes    = 512
	// maxPace bounds Run's wait between batches while redirects are served.
	maxPace = 250 * time.Millisecond
	// defaultPipeline is how many batches Drain, and Run while no redirects are
	// served, keep in Persist at once. Two keep Persist busy while the consumer
	// commits one batch and reads and assembles the next; a third lets Persist
	// parse one while it syncs another's transaction; a fourth gained nothing
	// (docs/performance.md, "consumer batches").
	defaultPipeline = 3
	// defaultBusyBatch caps Run's batches while redirects are served (Busy): a
	// batch's ingest holds the one core for as long as it takes (about 80 µs per
	// event with an in-process local Persist), which redirects wait out. 100 events
	// keep that wait near 8 ms; the pacing keeps the share a third.
	defaultBusyBatch = 100
	// defaultPaceFactor: while Busy, a batch is followed by a wait twice as long.
	defaultPaceFactor = 2
	// defaultCatchUpAfter is how long the backlog must grow while Busy before Run
	// catches up (catchUp).
	defaultCatchUpAfter = 2 * time.Second
	// catchUpFactor sizes a catch-up batch: BusyBatch times this, at most MaxBatch.
	// A batch's ingest, facts log and offset each end in an fsync, and its commit
	// rewrites an index page per short URL it holds; 100 events pay those for 100
	// clicks, 1,000 for ten times as many.
	catchUpFactor = 10
)

var (
	// ErrConsumerRunning reports a second consumer on one bus directory, or a second
	// Run or Drain on one Consumer.
	ErrConsumerRunning = errors.New("another consumer is running on this bus")
)

// Ingester takes one encoded GraphSON v3 ingest body, {"vertices":[…],"edges":[…]},
// into Persist (*persist.Client does). The consumer never reuses a body it handed
// over: net/http may still read a request body after the call returned.
type Ingester interface {
	IngestRaw(ctx context.Context, body []byte) error
}

// ConsumerOptions configures a Consumer.
type ConsumerOptions struct {
	Ingester  Ingester // required: where the facts' GraphSON goes
	FactsPath string   // required: the JSONL log of delivered events (facts.jsonl)
	MaxBatch  int      // most events per ingest; default 10000
	// MaxBatchBytes bounds the body of one ingest (the batch's distinct GraphSON
	// elements), so that it stays under Persist's request limit (local Persist:
	// 8 MiB); default 6 MiB. A batch always holds at least one event.
	MaxBatchBytes int
	PollInterval  time.Duration   // journal poll for other processes' events; default 200ms
	MinBackoff    time.Duration   // first retry delay of a failed batch; default 100ms
	MaxBackoff    time.Duration   // retry delay cap; default 5s
	IngestTimeout time.Duration   // per ingest call; default 10s
	Notify        <-chan struct{} // optional: (*Bus).Notify of an in-process Bus
	Logger        *slog.Logger    // default: discard
	// Busy reports whether the process is serving redirects right now (for an
	// in-process consumer, (*Bus).Active). While it is, Run paces itself: after each
	// batch it waits PaceFactor times as long as the batch took (its time less what
	// yield.Now gave to others meanwhile), so that delivery takes at most a third of
	// the time by default and yields the rest to redirects, unless the backlog has
	// grown for CatchUpAfter; it catches up at full speed once they stop. Optional;
	// nil never paces.
	Busy func() bool
	// BusyBatch caps the events of one ingest while Busy; default 100.
	BusyBatch int
	// PaceFactor is how many times as long as a batch took Run waits after it while
	// Busy; default 2. A batch's time includes Persist's: where Persist runs in
	// another process on the same core, the kernel preempts it for redirects and
	// that time counts too, so a smaller factor gives delivery the same share.
	PaceFactor float64
	// CatchUpAfter is how long a backlog of 2 MiB or more may grow while Busy before
	// Run catches up: batches of 10 × BusyBatch events (at most MaxBatch), each
	// followed by a wait half as long as the gentle pace's (by default as long as
	// the batch took, so that delivery takes up to half the time). Run paces gently
	// again once the backlog is under 2 MiB. Default 2s.
	CatchUpAfter time.Duration
	// Pipeline is how many batches Drain, and Run while not Busy, keep in Persist
	// at once; default 3. Each holds up to 3 × MaxBatchBytes of journal and its
	// body, and Persist its parsed body, so memory grows with both.
	Pipeline int

	// IsRejected reports an ingest error that is Persist refusing the document for
	// its content, not an outage; for *persist.Client:
	// errors.Is(err, persist.ErrInvalidDocument) — never persist.ErrRejected, which
	// also covers 401/403/404 (credentials, routing) that must be retried. A batch
	// Persist refuses is ingested event by event, and the facts it refuses are kept
	// whole in refused.jsonl in the bus directory (RefusedPath), synced before the
	// offset moves past them, and not delivered. Optional; by default no error is a
	// rejection: every failed batch is retried.
	IsRejected func(error) bool

	// FactsLog bounds the facts log (see FactsLogOptions); the zero value never
	// rotates it.
	FactsLog FactsLogOptions

	// atRotate, when set, is called at each step of a facts log rotation (from the
	// consumer and from its tidy goroutine): where tests kill the process.
	atRotate func(rotlog.Step)
}

// ConsumerStats counts what a Consumer did since it was created.
type ConsumerStats struct {
	Delivered    int64 // events ingested and appended to the facts log
	Batches      int64 // batches committed (offset moved)
	Invalid      int64 // records skipped: not click events, or refused by Persist
	Refused      int64 // of Invalid, the facts Persist refused, kept in refused.jsonl
	Retries      int64 // failed batch attempts, retried
	CorruptBytes int64 // damaged journal bytes stepped over
	Paces        int64 // pauses Run made between batches to yield to redirects (Busy)
	CatchUps     int64 // of those, pauses after a catch-up batch (CatchUpAfter)
}

// Consumer delivers the bus's events: one merged ingest per batch, then the facts
// log, then the offset, with the next batches' ingests under way meanwhile (flow). It
// checks each event's shape with one decode and forwards the fact's GraphSON elements
// to Persist as they were written; Persist verifies their identities. One Consumer
// runs per bus directory (consumer.lock); Run and Drain must not run at the same time
// (the second gets ErrConsumerRunning).
type Consumer struct {
	journal    string
	offsetPath string
	refusals   string // refused.jsonl (RefusedPath)
	opts       ConsumerOptions
	log        *slog.Logger
	tab        *crc32.Table
	self       *flock.File // consumer.lock, held until Close
	facts      *os.File
	running    sync.Mutex

	seg       uint64 // where the next batch is read; 0: not positioned yet
	pos       int64
	offSeg    uint64 // the segment of the saved offset
	factsSize int64  // size of the facts log that the saved offset accounts for
	f         *os.File
	torn      tornState
	damaged   damagedHeader
	spare     []*delivery // committed batches, whose buffers the next ones reuse
	lines     []byte      // the facts log lines of the batch being committed
	saved     offsetState // the offset as last saved or loaded
	// atStage, when set, is called at each stage of a batch's commit: where tests
	// make the process crash.
	atStage func(commitStage)
	tidy    tidier
	// idleAfter is how long Run finds nothing to deliver before it releases its
	// buffers (idleRelease; tests shorten it), releases how often it returned them.
	idleAfter time.Duration
	releases  atomic.Int64

	delivered, batches, invalid, refused, retries, corrupt, paces, catchUps atomic.Int64
	batchLimit                                                              int           // events per batch now: MaxBatch, less while Busy
	atSeg                                                                   atomic.Uint64 // the offset as of the last commit,
	atPos                                                                   atomic.Int64  // for Lag from other goroutines
	failing                                                                 atomic.Bool   // see Failing
}

// commitStage is a point of a batch's commit (Consumer.atStage).
type commitStage int

const (
	stageIngested commitStage = iota // Persist took the batch; the facts log is as before
	stageFacts                       // its lines are appended and synced; the offset is not moved
	stageOffset                      // the offset is moved past it
)

func (c *Consumer) stage(s commitStage) {
	if c.atStage != nil {
		c.atStage(s)
	}
}

// tornMark is an unfinished record at the end of the journal: where, and the
// segment's size then.
type tornMark struct {
	seg       uint64
	pos, size int64
}

// tornState remembers the last unfinished record seen, since when, and whether it
// was logged, so that polling logs a torn tail once.
type tornState struct {
	mark   tornMark
	since  time.Time
	logged bool
}

// damagedHeader is where the whole frames of a segment whose header is damaged end,
// as found once its writers left it.
type damagedHeader struct {
	seg     uint64
	end     int64
	scratch []byte
}

// tornAfter is how long an unfinished record must stay unchanged to be a torn tail.
const tornAfter = time.Second

type record struct {
	pos     int64
	payload []byte
}

type offsetState struct {
	Segment   uint64 `json:"segment"`
	Position  int64  `json:"position"`
	FactsSize int64  `json:"facts_size"`
}

// NewConsumer opens the consumer of the bus in dir: it takes consumer.lock, loads the
// offset and cuts from the facts log what an unfinished batch wrote (that batch is
// delivered again).
func NewConsumer(dir string, opts ConsumerOptions) (*Consumer, error) {
	if opts.Ingester == nil || (opts.FactsPath == "" && !opts.FactsLog.Off) {
		return nil, errors.New("new consumer: an ingester and a facts path are required")
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = defaultMaxBatch
	}
	if opts.Pipeline <= 0 {
		opts.Pipeline = defaultPipeline
	}
	if opts.BusyBatch <= 0 {
		opts.BusyBatch = defaultBusyBatch
	}
	if opts.CatchUpAfter <= 0 {
		opts.CatchUpAfter = defaultCatchUpAfter
	}
	if !(opts.PaceFactor > 0) { // also NaN
		opts.PaceFactor = defaultPaceFactor
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = defaultMaxBatchBytes
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = defaultPollInterval
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = defaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(defaultMaxBackoff, opts.MinBackoff)
	}
	if opts.IngestTimeout <= 0 {
		opts.IngestTimeout = defaultIngestTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Consumer{
		journal:    filepath.Join(dir, journalDir),
		offsetPath: filepath.Join(dir, consumerOffset),
		refusals:   filepath.Join(dir, refusedFile),
		opts:       opts,
		batchLimit: opts.MaxBatch,
		log:        opts.Logger,
		tab:        crcTable(),
		idleAfter:  idleRelease,
	}
	if err := c.open(dir); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("new consumer %s: %w", dir, err)
	}
	// Lag counts from here until the first batch commits, which may be long in
	// coming (Persist down): from the journal's start it would count what earlier
	// runs delivered.
	c.atSeg.Store(c.seg)
	c.atPos.Store(c.pos)
	return c, nil
}

func (c *Consumer) open(dir string) error {
	if err := os.MkdirAll(c.journal, 0o700); err != nil {
		return err
	}
	self, err := flock.Open(filepath.Join(dir, consumerLock))
	if err != nil {
		return err
	}
	c.self = self
	held, err := self.TryLock()
	if err != nil {
		return err
	}
	if held {
		return ErrConsumerRunning
	}
	removeTemps(dir, ".tmp-"+consumerOffset+"-")
	st, found, err := c.loadOffset()
	if err != nil {
		return err
	}
	if c.opts.FactsLog.Off {
		if found {
			c.seg, c.pos, c.factsSize, c.offSeg, c.saved = st.Segment, st.Position, st.FactsSize, st.Segment, st
		}
		return c.removeDelivered()
	}
	if err := os.MkdirAll(filepath.Dir(c.opts.FactsPath), 0o700); err != nil {
		return fmt.Errorf("facts log dir: %w", err)
	}
	if c.facts, err = nofollow.OpenFile(c.opts.FactsPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
		return fmt.Errorf("open facts log: %w", err)
	}
	c.startTidy()
	fi, err := c.facts.Stat()
	if err != nil {
		return fmt.Errorf("stat facts log: %w", err)
	}
	if !found {
		// Record where this consumer's lines start before it writes any, so that a
		// crash in its first batch cuts them as it does any other batch's.
		c.factsSize = fi.Size()
		return c.saveOffset(offsetState{FactsSize: c.factsSize})
	}
	c.seg, c.pos, c.factsSize, c.offSeg, c.saved = st.Segment, st.Position, st.FactsSize, st.Segment, st
	switch {
	case fi.Size() > c.factsSize:
		if err := c.cutFacts(); err != nil {
			return err
		}
		c.log.Info("facts log: cut the lines of an unfinished batch; it is delivered again",
			"facts_path", c.opts.FactsPath, "bytes", fi.Size()-c.factsSize)
	case fi.Size() < c.factsSize:
		c.log.Warn("facts log is shorter than the offset records; it was moved aside, replaced or cut outside linoone",
			"facts_path", c.opts.FactsPath, "size", fi.Size(), "recorded", c.factsSize)
		if err := c.recordFactsSize(fi.Size()); err != nil {
			return err
		}
	}
	return c.removeDelivered()
}

// removeDelivered removes the segments before the offset's: they were read to the
// end, and a crash may have kept them.
func (c *Consumer) removeDelivered() error {
	segs, err := listSegments(c.journal)
	if err != nil {
		return err
	}
	if offsetPastNewest(segs, c.seg) {
		c.log.Error("consumer offset is past the newest journal segment; reading from the oldest",
			"segment", segmentName(c.seg), "offset", c.pos, "newest", segmentName(segs[len(segs)-1]))
		c.seg, c.pos, c.offSeg = segs[0], 0, segs[0]
		return nil
	}
	for _, s := range segs {
		if s < c.seg {
			c.removeSegment(s)
		}
	}
	return nil
}

// offsetPastNewest reports whether an offset in segment seg lies past the newest of
// segs, the journal's segments: it is not the journal the offset was saved for (that
// was removed or replaced, and numbering began again), whose segments are unread, not
// consumed. The consumer then reads from the oldest segment.
func offsetPastNewest(segs []uint64, seg uint64) bool {
	return len(segs) > 0 && seg > segs[len(segs)-1]
}

// Close releases the consumer's files and lock. Run or Drain must have returned.
func (c *Consumer) Close() error {
	c.stopTidy()
	var errs []error
	for _, f := range []*os.File{c.f, c.facts} {
		if f != nil {
			if err := f.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", f.Name(), err))
			}
		}
	}
	c.f, c.facts = nil, nil
	if c.self != nil {
		if err := c.self.Close(); err != nil {
			errs = append(errs, err)
		}
		c.self = nil
	}
	return errors.Join(errs...)
}

// Stats returns the consumer's counters.
func (c *Consumer) Stats() ConsumerStats {
	return ConsumerStats{
		Delivered:    c.delivered.Load(),
		Batches:      c.batches.Load(),
		Invalid:      c.invalid.Load(),
		Refused:      c.refused.Load(),
		Retries:      c.retries.Load(),
		CorruptBytes: c.corrupt.Load(),
		Paces:        c.paces.Load(),
		CatchUps:     c.catchUps.Load(),
	}
}

// Failing reports whether delivery is failing: the last attempt to deliver the oldest
// batch failed (Persist refused or did not answer within IngestTimeout, or the facts
// log or the offset could not be written) and is being retried, or Run could not read
// the journal. It is false again once a batch is committed, or Run has read the
// journal to its end. The events stay in the journal meanwhile; Lag says how many
// bytes wait. It may be called while Run or Drain runs.
func (c *Consumer) Failing() bool { return c.failing.Load() }

// Run delivers events until ctx is done, waking on Notify and polling the journal
// every PollInterval for other processes' events. While Busy it delivers one batch at
// a time and paces itself, gently or, once the backlog has grown for CatchUpAfter, to
// catch up; otherwise it keeps Pipeline ingests in flight, of batches that start at
// a catch-up's size and double up to MaxBatch, and once Busy again it drops the
// buffers they grew (release). A batch
// in hand when ctx ends gets its current ingest attempt finished but no retry; it is
// delivered again next time. Run returns nil once ctx is done.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.running.TryLock() {
		return ErrConsumerRunning
	}
	defer c.running.Unlock()
	poll := time.NewTicker(c.opts.PollInterval)
	defer poll.Stop()
	backoff := c.opts.MinBackoff
	defer func() { c.batchLimit = c.opts.MaxBatch }()
	busy := func() bool { return c.opts.Busy != nil && c.opts.Busy() }
	notBusy := func() bool { return !busy() }
	catchUpBatch := min(c.opts.MaxBatch, catchUpFactor*c.opts.BusyBatch)
	pace := catchUp{window: c.opts.CatchUpAfter / catchUpWindows}
	var idle idleClock
	paused := false // a flow ran while not Busy since the last Busy batch
	for ctx.Err() == nil {
		start, yielded := time.Now(), yield.Yielded()
		var n int
		var err error
		catching := false
		if busy() {
			if paused {
				// Redirects are back after a pause in them. The batches the pause
				// grew are more than Busy batches need, and would be kept for reuse
				// as long as redirects last (issue 47: serve at 95 MiB in a soak).
				paused = false
				c.release(false)
			}
			catching = pace.observe(start, c.Lag)
			c.batchLimit = min(c.opts.MaxBatch, c.opts.BusyBatch)
			if catching {
				c.batchLimit = catchUpBatch
			}
			n, err = c.flow(ctx, 1, nil)
		} else {
			pace = catchUp{window: pace.window}
			if !paused {
				// A pause in redirects may be brief: batches start at a catch-up's
				// size and grow (flow) to MaxBatch only while it lasts.
				paused = true
				c.batchLimit = catchUpBatch
			}
			n, err = c.flow(ctx, c.opts.Pipeline, notBusy)
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			c.failing.Store(true)
			c.log.Error("consumer cannot read the journal", "err", err, "retry_in", backoff)
			if !sleep(ctx, backoff) {
				return nil
			}
			backoff = min(backoff*2, c.opts.MaxBackoff)
			continue
		case n > 0:
			backoff = c.opts.MinBackoff
			idle.observe(n, start, c.idleAfter)
			if busy() {
				c.paces.Add(1)
				// What the batch took, less the time its yields left to redirects.
				took := max(time.Since(start)-(yield.Yielded()-yielded), 0)
				if catching {
					c.catchUps.Add(1)
				}
				if !sleep(ctx, c.paceWait(took, catching)) {
					return nil
				}
			}
			continue
		}
		backoff = c.opts.MinBackoff
		c.failing.Store(false) // read to the end, or no further than a torn tail
		if idle.observe(n, time.Now(), c.idleAfter) {
			c.release(true)
		}
		select {
		case <-ctx.Done():
		case <-c.opts.Notify:
		case <-poll.C:
		}
	}
	return nil
}

// paceWait is how long Run waits, while Busy, after a batch that took took:
// PaceFactor times as long, half that while catching up, at most maxPace.
func (c *Consumer) paceWait(took time.Duration, catching bool) time.Duration {
	wait := c.opts.PaceFactor * float64(took)
	if catching {
		wait /= 2
	}
	return time.Duration(min(wait, float64(maxPace)))
}

// catchUp tells Run, while Busy, whether to catch up. The gentle pace keeps a
// burst's redirects fast, but it delivers fewer clicks than steady traffic brings
// (one core, wrk -c8: 2,000 a second delivered for 7,400 a second arriving), and
// the backlog would grow for as long as the traffic lasts. So the backlog is sampled
// every window; once it has grown through catchUpWindows consecutive ones and is at
// least catchUpLowWater, Run catches up until it is under catchUpLowWater, then paces
// gently again.
type catchUp struct {
	window time.Duration // CatchUpAfter / catchUpWindows

	at      time.Time // the current window's start; zero before the first sample
	lag     int64     // the backlog at its start
	growing int       // consecutive windows the backlog grew through
	on      bool
}

const (
	// catchUpWindows is how many consecutive windows the backlog must grow through.
	catchUpWindows = 2
	// catchUpLowWater is the backlog, in journal bytes, under which Run does not
	// catch up: about what one catch-up batch of 1,000 clicks (~2 KB each) holds.
	catchUpLowWater = 2 << 20
)

// observe samples the backlog (lag) when a window has passed and reports whether
// Run should catch up. A failed sample changes nothing.
func (p *catchUp) observe(now time.Time, lag func() (int64, error)) bool {
	if !p.at.IsZero() && now.Sub(p.at) < p.window {
		return p.on
	}
	n, err := lag()
	if err != nil {
		return p.on
	}
	if !p.at.IsZero() {
		if n > p.lag {
			p.growing++
		} else {
			p.growing = 0
		}
	}
	p.at, p.lag = now, n
	switch {
	case p.growing >= catchUpWindows && n >= catchUpLowWater:
		p.on = true
	case n < catchUpLowWater:
		p.on = false
	}
	return p.on
}

// Drain delivers everything in the journal now, with Pipeline ingests in
// flight, and returns. It fails if ctx ends first (for example while Persist is down)
// or the journal cannot be read.
func (c *Consumer) Drain(ctx context.Context) error {
	if !c.running.TryLock() {
		return ErrConsumerRunning
	}
	defer c.running.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		n, err := c.flow(ctx, c.opts.Pipeline, func() bool { return true })
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if n == 0 {
			return nil
		}
	}
}

// flow delivers batches until the journal is read to the end, ctx ends or more (asked
// before each batch after the first; nil: none) says to stop. It keeps up to depth
// batches in Persist at once and commits them strictly in journal order, each once:
// while the oldest one's facts and offset are written, the next ones are read,
// assembled and ingested. n is the number of records it delivered or skipped.
//
// While others are in flight a batch is read only from whole frames (fetchOn):
// stepping over damage or a torn tail waits until the batches before are committed,
// and a segment read to its end is deleted only once a batch after it is. When the
// oldest batch cannot be committed (ctx ended while it was retried), the attempts
// still running are waited for and their batches read again next time, since nothing
// after an uncommitted batch may be committed.
func (c *Consumer) flow(ctx context.Context, depth int, more func() bool) (n int, err error) {
	var flight []*delivery
	defer func() {
		for _, b := range flight {
			if b.done != nil {
				<-b.done // an attempt still running; the oldest one's was settled
			}
			c.spare = append(c.spare, b)
		}
		if len(flight) > 0 {
			if c.seg != flight[0].seg { // fetchOn moved on: read it again from there
				if err := c.f.Close(); err != nil {
					c.log.Warn("close journal segment", "err", err)
				}
				c.f, c.seg = nil, flight[0].seg
			}
			c.pos = flight[0].start
		}
		c.atSeg.Store(c.seg)
		c.atPos.Store(c.pos)
	}()
	var readErr error
	next := func() bool { // whether to read another batch now
		return readErr == nil && len(flight) < depth && ctx.Err() == nil &&
			(n+len(flight) == 0 || (more != nil && more()))
	}
	for {
		for next() {
			b := c.newBatch()
			ok, err := c.fetch(b, len(flight) > 0)
			if err != nil || !ok {
				c.spare, readErr = append(c.spare, b), err
				if len(flight) == 0 && err == nil {
					return n, nil // caught up
				}
				break
			}
			c.assemble(b)
			c.pos = b.end
			if depth > 1 {
				c.batchLimit = min(c.opts.MaxBatch, 2*c.batchLimit) // Run's ramp after redirects pause
			}
			b.done = make(chan error, 1)
			go func() { b.done <- c.ingest(ctx, b) }()
			flight = append(flight, b)
		}
		if len(flight) == 0 {
			return n, readErr
		}
		if err := c.settle(ctx, flight[0]); err != nil {
			return n, err
		}
		n += len(flight[0].recs)
		c.spare = append(c.spare, flight[0])
		flight = flight[1:]
		if len(flight) == 0 && readErr != nil {
			return n, readErr
		}
	}
}

// newBatch returns a batch to read into, reusing one that was committed.
func (c *Consumer) newBatch() *delivery {
	if i := len(c.spare) - 1; i >= 0 {
		b := c.spare[i]
		c.spare = c.spare[:i]
		return b
	}
	return &delivery{batchState: batchState{seen: make(map[uint64]int), seed: maphash.MakeSeed()}}
}

// Lag is the number of journal bytes not delivered yet, as of the consumer's last
// committed batch (a click's event takes 1-2 KB). It may be called while Run runs.
func (c *Consumer) Lag() (int64, error) {
	segs, err := listSegments(c.journal)
	if err != nil {
		return 0, err
	}
	w, err := waitingFrom(c.journal, segs, c.atSeg.Load(), c.atPos.Load(), c.tab)
	return w.bytes, err
}

// settle waits for the batch's ingest attempt and commits the batch, retrying with
// capped exponential backoff without moving the offset until it succeeds or ctx ends.
func (c *Consumer) settle(ctx context.Context, b *delivery) error {
	err := <-b.done
	b.done = nil
	backoff := c.opts.MinBackoff
	for {
		if err == nil {
			var n int
			if n, err = c.commit(b); err == nil {
				c.failing.Store(false)
				c.delivered.Add(int64(n))
				c.batches.Add(1)
				c.atSeg.Store(b.seg)
				c.atPos.Store(b.end)
				return nil
			}
		}
		c.retries.Add(1)
		c.failing.Store(true)
		c.log.Warn("consumer batch failed; retrying without moving the offset",
			"err", err, "events", len(b.events), "retry_in", backoff)
		if !sleep(ctx, backoff) {
			return fmt.Errorf("deliver batch of %d events: %w (last error: %v)", len(b.events), ctx.Err(), err)
		}
		backoff = min(backoff*2, c.opts.MaxBackoff)
		err = c.ingest(ctx, b)
	}
}

// assemble checks the batch's records and keeps its valid events, storing each
// distinct GraphSON element once: the fact builder's encoding is deterministic, so
// the short_url vertex of many clicks on one short URL is the same bytes each time.
// It ends the batch before the first event whose elements would take the body past
// MaxBatchBytes (b.end moves back to it); the next batch reads it again. Checking
// thousands of events takes milliseconds: it yields every yield.Interval, for the
// redirects of an in-process bus.
func (c *Consumer) assemble(b *delivery) {
	b.reset()
	var pace yield.Point
	for i, r := range b.recs {
		pace.Maybe()
		vertex, edge, err := b.ev.Parse(r.payload)
		if err == nil && len(b.events) > 0 && b.bodySize()+len(vertex)+len(edge)+2 > c.opts.MaxBatchBytes {
			b.recs, b.end = b.recs[:i], r.pos
			return
		}
		if err != nil {
			c.invalid.Add(1)
			c.log.Error("invalid bus event skipped", "err", err, "segment", segmentName(b.seg), "offset", r.pos,
				"record", string(r.payload[:min(len(r.payload), loggedRecordBytes)]))
			continue
		}
		b.events = append(b.events, batchEvent{rec: i, vertex: b.intern(vertex), edge: b.intern(edge)})
	}
}

// commit keeps the facts of a batch that Persist refused (keepRefused), appends the
// ingested events to the facts log and syncs it, then moves the offset to the
// batch's end. It returns how many events it delivered.
func (c *Consumer) commit(b *delivery) (int, error) {
	c.stage(stageIngested)
	if err := c.keepRefused(b); err != nil {
		return 0, err
	}
	lines, n := b.factsLines(c.lines[:0], b.recs)
	c.lines = lines // one buffer for all batches: they are committed one at a time
	size := c.factsSize
	if len(lines) > 0 && !c.opts.FactsLog.Off {
		if err := c.appendFacts(lines); err != nil {
			return 0, err
		}
		// After the append: it may have taken a new size (a facts log rotated).
		size = c.factsSize + int64(len(lines))
		c.stage(stageFacts)
	}
	if err := c.saveOffset(offsetState{Segment: b.seg, Position: b.end, FactsSize: size}); err != nil {
		return 0, err
	}
	c.factsSize = size
	// The first batch of a segment fetchOn moved to: the ones before are delivered.
	for s := c.offSeg; s != 0 && s < b.seg; s++ {
		c.removeSegment(s)
	}
	c.offSeg = b.seg
	c.stage(stageOffset)
	return n, nil
}

// ingest takes the batch's pending events into Persist in one merged document. If
// Persist rejects that document (IsRejected), it ingests the events one by one and
// marks those Persist rejects, for commit to keep in refused.jsonl and skip: one bad
// event must not block the queue. Any other failure is returned for the attempt to
// be retried; what Persist acknowledged stays acknowledged. Ingest runs to completion
// even if ctx ends meanwhile (bounded by IngestTimeout). It touches no state but the
// batch's, so it runs while the consumer reads and commits other batches.
func (c *Consumer) ingest(ctx context.Context, b *delivery) error {
	pending := 0
	for _, e := range b.events {
		if e.state == eventPending {
			pending++
		}
	}
	if pending == 0 {
		return nil
	}
	err := c.ingestBody(ctx, b.body(-1))
	if err == nil {
		for i := range b.events {
			if b.events[i].state == eventPending {
				b.events[i].state = eventIngested
			}
		}
		return nil
	}
	if !c.rejected(err) {
		return fmt.Errorf("ingest %d events: %w", pending, err)
	}
	if pending > 1 {
		c.log.Warn("persist rejected a batch; ingesting its events one by one", "err", err, "events", pending)
	}
	for i := range b.events {
		e := &b.events[i]
		if e.state != eventPending {
			continue
		}
		if pending > 1 { // else the one event's document is the one just rejected
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("ingest events one by one: %w", cerr)
			}
			err = c.ingestBody(ctx, b.body(i))
		}
		switch {
		case err == nil:
			e.state = eventIngested
		case c.rejected(err):
			e.state = eventRejected
			b.refused = append(b.refused, refusal{event: i, reason: err.Error()})
		default:
			return fmt.Errorf("ingest event at offset %d: %w", b.recs[e.rec].pos, err)
		}
	}
	return nil
}

func (c *Consumer) rejected(err error) bool {
	return c.opts.IsRejected != nil && c.opts.IsRejected(err)
}

func (c *Consumer) ingestBody(ctx context.Context, body []byte) error {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.IngestTimeout)
	defer cancel()
	return c.opts.Ingester.IngestRaw(ictx, body)
}

// appendFacts appends lines to the facts log and syncs it, first cutting whatever a
// failed attempt left past the committed size. A facts log moved aside is followed
// by a new one (followFacts); one cut outside linoone (copy-truncate) is written on
// from its new end.
func (c *Consumer) appendFacts(lines []byte) error {
	fi, err := c.facts.Stat()
	if err != nil {
		return fmt.Errorf("stat facts log: %w", err)
	}
	if fi, err = c.followFacts(fi); err != nil {
		return err
	}
	switch {
	case fi.Size() > c.factsSize:
		if err := c.cutFacts(); err != nil {
			return err
		}
	case fi.Size() < c.factsSize:
		c.log.Warn("facts log is shorter than recorded; it was cut outside linoone",
			"facts_path", c.opts.FactsPath, "size", fi.Size(), "recorded", c.factsSize)
		if err := c.recordFactsSize(fi.Size()); err != nil {
			return err
		}
	}
	if c.dueRotation(len(lines)) {
		if err := c.rotateFacts(); err != nil {
			return err
		}
	}
	if _, err := c.facts.Write(lines); err != nil {
		return fmt.Errorf("append to facts log: %w", err)
	}
	if err := syncFile(c.facts, false); err != nil {
		return fmt.Errorf("fsync facts log: %w", err)
	}
	return nil
}

// followFacts opens a new facts log at FactsPath when the open one, whose stat is
// open, was moved aside (rotated) or removed, and returns the stat of the one to
// append to. It costs a stat of the path per batch, next to the batch's fsyncs.
func (c *Consumer) followFacts(open os.FileInfo) (os.FileInfo, error) {
	named, err := os.Stat(c.opts.FactsPath)
	switch {
	case err == nil && os.SameFile(named, open):
		return open, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("stat facts log: %w", err)
	}
	f, err := nofollow.OpenFile(c.opts.FactsPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open new facts log: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = syncDir(filepath.Dir(c.opts.FactsPath))
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("new facts log: %w", err)
	}
	if err := c.facts.Close(); err != nil {
		c.log.Warn("close the facts log moved aside", "err", err)
	}
	c.facts = f
	c.log.Info("facts log was moved aside; appending to a new one", "facts_path", c.opts.FactsPath, "size", fi.Size())
	return fi, c.recordFactsSize(fi.Size())
}

// recordFactsSize makes size, the size of a facts log moved aside or cut outside
// linoone, the one the offset records, before a batch is appended to it: a crash in
// that batch then cuts the file back to where it stood, not to the size of the file
// it replaced (within the new one, maybe in the middle of a line).
func (c *Consumer) recordFactsSize(size int64) error {
	st := c.saved
	st.FactsSize = size
	if err := c.saveOffset(st); err != nil {
		return err
	}
	c.factsSize = size
	return nil
}

func (c *Consumer) cutFacts() error {
	if err := c.facts.Truncate(c.factsSize); err != nil {
		return fmt.Errorf("cut facts log to %d bytes: %w", c.factsSize, err)
	}
	if err := syncFile(c.facts, false); err != nil {
		return fmt.Errorf("fsync facts log: %w", err)
	}
	return nil
}

func (c *Consumer) loadOffset() (offsetState, bool, error) { return loadOffsetFile(c.offsetPath) }

// loadOffsetFile reads the consumer offset saved at path; found is false when none
// was saved.
func loadOffsetFile(path string) (st offsetState, found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return offsetState{}, false, nil
	}
	if err != nil {
		return offsetState{}, false, fmt.Errorf("read consumer offset: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return offsetState{}, false, fmt.Errorf("consumer offset %s: %w", path, err)
	}
	// Segment 0 is a consumer that has not read from the journal yet.
	if (st.Segment == 0 && st.Position != 0) || st.Position < 0 || st.FactsSize < 0 {
		return offsetState{}, false, fmt.Errorf("consumer offset %s: %+v is out of range", path, st)
	}
	return st, true, nil
}

func (c *Consumer) saveOffset(st offsetState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode consumer offset: %w", err)
	}
	if err := writeFileAtomic(c.offsetPath, append(b, '\n')); err != nil {
		return fmt.Errorf("save consumer offset: %w", err)
	}
	c.saved = st
	return nil
}

// fetch reads the next batch of whole records into b, from the current segment,
// moving to the next segment when this one is read to the end; ok is false when
// there is nothing to read now. With batches in flight it only reads on (fetchOn).
//
// It takes no lock: a writer publishes a segment's end in its header only after the
// frames below it are written (version 2), so below the end a reader finds whole
// frames. In a version 1 segment, which writers appended to, the kernel makes the
// bytes of a write visible before the file size that covers them, so at the end a
// reader finds at most the start of one still being written; that is also what a
// writer that died mid-write left, and the consumer waits. A frame that fails its
// checksum, or an unfinished one in a segment that a newer one follows, is damage,
// which it steps over.
func (c *Consumer) fetch(b *delivery, inFlight bool) (ok bool, err error) {
	defer func() {
		if ok {
			b.seg, b.start = c.seg, c.pos
		}
	}()
	if inFlight {
		return c.fetchOn(b)
	}
	for {
		if c.f == nil {
			ok, err := c.openSegment()
			if err != nil || !ok {
				return false, err
			}
		}
		newer, size, err := c.segmentEnd()
		if errors.Is(err, errSegmentHeader) {
			return false, nil // the next writer starts a new segment; then segmentEnd reads on
		}
		if err != nil {
			return false, err
		}
		if c.pos > size {
			if !newer {
				return false, c.offsetPastEnd(size)
			}
			// After a crash of the machine the disk can hold less of a segment than
			// the consumer read from the page cache and saved as its offset; the next
			// writer goes on in a new segment for that reason (Bus.recover). What lay
			// past the end on disk was delivered: reading goes on from there.
			c.log.Error("journal segment is shorter than the consumer offset; reading on from its end",
				"segment", c.f.Name(), "offset", c.pos, "size", size)
			c.pos = size
		}
		st, err := c.read(b, size)
		if err != nil || len(b.recs) > 0 {
			return len(b.recs) > 0 && err == nil, err
		}
		switch {
		case st == frameEOF && !newer:
			return false, nil
		case st == frameIncomplete && !newer && !c.settled(size):
			return false, nil // most likely a batch being written: look again later
		case st == frameEOF:
			if err := c.nextSegment(); err != nil {
				return false, err
			}
		default:
			moved, err := c.stepOverDamage(size, newer)
			if err != nil || !moved {
				return false, err
			}
		}
	}
}

// errOffsetPastEnd reports a consumer offset past the end of the newest segment.
var errOffsetPastEnd = errors.New("consumer offset is past the end of the newest journal segment")

// offsetPastEnd is the error for an offset past the end of the newest segment, whose
// frames end at size. A segment's end only grows while writers write in it, and a
// writer that opens the journal alone starts a new one, so this is either an offset
// saved before a crash of the machine with no writer started since (the next one
// starts a new segment, and the consumer then reads on past this one, as past any
// older segment), or a damaged offset. Reading on from the end would skip the clicks
// written between it and the offset, anew on every run: nothing moves the offset
// back below them.
func (c *Consumer) offsetPastEnd(size int64) error {
	return fmt.Errorf("%s: segment %s, position %d, whose frames end at %d: %w "+
		"(if the machine crashed since, start linoone serve first: it writes on in a new segment, and the consumer reads on there; "+
		"else the offset is damaged: stop the consumer and remove %s to deliver the journal again from its oldest segment, "+
		"which Persist dedupes, and readers of facts.jsonl by idempotency key)",
		c.offsetPath, segmentName(c.seg), c.pos, size, errOffsetPastEnd, c.offsetPath)
}

// segmentEnd reports whether a segment newer than the current one exists and where
// the current one's frames end, looked at in that order: once a newer one exists,
// the end seen next is the segment's last. It moves the position past the header of
// a segment it is at the start of.
func (c *Consumer) segmentEnd() (newer bool, end int64, err error) {
	if newer, err = exists(segmentPath(c.journal, c.seg+1)); err != nil {
		return false, 0, err
	}
	start, end, err := segmentBounds(c.f, c.tab)
	if errors.Is(err, errSegmentHeader) && newer {
		start = segHeader
		end, err = c.recoverFrames()
	}
	if err != nil {
		return newer, 0, err
	}
	c.pos = max(c.pos, start)
	return newer, end, nil
}

// recoverFrames finds where the whole frames of the current segment end when its
// header, which publishes that, is damaged and its writers left it (a newer segment
// exists). Each frame checks itself, so they are read up to the first that does not.
func (c *Consumer) recoverFrames() (int64, error) {
	if d := &c.damaged; d.seg == c.seg && d.end > 0 {
		return d.end, nil
	}
	fi, err := c.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", c.f.Name(), err)
	}
	end, err := scanValid(c.f, max(c.pos, segHeader), fi.Size(), c.tab, &c.damaged.scratch)
	if err != nil {
		return 0, err
	}
	c.log.Error("journal segment header damaged; reading its whole frames up to the first damaged one",
		"segment", c.f.Name(), "offset", c.pos, "end", end, "size", fi.Size())
	c.damaged.seg, c.damaged.end = c.seg, max(end, segHeader)
	return c.damaged.end, nil
}

// fetchOn reads the next batch while others are in flight: whole frames of the
// current segment, or of the next one once this one was read to its clean end and a
// newer one exists (its writers left it). It neither saves the offset nor deletes the
// segment it leaves: commit does, once a batch of the next one is committed. Anything
// else (damage, a torn tail, a missing segment) waits until nothing is in flight.
func (c *Consumer) fetchOn(b *delivery) (bool, error) {
	for c.f != nil {
		newer, size, err := c.segmentEnd()
		if errors.Is(err, errSegmentHeader) {
			return false, nil // the full fetch steps over it
		}
		if err != nil {
			return false, err
		}
		if c.pos < size {
			_, err = c.read(b, size)
			return len(b.recs) > 0, err
		}
		if c.pos > size || !newer {
			return false, nil
		}
		f, err := os.Open(segmentPath(c.journal, c.seg+1))
		if err != nil {
			return false, nil // let the full fetch deal with it
		}
		if err := c.f.Close(); err != nil {
			c.log.Warn("close journal segment", "err", err)
		}
		c.f, c.seg, c.pos = f, c.seg+1, 0
	}
	return false, nil
}

// read parses up to batchLimit whole frames from c.pos into b.recs and b.end, from
// at most batchReadFactor × MaxBatchBytes of journal (at least readChunk, which holds
// any frame), read into b's own buffer so that the batches in flight keep their
// records. It reads a readChunk at a time, as long as the batch wants more frames: a
// batch of BusyBatch events reads one chunk, not the most a batch may read.
func (c *Consumer) read(b *delivery, size int64) (frameStatus, error) {
	b.recs, b.end = b.recs[:0], c.pos
	most := max(readChunk, batchReadFactor*c.opts.MaxBatchBytes)
	limit := int(min(int64(most), size-c.pos))
	var (
		have, off int
		st        = frameEOF // what lies at off: frameEOF while it is the end of what was read
	)
	for len(b.recs) < c.batchLimit && have < limit && (st == frameEOF || st == frameIncomplete) {
		n := min(limit, have+readChunk)
		b.grow(n, most, c.pos)
		k, err := c.f.ReadAt(b.buf[have:n], c.pos+int64(have))
		if err != nil && !errors.Is(err, io.EOF) {
			return frameEOF, fmt.Errorf("read %s at %d: %w", c.f.Name(), c.pos+int64(have), err)
		}
		if have += k; have < n {
			// The file ends before the end its header published (cut, or its size
			// lost in a crash): what lies past have is the previous batch's bytes.
			limit = have
		}
		for len(b.recs) < c.batchLimit {
			var p []byte
			var m int
			if p, m, st = parseFrame(b.buf[off:have], c.tab); st != frameOK {
				break
			}
			b.recs = append(b.recs, record{pos: c.pos + int64(off), payload: p})
			off += m
		}
	}
	b.end = c.pos + int64(off)
	return st, nil
}

// stepOverDamage handles bytes at c.pos that are not a whole valid frame, seen
// under the writers' lock. A torn tail of the active segment is left for the next
// writer to truncate; damage followed by valid frames, or at the end of a segment
// that writers left, is stepped over and logged. moved reports whether reading can
// go on.
func (c *Consumer) stepOverDamage(size int64, newer bool) (bool, error) {
	q, ok, err := findFrame(c.f, c.pos, size, c.tab)
	if err != nil {
		return false, err
	}
	switch {
	case ok:
		c.log.Error("journal damaged; stepping over it to the next valid record",
			"segment", c.f.Name(), "offset", c.pos, "bytes", q-c.pos)
		c.corrupt.Add(q - c.pos)
		c.pos = q
		return true, nil
	case newer:
		c.log.Error("journal damaged up to the end of the segment; moving to the next one",
			"segment", c.f.Name(), "offset", c.pos, "bytes", size-c.pos)
		c.corrupt.Add(size - c.pos)
		return true, c.nextSegment()
	}
	if c.settled(size) && !c.torn.logged {
		c.torn.logged = true
		c.log.Warn("journal ends in a torn record; the next writer cuts it or goes on in a new segment",
			"segment", c.f.Name(), "offset", c.pos, "bytes", size-c.pos)
	}
	return false, nil
}

// settled reports whether the unfinished record at the end of the active segment has
// stayed the same for tornAfter. A batch being written is finished long before, so
// one that stays is damage or the torn tail of a writer that died (which the next
// writer cuts).
func (c *Consumer) settled(size int64) bool {
	mark := tornMark{seg: c.seg, pos: c.pos, size: size}
	if c.torn.mark != mark {
		c.torn = tornState{mark: mark, since: time.Now()}
	}
	return time.Since(c.torn.since) >= tornAfter
}

// openSegment opens the segment at the offset (the first one when starting fresh).
// ok is false when there is nothing to read yet.
func (c *Consumer) openSegment() (bool, error) {
	segs, err := listSegments(c.journal)
	if err != nil {
		return false, err
	}
	if len(segs) == 0 {
		return false, nil
	}
	if c.seg == 0 {
		c.seg, c.pos = segs[0], 0
	}
	f, err := os.Open(segmentPath(c.journal, c.seg))
	if errors.Is(err, os.ErrNotExist) {
		next := segs[0]
		for _, s := range segs {
			if s > c.seg {
				next = s
				break
			}
		}
		c.log.Error("journal segment at the consumer offset is missing; reading on from another",
			"segment", segmentName(c.seg), "offset", c.pos, "next", segmentName(next))
		c.seg, c.pos = next, 0
		f, err = os.Open(segmentPath(c.journal, c.seg))
	}
	if err != nil {
		return false, fmt.Errorf("open journal segment: %w", err)
	}
	c.f = f
	return true, nil
}

// nextSegment moves the offset to the start of the next segment and deletes the
// current one, which is read to the end and which no writer appends to any more.
func (c *Consumer) nextSegment() error {
	old := c.seg
	if err := c.saveOffset(offsetState{Segment: old + 1, FactsSize: c.factsSize}); err != nil {
		return err
	}
	if err := c.f.Close(); err != nil {
		c.log.Warn("close journal segment", "err", err)
	}
	c.f, c.seg, c.pos, c.offSeg = nil, old+1, 0, old+1
	c.removeSegment(old)
	return nil
}

func (c *Consumer) removeSegment(n uint64) {
	if err := os.Remove(segmentPath(c.journal, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.log.Warn("cannot delete consumed journal segment", "segment", segmentName(n), "err", err)
		return
	}
	if err := syncDir(c.journal); err != nil {
		c.log.Warn("cannot sync journal dir", "err", err)
	}
}

// removeTemps deletes temporary files that a crash left behind.
func removeTemps(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// sleep waits d or until ctx ends; it reports whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
