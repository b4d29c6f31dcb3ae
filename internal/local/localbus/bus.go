package localbus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// FaultAlways makes every Publish fail as a PutEvents entry failure would
// (LINOONE_BUS_FAULT=always).
const FaultAlways = "always"

const (
	defaultRegion      = "us-east-1"
	defaultSegmentSize = 64 << 20
	defaultMaxPending  = 64 << 20
	maxRetainedBuffer  = 4 << 20
	eventAccount       = "000000000000"
)

var (
	// ErrRejected reports an entry the bus refused, as PutEvents reports an entry
	// with FailedEntryCount=1. Nothing was journaled.
	ErrRejected = errors.New("bus rejected the entry")
	// ErrClosed reports a Publish on a closed Bus.
	ErrClosed = errors.New("bus is closed")
	// ErrBacklog reports a Publish refused because too many bytes already wait for
	// the journal writer (the disk cannot keep up).
	ErrBacklog = errors.New("bus backlog is full")
)

// BusOptions configures a Bus.
type BusOptions struct {
	Fault       string           // "" or FaultAlways
	Region      string           // the events' region; default us-east-1
	Now         func() time.Time // default time.Now
	Logger      *slog.Logger     // default: discard
	SegmentSize int64            // journal segment roll size; default 64 MiB
	MaxPending  int              // bytes waiting for the writer; default 64 MiB
	// Sync says when a publish is acknowledged: SyncEach (the zero value) after the
	// batch's write and fsync; SyncInterval after the batch's write(2) reached the
	// kernel, which survives a crash of the process, with an fsync every SyncEvery
	// (default 20ms) bounding what a crash of the machine can lose.
	Sync      SyncMode
	SyncEvery time.Duration
}

// BusStats counts what a Bus did since it was opened.
type BusStats struct {
	Publishes int64 // Publish calls that returned nil
	Records   int64 // records written to the journal
	Batches   int64 // batches written, one write(2) each
	Fsyncs    int64 // journal fsyncs: one per batch (SyncEach) or per interval with writes
	MaxBatch  int64 // most records written in one batch
	Locked    int64 // batches written under journal.lock because another process was writing too
}

// Bus is the durable local event bus. It is safe for concurrent use.
type Bus struct {
	journal string
	opts    BusOptions
	log     *slog.Logger
	tab     *crc32.Table
	w       *writers // owned by the writer goroutine once it runs
	enc     sync.Pool

	mu     sync.Mutex
	cur    *batch
	closed bool

	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	notify    chan struct{}
	closeOnce sync.Once
	closeErr  error

	// The journal's state, under wmu: the writer goroutine's, and in SyncInterval
	// also the interval fsync's (syncNow).
	wmu     sync.Mutex
	seg     uint64
	next    string // path of segment seg+1, whose existence means seg was rolled
	f       *os.File
	end     int64         // end of the whole frames in f as last seen under the lock; -1: unknown
	alloc   int64         // f's size: zeros from end to alloc were written ahead
	hdr     []byte        // scratch for the header appendLocked writes the end from
	ahead   *aheadSegment // the next segment, zero-filled meanwhile (a lone writer's)
	spare   []byte
	scratch []byte // reads other writers' records to check the tail
	dirty   bool   // SyncInterval: f holds written, not yet fsync'ed batches

	publishes, records, batches, fsyncs, maxBatch, locked atomic.Int64
	// lastPublish is when the last publish started, as nanoseconds since epoch plus
	// one (0: none yet). Both are read from opts.Now, whose times carry the monotonic
	// clock: a wall clock stepped back (NTP, an operator) must not make Active report
	// redirects that stopped long ago, which would hold the consumer to its busy pace.
	lastPublish atomic.Int64
	epoch       time.Time
}

// batch is the records waiting for one write and one fsync. Publishers wait on done,
// then read err.
type batch struct {
	buf  []byte
	n    int
	done chan struct{}
	err  error
}

type encoder struct {
	buf []byte
	rnd [16]byte
	tmp bytes.Buffer
}

var _ shorturl.Publisher = (*Bus)(nil)

// OpenBus opens (creating it if needed) the bus in dir, finds the end of the
// journal's active segment (writing on in a new one after a torn batch that a crash
// left), and starts the journal writer.
func OpenBus(dir string, opts BusOptions) (*Bus, error) {
	return newBus(dir, opts, true)
}

