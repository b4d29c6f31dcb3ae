package localbus

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// steppingClock is a bus clock that moves a second on at each call, so that events
// published one at a time have times of their own.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	next := fixedNow.Truncate(time.Second)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := next
		next = next.Add(time.Second)
		return t
	}
}

// eventTimes reads the times of the events in the journal of dir, in journal order.
func eventTimes(t *testing.T, dir string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, s := range segmentFiles(t, dir) {
		path := segmentPath(filepath.Join(dir, journalDir), s)
		start, end := boundsAt(t, path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for pos := start; pos < end; {
			p, n, st := parseFrame(b[pos:end], crcTable())
			if st != frameOK {
				t.Fatalf("%s at %d: frame status %d", path, pos, st)
			}
			var ev struct {
				Time time.Time `json:"time"`
			}
			if err := json.Unmarshal(p, &ev); err != nil {
				t.Fatal(err)
			}
			out = append(out, ev.Time)
			pos += int64(n)
		}
	}
	return out
}

// TestReadBacklog: what `linoone status` reports of the journal, read from the data
// dir without the consumer's lock: the bytes past the consumer's saved offset, as
// the consumer's own Lag counts them, and the time of the oldest event waiting.
func TestReadBacklog(t *testing.T) {
	tests := []struct {
		name string
		// setup leaves a journal in dir and returns the journal bytes waiting and
		// the time of the oldest event waiting (zero: none).
		setup func(t *testing.T, dir string) (bytes int64, oldest time.Time)
	}{
		{"no journal yet", func(t *testing.T, dir string) (int64, time.Time) {
			return 0, time.Time{}
		}},
		{"no consumer has run", func(t *testing.T, dir string) (int64, time.Time) {
			bus := openBus(t, dir, BusOptions{Now: steppingClock()})
			publishAll(t, bus, facts(t, 4))
			seg := segmentPath(filepath.Join(dir, journalDir), segmentFiles(t, dir)[0])
			start, end := boundsAt(t, seg)
			return end - start, eventTimes(t, dir)[0]
		}},
		{"part delivered, across segments", func(t *testing.T, dir string) (int64, time.Time) {
			bus := openBus(t, dir, BusOptions{Now: steppingClock(), SegmentSize: 4 << 10})
			fs := facts(t, 9)
			publishAll(t, bus, fs[:5])
			c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			publishAll(t, bus, fs[5:])
			if len(segmentFiles(t, dir)) < 2 {
				t.Fatal("the events fill one segment: the test wants the backlog across several")
			}
			// The consumer that delivered the first five counts the same bytes.
			lag, err := c.Lag()
			if err != nil {
				t.Fatal(err)
			}
			times := eventTimes(t, dir) // the segments not removed yet: the last four last
			if !times[len(times)-4].After(times[len(times)-5]) {
				t.Fatalf("event times %v do not tell the sixth event from the fifth", times)
			}
			return lag, times[len(times)-4]
		}},
		{"all delivered", func(t *testing.T, dir string) (int64, time.Time) {
			bus := openBus(t, dir, BusOptions{Now: steppingClock()})
			publishAll(t, bus, facts(t, 3))
			drainFresh(t, dir)
			return 0, time.Time{}
		}},
		{"offset past the newest segment", func(t *testing.T, dir string) (int64, time.Time) {
			size := journalSegments(t, dir, facts(t, 6), 3) // version 1: frames from 0
			saveOffsetPastTheNewestSegment(t, dir)
			return size, eventTimes(t, dir)[0] // the consumer reads it again from the oldest segment
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			wantBytes, wantOldest := tt.setup(t, dir)
			got, err := ReadBacklog(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got.Bytes != wantBytes || !got.Oldest.Equal(wantOldest) {
				t.Errorf("backlog = %d bytes, oldest %v; want %d bytes, oldest %v", got.Bytes, got.Oldest, wantBytes, wantOldest)
			}
		})
	}
}

// TestReadBacklogOfADamagedFrame: when the oldest event waiting cannot be read whole,
// the backlog still gives its bytes, and no time rather than a wrong one.
func TestReadBacklogOfADamagedFrame(t *testing.T) {
	dir := t.TempDir()
	size := journalFacts(t, dir, facts(t, 2))
	path := segmentPath(filepath.Join(dir, journalDir), 1)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[frameHeader+10] ^= 0xff // the first event's payload: its checksum fails
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBacklog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bytes != size || !got.Oldest.IsZero() {
		t.Errorf("backlog = %d bytes, oldest %v; want %d bytes and no time", got.Bytes, got.Oldest, size)
	}
}

// TestReadBacklogWhileTheConsumerDelivers: the consumer removes segments as it
// delivers them; a status read beside it never fails on one gone from under it,
// and never reports more than was waiting before it, or an event older than the
// oldest then.
func TestReadBacklogWhileTheConsumerDelivers(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{Now: steppingClock(), SegmentSize: 4 << 10})
	publishAll(t, bus, facts(t, 200))
	before, err := ReadBacklog(dir)
	if err != nil || before.Bytes == 0 {
		t.Fatalf("backlog before delivery = %+v, %v", before, err)
	}
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 3})
	ctx, cancel := context.WithCancel(ctxTimeout(t))
	done := make(chan error, 1)
	go func() { done <- c.Drain(ctx) }()
	var failure string
	reads, drained := 0, false
	for ; !drained && failure == ""; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			drained = true
		default:
		}
		b, err := ReadBacklog(dir)
		switch {
		case err != nil:
			failure = fmt.Sprintf("read %d during the drain: %v", reads, err)
		case b.Bytes > before.Bytes || (b.Bytes > 0 && !b.Oldest.IsZero() && b.Oldest.Before(before.Oldest)):
			failure = fmt.Sprintf("read %d during the drain = %+v, more than the %+v waiting before", reads, b, before)
		case drained && (b.Bytes != 0 || !b.Oldest.IsZero()):
			failure = fmt.Sprintf("backlog after the drain = %+v; want none", b)
		}
	}
	if failure != "" {
		if !drained {
			cancel() // the drain ends before the test does, and its cleanup closes c
			<-done
		}
		t.Fatal(failure)
	}
	cancel()
	t.Logf("%d reads during the drain", reads)
}
