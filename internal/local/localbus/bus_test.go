package localbus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/clickfact"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestPublishDrainDeliversEachFactOnce(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{Region: "eu-west-3"})
	fs := facts(t, 7)
	publishAll(t, bus, fs)

	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}

	// One merged document: 3 short URLs (vertices deduped), 7 click edges.
	if ing.numDocs() != 1 {
		t.Fatalf("ingest calls = %d, want 1 merged document", ing.numDocs())
	}
	if got := len(ing.docs[0].Vertices); got != 3 {
		t.Errorf("merged vertices = %d, want 3", got)
	}
	if err := ing.docs[0].Verify(); err != nil {
		t.Errorf("merged document: %v", err)
	}
	wantEdges := map[string]int{}
	for _, f := range fs {
		wantEdges[factEdgeID(t, f)] = 1
	}
	if diff := cmp.Diff(wantEdges, ing.edges()); diff != "" {
		t.Errorf("ingested edges (-want +got):\n%s", diff)
	}

	lines := readFacts(t, filepath.Join(dir, "facts.jsonl"))
	if len(lines) != len(fs) {
		t.Fatalf("facts.jsonl has %d lines, want %d", len(lines), len(fs))
	}
	for i, l := range lines {
		if !bytes.Equal(l.Detail, fs[i].Detail) {
			t.Errorf("line %d detail differs from the fact detail:\n%s\n%s", i, l.Detail, fs[i].Detail)
		}
		if !uuidV4.MatchString(l.ID) {
			t.Errorf("line %d id %q is not a UUID v4", i, l.ID)
		}
		want := factsLine{Version: "0", ID: l.ID, DetailType: "GraphFactProduced", Source: "shorturl",
			Account: "000000000000", Time: "2026-11-29T10:11:12Z", Region: "eu-west-3", Resources: []string{}, Detail: l.Detail}
		if diff := cmp.Diff(want, l); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i, diff)
		}
	}

	seg := segmentFiles(t, dir)
	st := readOffset(t, dir)
	wantOff := offsetState{Segment: seg[len(seg)-1], Position: segmentEnd(t, segmentPath(filepath.Join(dir, journalDir), seg[len(seg)-1])),
		FactsSize: fileSize(t, filepath.Join(dir, "facts.jsonl"))}
	if st != wantOff {
		t.Errorf("offset = %+v, want %+v", st, wantOff)
	}
	if s := c.Stats(); s.Delivered != 7 || s.Batches != 1 || s.Invalid != 0 {
		t.Errorf("consumer stats = %+v", s)
	}

	// Reopening and draining again delivers nothing new.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ing2 := &fakeIngester{}
	c2 := newConsumer(t, dir, ing2, ConsumerOptions{})
	if err := c2.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if ing2.calls != 0 {
		t.Errorf("second drain ingested %d documents, want 0", ing2.calls)
	}
	if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != 7 {
		t.Errorf("facts.jsonl has %d lines after the second drain, want 7", n)
	}
	// And then delivers what is new.
	more := facts(t, 2)
	publishAll(t, bus, more)
	if err := c2.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != 9 {
		t.Errorf("facts.jsonl has %d lines, want 9", n)
	}
}

func TestDrainSplitsBatches(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 25)
	publishAll(t, bus, fs)
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 10})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if ing.numDocs() != 3 {
		t.Errorf("ingest calls = %d, want 3 (10+10+5)", ing.numDocs())
	}
	if n := len(ing.edges()); n != 25 {
		t.Errorf("edges = %d, want 25", n)
	}
}

func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	const publishers, each = 32, 20
	fs := facts(t, publishers*each)
	var wg sync.WaitGroup
	errs := make(chan error, len(fs))
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, f := range fs[p*each : (p+1)*each] {
				if err := bus.Publish(context.Background(), f); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := bus.Stats()
	t.Logf("stats: %+v", s)
	if s.Publishes != int64(len(fs)) || s.Records != int64(len(fs)) {
		t.Errorf("publishes %d, records %d, want %d", s.Publishes, s.Records, len(fs))
	}
	if s.MaxBatch <= 1 {
		t.Errorf("max batch = %d: no group commit happened", s.MaxBatch)
	}
	if s.Fsyncs >= s.Publishes || s.Fsyncs != s.Batches {
		t.Errorf("fsyncs = %d, batches = %d, publishes = %d: want one fsync per batch, fewer than publishes",
			s.Fsyncs, s.Batches, s.Publishes)
	}

	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	for _, f := range fs {
		if got[f.IdempotencyKey] != 1 {
			t.Fatalf("%s delivered %d times, want 1", f.IdempotencyKey, got[f.IdempotencyKey])
		}
	}
}

func TestPublishContext(t *testing.T) {
	bus := openBus(t, t.TempDir(), BusOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := bus.Publish(ctx, facts(t, 1)[0]); !errors.Is(err, context.Canceled) {
		t.Errorf("publish with a canceled ctx = %v, want context.Canceled", err)
	}
	if s := bus.Stats(); s.Records != 0 {
		t.Errorf("records = %d, want 0", s.Records)
	}
}

func TestPublishRejectsBadDetail(t *testing.T) {
	bus := openBus(t, t.TempDir(), BusOptions{})
	// Publish checks in O(1) that the detail is delimited as an object; one with line
	// breaks is compacted, which validates it.
	for _, detail := range []string{"", " ", "{", "[1]", `{"a":`, "null", "{\n\"a\":\n}"} {
		err := bus.Publish(context.Background(), clickfact.Fact{IdempotencyKey: "k", Detail: []byte(detail)})
		if !errors.Is(err, ErrRejected) {
			t.Errorf("detail %q: err = %v, want ErrRejected", detail, err)
		}
	}
}

func TestPublishAfterClose(t *testing.T) {
	bus := openBus(t, t.TempDir(), BusOptions{})
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), facts(t, 1)[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("err = %v, want ErrClosed", err)
	}
}