// newBus is OpenBus, which starts the writer goroutine (run) when start is set; a
// test that writes with commit itself leaves it unset.
func newBus(dir string, opts BusOptions, start bool) (*Bus, error) {
	if opts.Fault != "" && opts.Fault != FaultAlways {
		return nil, fmt.Errorf("open bus: fault %q is not %q or empty", opts.Fault, FaultAlways)
	}
	if opts.Region == "" {
		opts.Region = defaultRegion
	}
	if opts.SyncEvery <= 0 {
		opts.SyncEvery = 20 * time.Millisecond
	}
	if !isRegion(opts.Region) {
		return nil, fmt.Errorf("open bus: region %q is not a region name", opts.Region)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = defaultSegmentSize
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = defaultMaxPending
	}
	journal := filepath.Join(dir, journalDir)
	if err := os.MkdirAll(journal, 0o700); err != nil {
		return nil, fmt.Errorf("open bus: %w", err)
	}
	w, err := openWriters(dir)
	if err != nil {
		return nil, fmt.Errorf("open bus: %w", err)
	}
	b := &Bus{
		epoch:   opts.Now(),
		journal: journal,
		opts:    opts,
		log:     opts.Logger,
		tab:     crcTable(),
		w:       w,
		cur:     &batch{done: make(chan struct{})},
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		notify:  make(chan struct{}, 1),
		end:     -1,
	}
	b.enc.New = func() any { return &encoder{buf: make([]byte, 0, 2048)} }
	if w.solo {
		removeTemps(journal, tempSegmentPrefix) // segments a crash left half-made
	}
	if err := b.recover(); err != nil {
		_ = w.close()
		return nil, fmt.Errorf("open bus %s: %w", dir, err)
	}
	if start {
		go b.run()
	}
	return b, nil
}

// recover finds the active segment and its end, under the lock. A bus alone on the
// journal then writes on in a new segment rather than in one it found: the process
// that left that one may have died with the machine, whose disk can then hold less of
// it than a consumer had read from the page cache and saved as its offset before the
// crash. Written on from the end on disk, new records (acknowledged, and synced) would
// sit below that offset, and the consumer would skip them; in a new segment, the
// consumer finds the old one shorter than its offset and moves on.
func (b *Bus) recover() error {
	if err := b.w.acquire(); err != nil {
		return err
	}
	segs, err := listSegments(b.journal)
	if err == nil {
		err = b.prepare(0)
	}
	if err == nil && b.w.solo && len(segs) > 0 && b.seg == segs[len(segs)-1] {
		err = b.create(b.seg + 1)
	}
	if uerr := b.w.release(); err == nil {
		err = uerr
	}
	if err != nil && b.f != nil {
		_ = b.f.Close()
	}
	return err
}

// Close writes what is pending, stops the writer and closes the journal. Publish
// fails with ErrClosed afterwards.
func (b *Bus) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
		<-b.done
		var errs []error
		b.wmu.Lock()
		if b.ahead != nil {
			b.ahead.discard()
			b.ahead = nil
		}
		if b.f != nil && b.w.solo && b.end >= 0 {
			// Alone: nobody writes past the end, so the zeros written ahead go.
			if err := b.trimTail(); err != nil {
				errs = append(errs, err)
			}
		}
		if b.f != nil {
			if err := b.f.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close journal segment: %w", err))
			}
		}
		b.wmu.Unlock()
		if err := b.w.close(); err != nil {
			errs = append(errs, err)
		}
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

// Notify returns a channel that receives after each batch is journaled, for an
// in-process Consumer (ConsumerOptions.Notify). Wake-ups coalesce.
func (b *Bus) Notify() <-chan struct{} { return b.notify }

// Active reports whether a publish started within the last d: whether the process
// is serving redirects (ConsumerOptions.Busy).
func (b *Bus) Active(d time.Duration) bool {
	last := b.lastPublish.Load()
	since := b.opts.Now().Sub(b.epoch) - time.Duration(last-1)
	return last != 0 && since >= 0 && since < d // < 0: a clock without a monotonic reading stepped back
}

// Stats returns the bus's counters.
func (b *Bus) Stats() BusStats {
	return BusStats{
		Publishes: b.publishes.Load(),
		Records:   b.records.Load(),
		Batches:   b.batches.Load(),
		Fsyncs:    b.fsyncs.Load(),
		MaxBatch:  b.maxBatch.Load(),
		Locked:    b.locked.Load(),
	}
}

