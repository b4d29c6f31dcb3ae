package localbus

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// kept is what the consumer keeps for reuse between flows: its spare batches and
// the facts lines buffer.
func (c *Consumer) kept() (batches, bytes int) {
	for _, b := range c.spare {
		bytes += b.retained()
	}
	return len(c.spare), bytes + cap(c.lines)
}

// After a catch-up of thousands of events, which grows a pipeline of batches to
// megabytes of journal and elements each, Run idle for idleAfter keeps one small
// spare batch at most, and returns what it dropped to the OS once.
func TestConsumerReleasesBuffersWhenIdle(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 3000)
	journalFacts(t, dir, fs)
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatchBytes: 1 << 20, PollInterval: 5 * time.Millisecond})
	c.idleAfter = 20 * time.Millisecond
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n, bytes := c.kept(); bytes <= 4*idleKeep || n < 2 {
		t.Fatalf("after the catch-up the consumer keeps %d batches, %d bytes; want the catch-up's pipeline, over %d", n, bytes, 4*idleKeep)
	}

	ctx, cancel := context.WithCancel(ctxTimeout(t))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for deadline := time.Now().Add(2 * time.Second); c.releases.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // more idle polls: the release happens once
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := c.releases.Load(); got != 1 {
		t.Errorf("released to the OS %d times, want once", got)
	}
	if n, bytes := c.kept(); n > 1 || bytes > idleKeep {
		t.Errorf("idle consumer keeps %d batches, %d bytes; want at most 1 and %d", n, bytes, idleKeep)
	}
	if s := c.Stats(); s.Delivered != int64(len(fs)) {
		t.Errorf("delivered %d, want %d", s.Delivered, len(fs))
	}
}

// The idle clock runs from the first flow that delivered nothing and starts again
// at each delivery: steady traffic never reaches it.
func TestIdleClock(t *testing.T) {
	var k idleClock
	t0 := time.Unix(1000, 0)
	steps := []struct {
		n    int
		at   time.Duration
		want bool
	}{
		{5, 0, false},
		{0, 100 * time.Millisecond, false},
		{0, 900 * time.Millisecond, false},
		{3, 1050 * time.Millisecond, false}, // delivered: idle again from the next empty flow
		{0, 1100 * time.Millisecond, false},
		{0, 2000 * time.Millisecond, false},
		{0, 2100 * time.Millisecond, true},
		{0, 5000 * time.Millisecond, true},
	}
	for i, s := range steps {
		if got := k.observe(s.n, t0.Add(s.at), time.Second); got != s.want {
			t.Errorf("step %d (n=%d at %s): idle = %v, want %v", i, s.n, s.at, got, s.want)
		}
	}
}

// busyAfter is an Ingester that turns Busy on at its nth call: redirects come back
// while Run delivers a pause's backlog.
type busyAfter struct {
	*fakeIngester
	n     int32
	calls atomic.Int32
	busy  atomic.Bool
}

func (b *busyAfter) IngestRaw(ctx context.Context, body []byte) error {
	if b.calls.Add(1) == b.n {
		b.busy.Store(true)
	}
	return b.fakeIngester.IngestRaw(ctx, body)
}

// A pause in redirects starts Run's pipeline at a catch-up batch, not MaxBatch, and
// when redirects come back Run drops the buffers the pause grew, without forcing a
// collection (issue 47: a brief pause left serve's consumer holding three full
// batches while clicks went on).
func TestRunReleasesPauseBatchesWhenBusyAgain(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 4500)
	journalFacts(t, dir, fs)
	ing := &busyAfter{fakeIngester: &fakeIngester{}, n: 3}
	const busyBatch = 50
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatchBytes: 1 << 20, BusyBatch: busyBatch, PaceFactor: 0.01,
		PollInterval: 5 * time.Millisecond, Busy: ing.busy.Load})
	c.idleAfter = time.Hour // only the return of redirects releases

	ctx, cancel := context.WithCancel(ctxTimeout(t))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	// The pause's flow delivers some 3,000 events (batches of 500, 1,000, 1,400);
	// the rest goes in Busy batches, after the release.
	waitFor(t, func() bool { return c.Stats().Delivered == int64(len(fs)) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, bytes := c.kept(); n > 1 || bytes > idleKeep {
		t.Errorf("busy again, the consumer keeps %d batches, %d bytes; want at most 1 and %d", n, bytes, idleKeep)
	}
	if got := c.releases.Load(); got != 0 {
		t.Errorf("busy again, the consumer forced %d collections, want none on the redirects' core", got)
	}
	// The pause's first three batches (a click fact is one edge; ingests may end out
	// of order): a catch-up batch, twice and four times that, not three at MaxBatch.
	first := 0
	for _, d := range ing.docs[:3] {
		first += len(d.Edges)
	}
	if want := 7 * catchUpFactor * busyBatch; first > want {
		t.Errorf("the first three batches of the pause hold %d events, want at most %d", first, want)
	}
}