func TestFaultAlways(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{Fault: FaultAlways})
	err := bus.Publish(context.Background(), facts(t, 1)[0])
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "FailedEntryCount=1") ||
		!strings.Contains(err.Error(), "InternalFailure") || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("err = %v, want an entry rejection with InternalFailure", err)
	}
	for _, s := range segmentFiles(t, dir) {
		if start, end := boundsAt(t, segmentPath(filepath.Join(dir, journalDir), s)); end != start {
			t.Errorf("segment %d has %d bytes of frames, want nothing journaled", s, end-start)
		}
	}
	if s := bus.Stats(); s.Records != 0 || s.Batches != 0 {
		t.Errorf("stats = %+v, want nothing written", s)
	}
	if _, err := OpenBus(dir, BusOptions{Fault: "sometimes"}); err == nil {
		t.Error("fault \"sometimes\" accepted")
	}
}

// frame frames payload as the journal does.
func frame(payload string) []byte {
	return appendFrame(nil, []byte(payload), crc32.MakeTable(crc32.Castagnoli))
}

// tornTails are what a crash can leave where the next batch goes.
func tornTails() []struct {
	name string
	tail []byte
} {
	good := frame(`{"x":1}`)
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 0xff
	return []struct {
		name string
		tail []byte
	}{
		{"partial header", good[:5]},
		{"partial payload", good[:len(good)-3]},
		{"bad crc", badCRC},
		{"zero length", make([]byte, 12)},
	}
}

// publishFourOfSix publishes four of six facts into a new bus in a temporary
// directory, closes it, and returns the directory, its one segment and the facts.
func publishFourOfSix(t *testing.T) (dir, seg string, fs []clickfact.Fact) {
	t.Helper()
	fs = facts(t, 6)
	dir, seg = closedJournal(t, fs[:4])
	return dir, seg, fs
}

// drainBeforeTorn drains the four facts a torn-tail test journaled before the
// crash, and checks that the offset stops at validEnd (unless negative).
func drainBeforeTorn(t *testing.T, dir string, ing *fakeIngester, validEnd int64) *Consumer {
	t.Helper()
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != 4 {
		t.Fatalf("delivered %d facts before the torn bytes, want 4", n)
	}
	if st := readOffset(t, dir); validEnd >= 0 && st.Position != validEnd {
		t.Errorf("offset %d, want %d (the end of the whole records)", st.Position, validEnd)
	}
	return c
}

// drainAfterTorn drains the two facts published after the crash, and checks that
// all six arrived and that corrupt torn bytes were stepped over as damage.
func drainAfterTorn(t *testing.T, c *Consumer, ing *fakeIngester, corrupt int64) {
	t.Helper()
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != 6 {
		t.Errorf("delivered %d facts, want 6", n)
	}
	if s := c.Stats(); s.Invalid != 0 || s.CorruptBytes != corrupt {
		t.Errorf("consumer stats = %+v, want %d bytes of damage stepped over", s, corrupt)
	}
}

// A writer that died mid-batch left bytes past the published end: readers never
// look at them, and the next writer goes on in a new segment (recover).
func TestUnpublishedTailIsIgnored(t *testing.T) {
	for _, tt := range tornTails() {
		t.Run(tt.name, func(t *testing.T) {
			dir, seg, fs := publishFourOfSix(t)
			validEnd := segmentEnd(t, seg)
			writePastEnd(t, seg, tt.tail) // the crash

			ing := &fakeIngester{}
			c := drainBeforeTorn(t, dir, ing, validEnd)

			bus2 := openBus(t, dir, BusOptions{})
			publishAll(t, bus2, fs[4:])
			if got := segmentEnd(t, seg); got != validEnd {
				t.Errorf("the old segment's end moved from %d to %d", validEnd, got)
			}
			drainAfterTorn(t, c, ing, 0)
			if segs := segmentFiles(t, dir); !slices.Equal(segs, []uint64{2}) {
				t.Errorf("segments %v, want the new one", segs)
			}
		})
	}
}