// Publish journals the fact as an EventBridge GraphFactProduced event. It returns nil
// only once the event is written and fsync'ed (with other publishers' events: group
// commit). If ctx ends first it returns ctx's error, and the event may still be
// journaled and delivered (consumers dedupe by idempotency key).
func (b *Bus) Publish(ctx context.Context, f clickfact.Fact) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("publish %s: %w", f.IdempotencyKey, err)
	}
	if b.opts.Fault == FaultAlways {
		return fmt.Errorf("publish %s: %w: PutEvents FailedEntryCount=1, entry 0 ErrorCode=InternalFailure "+
			"(fault injected by LINOONE_BUS_FAULT=always)", f.IdempotencyKey, ErrRejected)
	}
	e := b.enc.Get().(*encoder)
	now := b.opts.Now()
	b.lastPublish.Store(int64(now.Sub(b.epoch)) + 1)
	frame, err := e.encode(f, now, b.opts.Region, b.tab)
	if err != nil {
		b.enc.Put(e)
		return fmt.Errorf("publish %s: %w", f.IdempotencyKey, err)
	}
	b.mu.Lock()
	bt := b.cur
	switch {
	case b.closed:
		err = ErrClosed
	case len(bt.buf) > 0 && len(bt.buf)+len(frame) > b.opts.MaxPending:
		err = ErrBacklog
	default:
		bt.buf = append(bt.buf, frame...)
		bt.n++
	}
	b.mu.Unlock()
	b.enc.Put(e)
	if err != nil {
		return fmt.Errorf("publish %s: %w", f.IdempotencyKey, err)
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
	select {
	case <-bt.done:
		if bt.err != nil {
			return fmt.Errorf("publish %s: %w", f.IdempotencyKey, bt.err)
		}
		b.publishes.Add(1)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("publish %s: not acknowledged, the event may still be journaled: %w", f.IdempotencyKey, ctx.Err())
	}
}

// encode frames the EventBridge event that carries the fact. The result aliases
// e.buf. The event's id is the fact's ULID as a UUID (a fact without one gets a
// random id).
//
// It does not validate the detail as JSON: that was a pass over every fact on the
// redirect path (~7 µs), for details that are valid already. Publish's callers are
// the core's fact builder, which writes the fact's JSON itself, and DLQ replay, which
// parses the fact with clickfact.Parse first. encode checks in O(1) that the
// detail is delimited as an object, and compacts one with line breaks (json.Compact
// validates it on the way). A detail that is not JSON all the same is framed and
// checksummed like any other event, so the journal stays readable; the consumer
// decodes every event whole before it ingests it or writes it to the facts log, and
// skips one that does not decode.
func (e *encoder) encode(f clickfact.Fact, now time.Time, region string, tab *crc32.Table) ([]byte, error) {
	detail := bytes.TrimSpace(f.Detail)
	if len(detail) < 2 || detail[0] != '{' || detail[len(detail)-1] != '}' {
		return nil, fmt.Errorf("%w: detail is not a JSON object", ErrRejected)
	}
	if bytes.IndexByte(detail, '\n') >= 0 || bytes.IndexByte(detail, '\r') >= 0 { // keep one event per line in facts.jsonl
		e.tmp.Reset()
		if err := json.Compact(&e.tmp, detail); err != nil {
			return nil, fmt.Errorf("%w: compact detail: %v", ErrRejected, err)
		}
		detail = e.tmp.Bytes()
	}
	if !clickfact.EventUUID(f.EventID, &e.rnd) {
		if _, err := rand.Read(e.rnd[:]); err != nil {
			return nil, fmt.Errorf("event id: %w", err)
		}
	}
	b := append(e.buf[:0], make([]byte, frameHeader)...)
	b = clickfact.AppendEvent(b, &e.rnd, eventAccount, region, now, detail) // region checked by isRegion
	e.buf = b
	payload := b[frameHeader:]
	if len(payload) > maxPayload {
		return nil, fmt.Errorf("%w: event is %d bytes, more than %d", ErrRejected, len(payload), maxPayload)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, tab))
	return b, nil
}

