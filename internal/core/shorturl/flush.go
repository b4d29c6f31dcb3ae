package shorturl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// Retry pacing of Run while the buffer cannot be flushed.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
)

// degradedFor is how long after a fact went to the log Degraded still reports it.
const degradedFor = 5 * time.Minute

// ErrFlushRunning reports a Flush that did nothing because another one runs.
var ErrFlushRunning = errors.New("another flush is running")

// Pending is how many facts wait in the buffer.
func (r *Recorder) Pending() int {
	if r.backlog == nil {
		return 0
	}
	return r.backlog.len()
}

// Degraded reports whether click recording works in a reduced way: facts wait in
// the buffer, or one went to the log within the last five minutes.
func (r *Recorder) Degraded() bool {
	if r.Pending() > 0 {
		return true
	}
	last := r.lost.since()
	return !last.IsZero() && r.c.Now().Sub(last) < degradedFor
}

// Flush hands the buffered facts on, oldest first, each exactly once: to the bus,
// else to the dead letters. It stops at the first fact neither takes, which stays
// first in the buffer, and returns that error. It returns how many it handed on.
func (r *Recorder) Flush(ctx context.Context) (int, error) {
	if r.Pending() == 0 {
		return 0, nil
	}
	if !r.flushing.TryLock() {
		return 0, ErrFlushRunning
	}
	defer r.flushing.Unlock()
	n := 0
	for ctx.Err() == nil {
		f, ok := r.backlog.take()
		if !ok {
			return n, nil
		}
		if err := r.handOn(ctx, f); err != nil {
			r.backlog.putBack(f)
			return n, err
		}
		n++
	}
	return n, ctx.Err()
}

// handOn publishes a buffered fact, else dead-letters it.
func (r *Recorder) handOn(ctx context.Context, f clickfact.Fact) error {
	pctx, cancel := context.WithTimeout(ctx, r.c.PublishTimeout)
	perr := r.c.Publisher.Publish(pctx, f)
	cancel()
	if perr == nil {
		r.c.Counters.Published.Add(1)
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, r.c.DLQTimeout)
	defer cancel()
	derr := r.c.DeadLetters.DeadLetter(dctx, clickfact.NewDeadLetter(f, r.c.Now(), 1, perr))
	if derr == nil {
		r.c.Counters.DeadLettered.Add(1)
		return nil
	}
	return fmt.Errorf("flush %s: publish: %w; dead-letter: %w", f.IdempotencyKey, perr, derr)
}

// Run flushes the buffer whenever it holds facts, retrying with backoff (100 ms
// doubling to 5 s) while the bus and the dead letters both fail, until ctx ends.
// Then it flushes once more and logs whatever is still buffered whole, so that a
// process that stops loses no fact it acknowledged. Without a buffer it only
// summarizes the facts logged past the buffer.
func (r *Recorder) Run(ctx context.Context) {
	wait := retryMin
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var wake <-chan struct{}
	if r.backlog != nil {
		wake = r.backlog.wake
	}
	var retry <-chan time.Time // armed while backing off after a failed flush
	flush := true
	for {
		if flush && r.Pending() > 0 {
			if n, err := r.Flush(ctx); err != nil {
				if wait == retryMin || n > 0 {
					r.c.Logger.WarnContext(ctx, "click fact buffer not flushed yet", "pending", r.Pending(), "flushed", n, "err", err)
				}
				retry, wait = time.After(wait), min(2*wait, retryMax)
			} else {
				r.c.Logger.InfoContext(ctx, "click fact buffer flushed", "flushed", n)
				retry, wait = nil, retryMin
			}
		}
		flush = false
		select {
		case <-ctx.Done():
			r.stop(context.WithoutCancel(ctx))
			return
		case <-wake:
			flush = retry == nil // while backing off, new facts wait for the retry
		case <-retry:
			retry, flush = nil, true
		case <-tick.C:
			r.lost.summarize(ctx, false)
		}
	}
}

// stop flushes what it can within the DLQ timeout and logs the rest whole.
func (r *Recorder) stop(ctx context.Context) {
	if r.Pending() > 0 {
		fctx, cancel := context.WithTimeout(ctx, r.c.DLQTimeout)
		_, err := r.Flush(fctx)
		cancel()
		for f, ok := r.backlog.take(); ok; f, ok = r.backlog.take() {
			r.lost.whole(ctx, f, err)
		}
	}
	r.lost.summarize(ctx, true)
}
