package localbus

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzJournalSegment gives the consumer and the writer a journal segment of any
// bytes, as a crash or a damaged disk might leave it: the consumer delivers what is
// there without panicking or hanging, the next writer opens the journal and finds
// where to write, and what it writes afterwards is delivered once. The backlog read
// from the data dir (linoone status) agrees with the consumer before, and is empty
// after. The writer is driven without its goroutine, so that a run's coverage
// depends on its input alone.
func FuzzJournalSegment(f *testing.F) {
	dir := f.TempDir()
	bus := openBus(f, dir, BusOptions{})
	publishAll(f, bus, facts(f, 3))
	if err := bus.Close(); err != nil {
		f.Fatal(err)
	}
	v2, err := os.ReadFile(segmentPath(filepath.Join(dir, journalDir), 1))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v2)
	f.Add(v2[:len(v2)-7])             // torn under the end
	f.Add(append(v2, frame(`{}`)...)) // past the end
	f.Add(v2[segHeader:])             // version 1
	f.Add(v2[segHeader : len(v2)-5])  // version 1, torn
	f.Add(v2[:20])                    // a header alone
	f.Add([]byte{})
	quiet := slog.New(slog.DiscardHandler)
	late := facts(f, 4)[3]
	lateFrame, err := (&encoder{}).encode(late, fixedNow, defaultRegion, crcTable())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seg []byte) {
		dir := t.TempDir()
		journal := filepath.Join(dir, journalDir)
		if err := os.MkdirAll(journal, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(segmentPath(journal, 1), seg, 0o600); err != nil {
			t.Fatal(err)
		}
		ing := &fakeIngester{}
		c := newConsumer(t, dir, ing, ConsumerOptions{Logger: quiet, Pipeline: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		backlog, berr := ReadBacklog(dir)
		if _, newer := newerFormat(seg); newer {
			// A later program's segment is left alone (TestNewerSegmentFormatIsLeftAlone).
			if err := c.Drain(ctx); !errors.Is(err, errNewerSegment) {
				t.Fatalf("drain of a newer format's segment: %v, want errNewerSegment", err)
			}
			if !errors.Is(berr, errNewerSegment) {
				t.Fatalf("backlog of a newer format's segment: %+v, %v; want errNewerSegment", backlog, berr)
			}
			return
		}
		// linoone status reads what the consumer would count, without its lock.
		if lag, err := c.Lag(); (berr == nil) != (err == nil) || backlog.Bytes != lag {
			t.Fatalf("backlog %+v, %v; the consumer's lag %d, %v", backlog, berr, lag, err)
		}
		if err := c.Drain(ctx); err != nil {
			t.Fatalf("drain of the segment as found: %v", err)
		}
		bus, err := newBus(dir, BusOptions{Logger: quiet}, false)
		if err != nil {
			t.Fatalf("open bus: %v", err)
		}
		err = bus.commit(lateFrame)
		_ = bus.f.Close()
		_ = bus.w.close()
		if err != nil {
			t.Fatalf("write after opening: %v", err)
		}
		if err := c.Drain(ctx); err != nil {
			t.Fatalf("drain after a write: %v", err)
		}
		if n := ing.edges()[factEdgeID(t, late)]; n != 1 {
			t.Fatalf("the fact written after opening was delivered %d times, want 1", n)
		}
		if b, err := ReadBacklog(dir); err != nil || b.Bytes != 0 || !b.Oldest.IsZero() {
			t.Fatalf("backlog once everything was delivered: %+v, %v; want none", b, err)
		}
	})
}