func isRegion(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// run is the journal writer: one batch at a time, one write (and in SyncEach one
// fsync) each.
func (b *Bus) run() {
	defer close(b.done)
	if b.opts.Sync == SyncInterval {
		// The interval's fsync runs beside the writer, which goes on writing batches
		// meanwhile: a batch's publishers wait for its write, never for an fsync.
		var syncer sync.WaitGroup
		defer syncer.Wait()
		syncer.Go(b.syncEvery)
	}
	check := time.NewTicker(writersCheckEvery)
	defer check.Stop()
	for {
		select {
		case <-b.kick:
			// The first publisher's kick made this goroutine the next to run; yield
			// once, so that the redirects already runnable (on one P: every request
			// the last network poll brought) add their records to this batch.
			runtime.Gosched()
			b.wmu.Lock()
			b.flush()
			b.wmu.Unlock()
		case <-check.C:
			b.wmu.Lock()
			err := b.w.check()
			b.wmu.Unlock()
			if err != nil {
				b.log.Error("journal writers check failed", "err", err)
			}
		case <-b.stop:
			b.wmu.Lock()
			b.flush()
			b.syncDirty()
			b.wmu.Unlock()
			return
		}
	}
}

// syncEvery fsyncs the active segment every SyncEvery while it holds unsynced
// batches (SyncInterval), until the bus stops.
func (b *Bus) syncEvery() {
	t := time.NewTicker(b.opts.SyncEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.syncNow()
		case <-b.stop:
			return
		}
	}
}

// syncNow is the SyncInterval tick: it fsyncs the active segment, if it holds
// unsynced records, without holding wmu through the fsync, so that the writer goes on
// writing batches meanwhile.
func (b *Bus) syncNow() {
	b.wmu.Lock()
	f, dirty := b.f, b.dirty
	b.dirty = false
	b.wmu.Unlock()
	if !dirty || f == nil {
		return
	}
	if err := syncFile(f, true); err != nil {
		if errors.Is(err, os.ErrClosed) {
			return // rolled or closed meanwhile, which synced it first
		}
		b.log.Error("journal fsync failed", "segment", f.Name(), "err", err)
		b.wmu.Lock()
		b.dirty = true
		b.wmu.Unlock()
		return
	}
	b.fsyncs.Add(1)
}

// retire syncs and closes the segment the bus stops writing to. It syncs whatever
// dirty says: in SyncInterval the tick (syncNow) may have taken the flag and not
// finished its sync, and it gives up on a file closed under it. With trim, which
// only a writer that knows the segment's end asks for (it is rolling it), the zeros
// past the end are cut: nobody writes there any more. Segments roll every
// SegmentSize bytes, so this is rare.
func (b *Bus) retire(trim bool) {
	if trim {
		if err := b.trimTail(); err != nil {
			b.log.Warn("cannot cut the preallocated tail of a journal segment", "segment", b.f.Name(), "err", err)
		}
	}
	if b.opts.Sync == SyncInterval {
		if err := syncFile(b.f, true); err != nil {
			b.log.Error("journal fsync failed", "segment", b.f.Name(), "err", err)
		} else {
			b.fsyncs.Add(1)
		}
		b.dirty = false
	}
	_ = b.f.Close() // SyncEach: synced after its last batch
	b.f = nil
}

// trimTail cuts the zeros written ahead past the end of the active segment.
func (b *Bus) trimTail() error {
	if b.alloc <= b.end {
		return nil
	}
	if err := b.f.Truncate(b.end); err != nil {
		return fmt.Errorf("cut preallocated journal tail: %w", err)
	}
	return nil
}

// syncDirty fsyncs the active segment when it holds unsynced batches (SyncInterval),
// under wmu.
func (b *Bus) syncDirty() {
	if !b.dirty || b.f == nil {
		return
	}
	if err := syncFile(b.f, true); err != nil {
		// The batches were acknowledged at write(2); the kernel still has them.
		b.log.Error("journal fsync failed", "segment", b.f.Name(), "err", err)
		return
	}
	b.dirty = false
	b.fsyncs.Add(1)
}

func (b *Bus) flush() {
	b.mu.Lock()
	bt := b.cur
	if bt.n == 0 {
		b.mu.Unlock()
		return
	}
	b.cur = &batch{buf: b.spare[:0], done: make(chan struct{})}
	b.mu.Unlock()

	err := b.commit(bt.buf) // the publishers handle (and log) an error
	if err == nil {
		b.records.Add(int64(bt.n))
		for m := b.maxBatch.Load(); int64(bt.n) > m && !b.maxBatch.CompareAndSwap(m, int64(bt.n)); m = b.maxBatch.Load() {
		}
	}
	buf := bt.buf
	bt.err = err
	close(bt.done)
	if cap(buf) <= maxRetainedBuffer {
		b.spare = buf[:0]
	} else {
		b.spare = nil
	}
	if err == nil {
		select {
		case b.notify <- struct{}{}:
		default:
		}
	}
}