// After a crash of the machine, a segment's end on disk can be short of what the
// consumer read from the page cache and saved as its offset. The next writer goes on
// in a new segment, so that nothing it acknowledges lies below that offset.
func TestOffsetPastTheEndOnDiskLosesNothingAfter(t *testing.T) {
	fs := facts(t, 30)
	dir, seg := closedJournal(t, fs[:10])
	onDisk, err := os.ReadFile(seg) // all of it synced
	if err != nil {
		t.Fatal(err)
	}
	// Acknowledged at write(2), not synced yet, and delivered from the page cache.
	bus2 := openBus(t, dir, BusOptions{Sync: SyncInterval, SyncEvery: time.Hour})
	publishAll(t, bus2, fs[10:20])
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	// The machine crashes: each segment is as last synced (segment 1 as closed, any
	// newer one as made: no frames), and the consumer's files as they are.
	after := t.TempDir()
	snapshot(t, dir, after, false)
	for _, n := range segmentFiles(t, after) {
		synced := appendSegmentHeader(nil, segHeader, crcTable())
		if n == 1 {
			synced = onDisk
		}
		if err := os.WriteFile(segmentPath(filepath.Join(after, journalDir), n), synced, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A consumer started before any writer finds the newest segment shorter than its
	// offset, which it cannot tell from a damaged offset: it stops, and says to start
	// a writer first.
	early := newConsumer(t, after, &fakeIngester{}, ConsumerOptions{})
	if err := early.Drain(ctxTimeout(t)); !errors.Is(err, errOffsetPastEnd) {
		t.Errorf("drain before any writer = %v, want errOffsetPastEnd", err)
	}
	if err := early.Close(); err != nil {
		t.Fatal(err)
	}
	bus3 := openBus(t, after, BusOptions{})
	publishAll(t, bus3, fs[20:]) // acknowledged and synced after the reboot
	if err := bus3.Close(); err != nil {
		t.Fatal(err)
	}
	got := drainFresh(t, after).edges()
	for i, f := range fs[20:] {
		if got[factEdgeID(t, f)] == 0 {
			t.Errorf("event %d, acknowledged after the reboot, was not delivered", 20+i)
		}
	}
}

// After a crash of the machine, the published end may cover a batch whose bytes
// never reached the disk (it was never acknowledged). The consumer waits at it while
// the segment is the last; the next writer leaves it be and writes on in a new
// segment, and the consumer then steps over the damage to the new segment.
func TestTornBatchUnderTheEndStartsANewSegment(t *testing.T) {
	for _, tt := range tornTails() {
		t.Run(tt.name, func(t *testing.T) {
			dir, seg, fs := publishFourOfSix(t)
			appendBytes(t, seg, tt.tail) // written and published, but torn

			ing := &fakeIngester{}
			c := drainBeforeTorn(t, dir, ing, -1)

			bus2 := openBus(t, dir, BusOptions{})
			publishAll(t, bus2, fs[4:])
			if segs := segmentFiles(t, dir); !slices.Equal(segs, []uint64{1, 2}) {
				t.Fatalf("segments %v, want the torn one and a new one", segs)
			}
			drainAfterTorn(t, c, ing, int64(len(tt.tail)))
		})
	}
}

// A journal written before segments had a header (version 1) is read as it was;
// a torn tail is cut, and writing goes on in a new segment.
func TestVersion1TornTailIsTruncated(t *testing.T) {
	for _, tt := range tornTails() {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			seg := segmentPath(filepath.Join(dir, journalDir), 1)
			fs := facts(t, 6)
			validEnd := journalFacts(t, dir, fs[:4])
			writePastEnd(t, seg, tt.tail) // the crash

			ing := &fakeIngester{}
			c := drainBeforeTorn(t, dir, ing, validEnd)

			bus := openBus(t, dir, BusOptions{}) // the next writer truncates
			if got := fileSize(t, seg); got != validEnd {
				t.Errorf("segment size after reopen = %d, want %d", got, validEnd)
			}
			publishAll(t, bus, fs[4:])
			if segs := segmentFiles(t, dir); len(segs) != 2 {
				t.Errorf("segments %v, want a new one after the version 1 segment", segs)
			}
			drainAfterTorn(t, c, ing, 0)
		})
	}
}

// A writer that died mid-batch in another process leaves bytes past the end while
// this one keeps running: the next batch overwrites them.
func TestLiveWriterTruncatesTornTailOfAnother(t *testing.T) {
	dir := t.TempDir()
	seg := segmentPath(filepath.Join(dir, journalDir), 1)
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 4)
	publishAll(t, bus, fs[:2])
	other := openBus(t, dir, BusOptions{})
	publishAll(t, other, fs[2:3])
	writePastEnd(t, seg, frame(`{"torn":true}`)[:9])
	publishAll(t, bus, fs[3:])

	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != 4 {
		t.Errorf("delivered %d, want 4", n)
	}
	if s := c.Stats(); s.CorruptBytes != 0 || s.Invalid != 0 {
		t.Errorf("consumer stats = %+v: the torn bytes should have been overwritten", s)
	}
}

// Damage in the middle of a segment (a disk problem) is stepped over, never blocks.
func TestDamageInTheMiddleIsSteppedOver(t *testing.T) {
	fs := facts(t, 3)
	dir, seg := closedJournal(t, fs)
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	_, n, _ := parseFrame(b[segHeader:], crcTable())
	b[segHeader+n+frameHeader+20] ^= 0xff // flip a byte of the second record
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	got := ing.edges()
	if got[factEdgeID(t, fs[0])] != 1 || got[factEdgeID(t, fs[2])] != 1 || len(got) != 2 {
		t.Errorf("delivered %v, want the first and third facts", got)
	}
	if s := c.Stats(); s.CorruptBytes == 0 {
		t.Errorf("corrupt bytes not counted: %+v", s)
	}
}