// commit appends buf to the active segment and syncs it, under the journal lock
// when other processes write too.
func (b *Bus) commit(buf []byte) error {
	if err := b.w.acquire(); err != nil {
		return err
	}
	if !b.w.solo {
		b.locked.Add(1)
	}
	err := b.appendLocked(buf)
	if uerr := b.w.release(); uerr != nil {
		// The batch is durable; only other writers are affected.
		b.log.Error("journal unlock failed", "err", uerr)
	}
	return err
}

func (b *Bus) appendLocked(buf []byte) error {
	if err := b.prepare(len(buf)); err != nil {
		return err
	}
	start, end := b.end, b.end+int64(len(buf))
	b.batches.Add(1)
	if end > b.alloc {
		if err := b.extend(end); err != nil {
			return err
		}
	}
	// Until the header's end covers them, readers do not look at these bytes, and
	// if the write fails the next batch overwrites them.
	if _, err := b.f.WriteAt(buf, start); err != nil {
		return fmt.Errorf("write to %s: %w", b.f.Name(), err)
	}
	b.hdr = appendSegmentHeader(b.hdr[:0], end, b.tab)
	if _, err := b.f.WriteAt(b.hdr[len(segMagic):20], int64(len(segMagic))); err != nil {
		b.end = -1
		return fmt.Errorf("publish end of %s: %w", b.f.Name(), err)
	}
	b.end = end
	if b.w.solo && b.ahead == nil && b.end > b.opts.SegmentSize/2 {
		// Past half of the segment, a lone writer has the next one zero-filled meanwhile.
		b.ahead = startAhead(b.journal, b.opts.SegmentSize, b.tab)
	}
	if b.opts.Sync == SyncInterval {
		b.dirty = true
		return nil
	}
	if err := syncFile(b.f, true); err != nil {
		b.end = -1
		return err // names the call and the segment
	}
	b.fsyncs.Add(1)
	return nil
}

// extend writes zeros from the preallocated end of the active segment to past need,
// a preallocChunk ahead when the segment has room for it. The batch's fdatasync
// then also commits the new size; the batches after it only overwrite.
func (b *Bus) extend(need int64) error {
	to := max(need, min(b.alloc+preallocChunk, b.opts.SegmentSize))
	to = (to + pageSize - 1) &^ (pageSize - 1)
	if err := writeZeros(b.f, b.alloc, to); err != nil {
		return err
	}
	b.alloc = to
	return nil
}

// prepare makes b.f the active segment, with its end as published in its header and
// room for need bytes. It runs under the journal lock: another process may have
// rolled the segment or written to it since this one last looked. A writer that died
// mid-batch left at most bytes past the end, which the next batch overwrites.
func (b *Bus) prepare(need int) error {
	if b.w.solo && !b.w.changed && b.f != nil && b.end >= 0 {
		// Alone since the last look: the active segment and its end are as we left them.
		return b.roll(need)
	}
	b.w.changed = false
	var size int64
	for {
		if b.f == nil {
			if err := b.openLast(); err != nil {
				return err
			}
		}
		fi, err := b.f.Stat()
		if err != nil {
			return fmt.Errorf("stat %s: %w", b.f.Name(), err)
		}
		newer, err := exists(b.next)
		if err != nil {
			return err
		}
		if newer || unlinked(fi) {
			b.retire(false)
			continue
		}
		size = fi.Size()
		break
	}
	start, end, err := segmentBounds(b.f, b.tab)
	switch {
	case errors.Is(err, errSegmentHeader):
		b.log.Error("journal segment header damaged; starting a new segment", "segment", b.f.Name(), "err", err)
		b.end = -1 // unknown: the old segment is left as it is
		return b.create(b.seg + 1)
	case err != nil:
		return err
	case start == 0:
		// Version 1, which was appended to: cut a torn tail, then write version 2.
		if err := b.cutTornTail(size); err != nil {
			return err
		}
		return b.create(b.seg + 1)
	case b.end < 0:
		// First look since opening the segment or since a failed batch. After a crash
		// of the machine the end may cover frames whose bytes never reached the
		// disk (a batch that was never acknowledged). Readers may have seen their
		// bytes, so they are left as they are and writing goes on in a new segment.
		valid, err := scanValid(b.f, start, end, b.tab, &b.scratch)
		if err != nil {
			return err
		}
		if valid < end {
			b.log.Warn("journal segment ends in a torn batch; starting a new segment",
				"segment", b.f.Name(), "offset", valid, "bytes", end-valid)
			b.end = end
			return b.create(b.seg + 1)
		}
	}
	b.end, b.alloc = end, size
	return b.roll(need)
}