func TestInvalidRecordsAreSkipped(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 2)
	publishAll(t, bus, fs[:1])
	// A well-framed event whose detail is not a click fact, and a record that is
	// not an event at all.
	if err := bus.Publish(context.Background(), clickfact.Fact{IdempotencyKey: "x", Detail: []byte(`{"fact_type":"other"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	appendBytes(t, segmentPath(filepath.Join(dir, journalDir), 1), frame(`{"hello":"world"}`))
	bus = openBus(t, dir, BusOptions{})
	publishAll(t, bus, fs[1:])

	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != 2 {
		t.Errorf("delivered %d facts, want 2", n)
	}
	if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != 2 {
		t.Errorf("facts.jsonl has %d lines, want 2", n)
	}
	if s := c.Stats(); s.Invalid != 2 {
		t.Errorf("invalid = %d, want 2", s.Invalid)
	}
}

func TestSegmentsRollAndAreDeleted(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{SegmentSize: 8 << 10})
	fs := facts(t, 40) // ~1.8 KB each: about ten segments
	publishAll(t, bus, fs)
	if n := len(segmentFiles(t, dir)); n < 5 {
		t.Fatalf("%d segments, want several", n)
	}
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != 40 {
		t.Errorf("delivered %d, want 40", n)
	}
	if segs := segmentFiles(t, dir); len(segs) != 1 {
		t.Errorf("segments left after drain: %v, want only the active one", segs)
	}
	publishAll(t, bus, fs[:1]) // the writer still appends to the right place
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != 41 {
		t.Errorf("facts lines = %d, want 41", n)
	}
}

// Two Bus instances on one dir, as linoone serve and linoone replay are, publish
// concurrently with small segments while the consumer runs and deletes segments.
func TestTwoBusesOnOneDir(t *testing.T) {
	dir := t.TempDir()
	a := openBus(t, dir, BusOptions{SegmentSize: 16 << 10})
	b := openBus(t, dir, BusOptions{SegmentSize: 16 << 10})
	fs := facts(t, 400)

	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{PollInterval: 5 * time.Millisecond, Notify: a.Notify()})
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error)
	go func() { runDone <- c.Run(ctx) }()

	var wg sync.WaitGroup
	for i, bus := range []*Bus{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; j < len(fs); j += 4 {
				if err := bus.Publish(context.Background(), fs[j]); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	for _, f := range fs {
		if got[f.IdempotencyKey] != 1 {
			t.Fatalf("%s delivered %d times, want 1", f.IdempotencyKey, got[f.IdempotencyKey])
		}
	}
	if s := c.Stats(); s.CorruptBytes != 0 || s.Invalid != 0 {
		t.Errorf("consumer stats = %+v", s)
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Records+sb.Records != int64(len(fs)) {
		t.Errorf("records %d + %d, want %d", sa.Records, sb.Records, len(fs))
	}
}

func TestIngestFailuresRetryWithoutLossOrDuplicates(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 5)
	publishAll(t, bus, fs[:2])
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	before := readOffset(t, dir)
	publishAll(t, bus, fs[2:])

	var offsets []offsetState
	ing.failures = 3
	ing.onFail = func() { offsets = append(offsets, readOffset(t, dir)) }
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	for i, st := range offsets {
		if st != before {
			t.Errorf("offset during failure %d = %+v, want %+v (not advanced)", i, st, before)
		}
	}
	if len(offsets) != 3 || ing.calls != 5 {
		t.Errorf("failures seen %d, ingest calls %d; want 3 and 5", len(offsets), ing.calls)
	}
	if s := c.Stats(); s.Retries != 3 || s.Delivered != 5 {
		t.Errorf("stats = %+v", s)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	for _, f := range fs {
		if got[f.IdempotencyKey] != 1 {
			t.Errorf("%s in facts.jsonl %d times, want 1", f.IdempotencyKey, got[f.IdempotencyKey])
		}
	}
}

func TestDrainGivesUpWhenContextEnds(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	publishAll(t, bus, facts(t, 1))
	ing := &fakeIngester{failures: 1 << 30}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("drain = %v, want DeadlineExceeded", err)
	}
	if st := readOffset(t, dir); st != (offsetState{}) {
		t.Errorf("offset = %+v, want none saved", st)
	}
	if ing.calls > 20 {
		t.Errorf("%d ingest calls in 50ms: backoff is not working", ing.calls)
	}
}

// A crash after the facts were appended but before the offset moved: the batch is
// delivered again (ingest is idempotent) and facts.jsonl still holds it once.
func TestRedeliveryAfterCrashKeepsFactsOnce(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 6)
	publishAll(t, bus, fs[:3])
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, consumerOffset))
	if err != nil {
		t.Fatal(err)
	}
	publishAll(t, bus, fs[3:])
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The crash: the offset write of the last batch never happened.
	if err := os.WriteFile(filepath.Join(dir, consumerOffset), saved, 0o644); err != nil {
		t.Fatal(err)
	}

	ing2 := &fakeIngester{}
	c2 := newConsumer(t, dir, ing2, ConsumerOptions{})
	if err := c2.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing2.edges()); n != 3 {
		t.Errorf("redelivered %d facts to ingest, want the 3 of the unfinished batch", n)
	}
	lines := readFacts(t, filepath.Join(dir, "facts.jsonl"))
	got := keyCounts(t, lines)
	if len(lines) != 6 || len(got) != 6 {
		t.Errorf("facts.jsonl has %d lines, %d keys; want 6 and 6", len(lines), len(got))
	}
}

func TestOneConsumerPerDir(t *testing.T) {
	dir := t.TempDir()
	newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
	_, err := NewConsumer(dir, ConsumerOptions{Ingester: &fakeIngester{}, FactsPath: filepath.Join(dir, "f.jsonl")})
	if !errors.Is(err, ErrConsumerRunning) {
		t.Errorf("second consumer: %v, want ErrConsumerRunning", err)
	}
}

func TestRunWakesOnNotify(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{PollInterval: time.Hour, Notify: bus.Notify()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(20 * time.Millisecond) // let Run go idle first
	publishAll(t, bus, facts(t, 1))
	waitFor(t, func() bool { return ing.numDocs() == 1 })
}

func TestRunPollsForOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{PollInterval: 10 * time.Millisecond}) // no Notify
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	publishAll(t, bus, facts(t, 2))
	waitFor(t, func() bool { return len(ing.edges()) == 2 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func BenchmarkPublishParallel(b *testing.B) {
	for _, par := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("goroutines_per_proc=%d", par), func(b *testing.B) {
			bus := openBus(b, b.TempDir(), BusOptions{Logger: testLogger(b)})
			f := facts(b, 1)[0]
			b.SetParallelism(par)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bus.Publish(context.Background(), f); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			s := bus.Stats()
			b.ReportMetric(float64(s.Fsyncs)/float64(s.Publishes), "fsyncs/publish")
			b.ReportMetric(float64(s.Records)/float64(s.Batches), "records/batch")
		})
	}
}

// TestSyncInterval: acknowledged at its batch's write(2) — visible to another
// process's consumer at once — and fsync'ed on a timer rather than per batch.
func TestSyncInterval(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{Sync: SyncInterval, SyncEvery: 10 * time.Millisecond})
	fs := facts(t, 200)
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Go(func() {
			if err := bus.Publish(context.Background(), f); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Before any Close: a consumer (as another process would) sees every fact.
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	for _, f := range fs {
		if got[f.IdempotencyKey] != 1 {
			t.Fatalf("%s delivered %d times, want 1", f.IdempotencyKey, got[f.IdempotencyKey])
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for bus.Stats().Fsyncs == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s := bus.Stats()
	if s.Fsyncs == 0 || s.Fsyncs > s.Batches {
		t.Fatalf("fsyncs = %d, batches = %d: want timer fsyncs, at most one per batch", s.Fsyncs, s.Batches)
	}
	// Concurrent publishers share writes, as in SyncEach.
	if s.Batches >= s.Records {
		t.Fatalf("%d records in %d batches: want group commit", s.Records, s.Batches)
	}
}

// TestWritersTakeTheLockOnlyWhenShared: a bus alone on its journal writes without
// journal.lock; a second bus announces itself, the first yields within a check
// interval and both write under the lock; when the second closes, the first is alone
// again. A dead process's announcement does not keep a bus from being alone.
func TestWritersTakeTheLockOnlyWhenShared(t *testing.T) {
	dir := t.TempDir()
	// A leftover announcement, unlocked: its process died.
	if err := os.MkdirAll(filepath.Join(dir, writersDir), 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, writersDir, "12345-dead")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fs := facts(t, 60)
	a := openBus(t, dir, BusOptions{})
	publishAll(t, a, fs[:20])
	if s := a.Stats(); s.Locked != 0 {
		t.Fatalf("a bus alone took the lock for %d batches", s.Locked)
	}
	waitFor(t, func() bool { _, err := os.Stat(stale); return errors.Is(err, os.ErrNotExist) })

	b := openBus(t, dir, BusOptions{}) // blocks until a yields
	publishAll(t, b, fs[20:40])
	publishAll(t, a, fs[40:50])
	if sa, sb := a.Stats(), b.Stats(); sa.Locked == 0 || sb.Locked == 0 {
		t.Fatalf("shared buses wrote without the lock: a %+v, b %+v", sa, sb)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		before := a.Stats().Locked
		publishAll(t, a, fs[50:51])
		return a.Stats().Locked == before
	})
	entries, _ := os.ReadDir(filepath.Join(dir, writersDir))
	if len(entries) != 0 {
		t.Errorf("announcements left behind: %v", entries)
	}
}

// TestRunPacesWhileBusyAndReportsLag: while Busy says redirects are being served, Run
// pauses between batches and makes them small; otherwise it never does. Lag counts the journal bytes not
// delivered yet and is zero once everything is.
func TestRunPacesWhileBusyAndReportsLag(t *testing.T) {
	for _, busy := range []bool{false, true} {
		t.Run(fmt.Sprintf("busy=%v", busy), func(t *testing.T) {
			dir := t.TempDir()
			bus := openBus(t, dir, BusOptions{})
			fs := facts(t, 40)
			publishAll(t, bus, fs)
			ing := &fakeIngester{}
			c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 10, BusyBatch: 2, PollInterval: 5 * time.Millisecond, Busy: func() bool { return busy }})
			lag, err := c.Lag()
			if err != nil || lag == 0 {
				t.Fatalf("lag before delivery = %d, %v", lag, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- c.Run(ctx) }()
			waitFor(t, func() bool { lag, err := c.Lag(); return err == nil && lag == 0 })
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if n := len(ing.edges()); n != len(fs) {
				t.Fatalf("delivered %d of %d", n, len(fs))
			}
			if paces := c.Stats().Paces; (paces > 0) != busy {
				t.Fatalf("busy=%v: %d pauses", busy, paces)
			}
			// While busy, batches shrink to BusyBatch, so that one ingest never
			// holds the core long.
			want := int64(len(fs) / 10)
			if busy {
				want = int64(len(fs) / 2)
			}
			if b := c.Stats().Batches; b != want {
				t.Fatalf("busy=%v: %d batches for %d events, want %d", busy, b, len(fs), want)
			}
		})
	}
}

// TestPaceWait: while Busy, Run waits PaceFactor times what a batch took (2 unless
// set, also for a factor that is not a positive number), half that while catching
// up, and never more than maxPace, however large the factor.
func TestPaceWait(t *testing.T) {
	const took = 10 * time.Millisecond
	for _, tc := range []struct {
		factor        float64
		gentle, catch time.Duration
	}{
		{0, 20 * time.Millisecond, 10 * time.Millisecond},
		{-1, 20 * time.Millisecond, 10 * time.Millisecond},
		{math.NaN(), 20 * time.Millisecond, 10 * time.Millisecond},
		{1, 10 * time.Millisecond, 5 * time.Millisecond},
		{0.5, 5 * time.Millisecond, 2500 * time.Microsecond},
		{1e300, maxPace, maxPace},
		{math.Inf(1), maxPace, maxPace},
	} {
		dir := t.TempDir()
		c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{PaceFactor: tc.factor})
		if got := c.paceWait(took, false); got != tc.gentle {
			t.Errorf("factor %v: wait %v after a %v batch, want %v", tc.factor, got, took, tc.gentle)
		}
		if got := c.paceWait(took, true); got != tc.catch {
			t.Errorf("factor %v: catching up, wait %v after a %v batch, want %v", tc.factor, got, took, tc.catch)
		}
	}
}

func TestBusActive(t *testing.T) {
	now := time.Unix(1000, 0)
	bus := openBus(t, t.TempDir(), BusOptions{Now: func() time.Time { return now }})
	if bus.Active(time.Second) {
		t.Fatal("a bus that never published is active")
	}
	publishAll(t, bus, facts(t, 1))
	if !bus.Active(time.Second) {
		t.Fatal("a bus that just published is not active")
	}
	now = now.Add(2 * time.Second)
	if bus.Active(time.Second) {
		t.Fatal("a bus idle for 2s is active within 1s")
	}
}

// TestBusActiveAfterTheClockStepsBack: a wall clock stepped back after the last
// redirect (NTP, an operator) must not keep the bus active, which would hold the
// inline consumer to its busy pace for as long as the step, with no redirects.
func TestBusActiveAfterTheClockStepsBack(t *testing.T) {
	now := time.Unix(1_800_000_000, 0) // no monotonic reading: only the wall steps
	bus := openBus(t, t.TempDir(), BusOptions{Now: func() time.Time { return now }})
	publishAll(t, bus, facts(t, 1))
	now = now.Add(-time.Hour)
	for _, idle := range []time.Duration{time.Second, 10 * time.Minute, 59 * time.Minute} {
		if bus.Active(100 * time.Millisecond) {
			t.Errorf("idle %v after the clock stepped back an hour: active", idle)
		}
		now = now.Add(idle)
	}
	// With the monotonic clock (time.Now's), elapsed time ignores wall steps.
	mono := openBus(t, t.TempDir(), BusOptions{})
	publishAll(t, mono, facts(t, 1))
	if !mono.Active(time.Minute) {
		t.Error("a bus that just published is not active")
	}
}

// TestBatchesStayUnderTheBodyLimit: however many events wait, one ingest body is at
// most MaxBatchBytes (or one event's), so Persist never refuses a batch for its size
// — a refusal the consumer would retry forever.
func TestBatchesStayUnderTheBodyLimit(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 50)
	publishAll(t, bus, fs)
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 1000, MaxBatchBytes: 4 << 10})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != len(fs) {
		t.Fatalf("delivered %d of %d", n, len(fs))
	}
	if ing.largest > 4<<10 || c.Stats().Batches < 2 {
		t.Fatalf("largest body %d bytes in %d batches, want at most 4 KiB", ing.largest, c.Stats().Batches)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	for _, f := range fs {
		if got[f.IdempotencyKey] != 1 {
			t.Fatalf("%s delivered %d times", f.IdempotencyKey, got[f.IdempotencyKey])
		}
	}
}

// TestFilesAreTheOwnersAlone: the journal and the facts log hold visitors'
// addresses: whatever the data dir's mode, they are created 0600.
func TestFilesAreTheOwnersAlone(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bus := openBus(t, dir, BusOptions{})
	publishAll(t, bus, facts(t, 1))
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{segmentPath(filepath.Join(dir, journalDir), 1), filepath.Join(dir, "facts.jsonl")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
}

// A segment is written over zeros written ahead of it, so that a batch's fdatasync
// flushes data and commits no new size; a clean close cuts the zeros off again.
func TestSegmentsArePreallocated(t *testing.T) {
	dir := t.TempDir()
	seg := segmentPath(filepath.Join(dir, journalDir), 1)
	bus := openBus(t, dir, BusOptions{})
	publishAll(t, bus, facts(t, 3))
	checkActiveSegmentName(t, bus, seg)
	end := segmentEnd(t, seg)
	if size := fileSize(t, seg); size < end+preallocChunk/2 {
		t.Errorf("segment size %d with frames up to %d: nothing written ahead", size, end)
	}
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(b[end:], func(c byte) bool { return c != 0 }); i >= 0 {
		t.Errorf("byte %d past the end is %#x, want zeros", end+int64(i), b[end+int64(i)])
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if size := fileSize(t, seg); size != end {
		t.Errorf("segment size after close = %d, want its end %d", size, end)
	}
	if s := bus.Stats(); s.Batches == 0 || s.Fsyncs != s.Batches {
		t.Errorf("stats = %+v, want a sync per batch", s)
	}
}

// checkActiveSegmentName checks that the bus has its active segment open under the
// segment's own name, which its messages give.
func checkActiveSegmentName(t *testing.T, bus *Bus, want string) {
	t.Helper()
	bus.wmu.Lock()
	name := bus.f.Name()
	bus.wmu.Unlock()
	if name != want {
		t.Errorf("the active segment is open as %s, want its own name (messages give it)", name)
	}
}

// Past half of a segment, a lone writer has the next one zero-filled whole by
// another goroutine; rolling links it into place, and nothing of it is left over.
func TestRollTakesTheSegmentFilledAhead(t *testing.T) {
	const size = 64 << 10
	dir := t.TempDir()
	journal := filepath.Join(dir, journalDir)
	bus := openBus(t, dir, BusOptions{SegmentSize: size})
	fs := facts(t, 60) // ~1.8 KB each: about two segments
	i := 0
	for ; segmentEnd(t, segmentPath(journal, 1)) <= size/2; i++ {
		publishAll(t, bus, fs[i:i+1])
	}
	var filled string
	waitFor(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(journal, tempSegmentPrefix+"*"))
		if len(m) == 1 && fileSize(t, m[0]) == size {
			filled = m[0]
		}
		return filled != ""
	})
	// Its full size is written before its last fdatasync returns, and the roll takes
	// it only once the filling is done: wait for that too, or under load the roll
	// makes a segment of its own.
	bus.wmu.Lock()
	ahead := bus.ahead
	bus.wmu.Unlock()
	if ahead == nil {
		t.Fatal("no segment is being filled ahead")
	}
	<-ahead.done
	for ; len(segmentFiles(t, dir)) < 2; i++ {
		publishAll(t, bus, fs[i:i+1])
	}
	if _, err := os.Stat(filled); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the segment filled ahead is still at %s (%v)", filled, err)
	}
	if got := fileSize(t, segmentPath(journal, 2)); got != size {
		t.Errorf("segment 2 has %d bytes, want the %d zero-filled ahead", got, size)
	}
	checkActiveSegmentName(t, bus, segmentPath(journal, 2))
	if got, end := fileSize(t, segmentPath(journal, 1)), segmentEnd(t, segmentPath(journal, 1)); got != end {
		t.Errorf("rolled segment 1 keeps %d bytes past its end", got-end)
	}
	publishAll(t, bus, fs[i:])
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(journal, tempSegmentPrefix+"*")); len(m) != 0 {
		t.Errorf("left over after close: %v", m)
	}
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(ing.edges()); n != len(fs) {
		t.Errorf("delivered %d, want %d", n, len(fs))
	}
}

// Segments a crash left half-made are removed by the next writer that has the
// journal to itself.
func TestHalfMadeSegmentsAreRemoved(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, journalDir)
	if err := os.MkdirAll(journal, 0o700); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(journal, tempSegmentPrefix+"123")
	if err := os.WriteFile(left, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	openBus(t, dir, BusOptions{})
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there (%v)", left, err)
	}
}

// TestCatchUpFollowsTheBacklog: Run catches up once a backlog of at least the
// low-water mark has grown through two consecutive windows, keeps catching up while it
// is large even as it shrinks, and paces gently again once it is under the mark. The
// backlog is sampled once a window, and a failed sample changes nothing.
func TestCatchUpFollowsTheBacklog(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := catchUp{window: time.Second}
	samples := 0
	step := func(sec float64, lag int64, err error, want bool) {
		t.Helper()
		now := t0.Add(time.Duration(sec * float64(time.Second)))
		if got := p.observe(now, func() (int64, error) { samples++; return lag, err }); got != want {
			t.Fatalf("at %.1fs with a backlog of %d: catch up = %v, want %v", sec, lag, got, want)
		}
	}
	const low = catchUpLowWater
	step(0, 1000, nil, false)
	step(0.5, 8*low, nil, false) // within the first window: not sampled
	if samples != 1 {
		t.Fatalf("%d samples in one window, want 1", samples)
	}
	step(1, 2000, nil, false)         // grew through one window
	step(2, 3000, nil, false)         // and a second, but it is small
	step(3, 2*low, nil, true)         // and a third, to the low-water mark or more
	step(4, 4*low, nil, true)         // still growing
	step(5, 2*low, nil, true)         // shrinking, but above the mark
	step(6, 0, errors.New("x"), true) // a failed sample changes nothing
	step(7, low-1, nil, false)        // under the mark
	step(8, 2*low, nil, false)        // grew through one window only
	step(9, 2*low-1, nil, false)      // and shrank: the count starts again
	step(10, 3*low, nil, false)
	step(11, 4*low, nil, true)
}

// TestRunCatchesUpWhenTheBacklogGrowsWhileBusy: under traffic that outruns the gentle
// pace (one event a batch here), Run switches to catch-up batches (ten events) rather
// than fall further behind for as long as the traffic lasts; every event is still
// delivered once.
func TestRunCatchesUpWhenTheBacklogGrowsWhileBusy(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	ing := &fakeIngester{}
	var busy atomic.Bool
	busy.Store(true)
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 100, BusyBatch: 1, CatchUpAfter: 20 * time.Millisecond,
		PollInterval: 5 * time.Millisecond, Notify: bus.Notify(), Busy: busy.Load})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()

	// Publish, four at a time, until Run catches up (or for at most 10 s).
	var fs []clickfact.Fact
	for deadline := time.Now().Add(10 * time.Second); c.Stats().CatchUps == 0 && time.Now().Before(deadline); {
		more := facts(t, 4)
		var wg sync.WaitGroup
		for _, f := range more {
			wg.Go(func() { // not publishAll: t.Fatal belongs to the test's goroutine
				if err := bus.Publish(context.Background(), f); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		fs = append(fs, more...)
	}
	caughtUp := c.Stats().CatchUps
	largest := 0 // of the batches delivered while busy
	ing.mu.Lock()
	for _, d := range ing.docs {
		largest = max(largest, len(d.Edges))
	}
	ing.mu.Unlock()
	busy.Store(false)
	waitFor(t, func() bool { lag, err := c.Lag(); return err == nil && lag == 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if caughtUp == 0 {
		t.Fatalf("no catch-up batch while the backlog grew (%+v)", c.Stats())
	}
	if largest <= 1 || largest > 10 {
		t.Fatalf("largest batch while busy %d events: catch-up batches hold ten (10 × BusyBatch)", largest)
	}
	got := ing.edges()
	for _, f := range fs {
		if n := got[factEdgeID(t, f)]; n != 1 {
			t.Fatalf("%s delivered %d times", f.IdempotencyKey, n)
		}
	}
}

// datasync reports a file closed meanwhile as os.ErrClosed, as Sync does: the interval
// sync (syncNow) takes that for a segment rolled or closed under it, not a failure.
func TestDatasyncOfAClosedFileIsErrClosed(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "seg")
	if err != nil {
		t.Fatal(err)
	}
	if err := datasync(f); err != nil {
		t.Fatalf("datasync of an open file: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	err = datasync(f)
	var pe *os.PathError
	if !errors.Is(err, os.ErrClosed) || !errors.As(err, &pe) || pe.Path != f.Name() {
		t.Fatalf("datasync of a closed file = %v, want os.ErrClosed naming %s", err, f.Name())
	}
}

// A roll that fails once the next segment has its name (its directory fsync or its
// reopen failed; here the name is taken before the roll) leaves that segment to
// readers as the newer one, and they take the old one for finished. The writer goes
// on in it from the next batch, instead of failing every roll after and appending
// small batches to the segment a reader deletes.
func TestWriterGoesOnInTheSegmentARollNamed(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, journalDir)
	bus := openBus(t, dir, BusOptions{SegmentSize: 64 << 10})
	fs := facts(t, 60)
	publishAll(t, bus, fs[:20]) // ~38 KB: the next roll is a dozen events away
	if segs := segmentFiles(t, dir); !slices.Equal(segs, []uint64{1}) {
		t.Fatalf("segments %v before the roll, want [1]", segs)
	}
	if err := os.WriteFile(segmentPath(journal, 2), appendSegmentHeader(nil, segHeader, crcTable()), 0o600); err != nil {
		t.Fatal(err)
	}
	var acked []clickfact.Fact
	failed := 0
	for _, f := range fs[20:] {
		if err := bus.Publish(context.Background(), f); err != nil {
			failed++
			continue
		}
		acked = append(acked, f)
	}
	if failed > 1 {
		t.Errorf("%d publishes failed after the roll's segment was named; want at most the one that rolled", failed)
	}
	if got := segmentEnd(t, segmentPath(journal, 2)); got == segHeader {
		t.Error("nothing was written to the segment the roll named")
	}
	got := drainFresh(t, dir).edges()
	for _, f := range append(fs[:20:20], acked...) {
		if got[factEdgeID(t, f)] == 0 {
			t.Errorf("acknowledged event %s was not delivered", f.IdempotencyKey)
		}
	}
}

// TestPublishReturnsAfterItsSync: in SyncEach a publish is acknowledged only once
// its batch's sync has returned. The bus's own Fsyncs counter cannot show that (it
// counts what the code says it did), so the test holds the segment's syncs back.
func TestPublishReturnsAfterItsSync(t *testing.T) {
	w := watchSyncs(t)
	bus := openBus(t, t.TempDir(), BusOptions{})
	gate := make(chan struct{})
	w.holdWith(func(name string) <-chan struct{} {
		if strings.HasSuffix(name, ".log") {
			return gate
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- bus.Publish(context.Background(), facts(t, 1)[0]) }()
	select {
	case err := <-done:
		t.Fatalf("Publish returned (%v) while its batch's sync was held", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSyncIntervalSyncsOnItsTimerOnly: in SyncInterval no publish waits for a sync
// of its own; with a timer of an hour, every publish is acknowledged and the active
// segment is not synced once.
func TestSyncIntervalSyncsOnItsTimerOnly(t *testing.T) {
	w := watchSyncs(t)
	bus := openBus(t, t.TempDir(), BusOptions{Sync: SyncInterval, SyncEvery: time.Hour})
	w.since() // the segment made at open
	publishAll(t, bus, facts(t, 50))
	for _, name := range w.since() {
		if strings.HasSuffix(name, ".log") {
			t.Fatalf("segment %s synced before the interval's timer", name)
		}
	}
}