// cutTornTail truncates the active version 1 segment of size size to its whole frames.
func (b *Bus) cutTornTail(size int64) error {
	from := b.end
	if from < 0 || from > size {
		from = 0
	}
	valid, err := scanValid(b.f, from, size, b.tab, &b.scratch)
	if err != nil {
		return err
	}
	if valid < size {
		if err := b.f.Truncate(valid); err != nil {
			return fmt.Errorf("truncate torn tail of %s: %w", b.f.Name(), err)
		}
		if err := syncFile(b.f, false); err != nil {
			return fmt.Errorf("fsync %s: %w", b.f.Name(), err)
		}
		b.log.Warn("journal torn tail truncated", "segment", b.f.Name(), "offset", valid, "bytes", size-valid)
	}
	b.end = valid
	return nil
}

// roll starts the next segment when need more bytes would not fit in this one.
func (b *Bus) roll(need int) error {
	if need > 0 && b.end > segHeader && b.end+int64(need) > b.opts.SegmentSize {
		return b.create(b.seg + 1)
	}
	return nil
}

// openLast opens the newest segment, creating the first one in an empty journal.
func (b *Bus) openLast() error {
	segs, err := listSegments(b.journal)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return b.create(max(b.seg+1, 1))
	}
	n := segs[len(segs)-1]
	f, err := openSegmentRW(segmentPath(b.journal, n))
	if err != nil {
		return err
	}
	// The writer that named it synced the directory, unless that is what failed
	// (create): a batch acknowledged here must not rest on a name the disk may lack.
	if err := syncDir(b.journal); err != nil {
		_ = f.Close()
		return err
	}
	b.f, b.seg, b.end, b.alloc, b.next = f, n, -1, 0, segmentPath(b.journal, n+1)
	return nil
}

// create starts segment n and makes it the active one: the segment zero-filled
// ahead when it is ready, else a new one with its header and a first chunk of zeros
// (newSegment).
//
// When it fails once the segment has its name (a failed reopen, a failed directory
// fsync, or the name already taken), the end becomes unknown, so that the next batch
// looks at the journal again and goes on in that segment (openLast syncs the
// directory): readers already see it as the newer segment, and a writer that kept to
// the old one would append where a reader takes the old one for finished and deletes it.
func (b *Bus) create(n uint64) error {
	path := segmentPath(b.journal, n)
	f, alloc := b.takeAhead(path)
	if f == nil {
		alloc = min(preallocChunk, max(b.opts.SegmentSize, segHeader))
		var err error
		if f, err = newSegment(b.journal, path, alloc, b.tab); err != nil {
			if named, _ := exists(path); named {
				b.end = -1
			}
			return err
		}
	}
	if err := syncDir(b.journal); err != nil {
		_ = f.Close()
		b.end = -1
		return err
	}
	if b.f != nil {
		b.retire(b.end >= 0)
	}
	b.f, b.seg, b.end, b.alloc, b.next = f, n, segHeader, alloc, segmentPath(b.journal, n+1)
	return nil
}

// takeAhead links the segment zero-filled ahead to path if it is ready. It returns
// no file when there is none (yet), or when it cannot be used (a writer that opened
// the journal alone meanwhile removed it as a leftover): the caller makes one.
func (b *Bus) takeAhead(path string) (*os.File, int64) {
	a := b.ahead
	if a == nil {
		return nil, 0
	}
	select {
	case <-a.done:
	default:
		return nil, 0 // still filling: it serves the roll after this one
	}
	b.ahead = nil
	if a.err != nil {
		b.log.Warn("journal segment could not be zero-filled ahead", "err", a.err)
		return nil, 0
	}
	f, err := linkSegment(a.f, path)
	if err != nil {
		b.log.Warn("journal segment zero-filled ahead is not used", "err", err)
		return nil, 0
	}
	return f, a.size
}
