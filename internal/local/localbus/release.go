package localbus

import (
	"runtime/debug"
	"time"
	"unsafe"
)

const (
	// idleRelease is how long Run must have found nothing to deliver before it drops
	// the buffers a catch-up grew (release): long enough that steady traffic, which
	// the consumer meets every PollInterval or sooner, keeps reusing them.
	idleRelease = time.Second
	// idleKeep bounds what an idle consumer keeps: one spare batch of at most this
	// many bytes (a Busy batch reads one readChunk), and the facts lines buffer if it
	// is no larger.
	idleKeep = 2 * readChunk
	// freeOSAfter is how much release must drop before it returns the memory to the
	// OS at once (debug.FreeOSMemory). Otherwise the dropped buffers stay in the heap
	// until the next GC, which an idle process runs only every two minutes, and the
	// scavenger hands them back slowly after that. The full GC it forces is paid once
	// per catch-up (release drops nothing more until batches grow again), not per
	// batch.
	freeOSAfter = 2 * idleKeep
)

// idleClock tells Run when the consumer has been idle for idleRelease.
type idleClock struct {
	since time.Time // when Run last found nothing to deliver after delivering; zero while busy
}

// observe records whether the last flow delivered anything (n) and reports whether
// the consumer has been idle long enough to release its buffers.
func (k *idleClock) observe(n int, now time.Time, after time.Duration) bool {
	switch {
	case n > 0:
		k.since = time.Time{}
	case k.since.IsZero():
		k.since = now
	}
	return !k.since.IsZero() && now.Sub(k.since) >= after
}

// release drops what the consumer keeps for reuse beyond idleKeep: the spare batches
// but one small one, whose read buffers, interned elements and index grew to a
// catch-up's batches (a pipeline of them, each up to batchReadFactor × MaxBatchBytes
// of journal and MaxBatchBytes of elements), and the facts lines buffer. Run calls it
// between flows, when no batch is in flight, once idle and when redirects come back
// after a pause (Busy again); a batch after it allocates afresh. It returns the bytes
// dropped. With freeOS, it returns them to the OS at once if they are many; without
// (Busy again: a process serving redirects collects within a fraction of a second,
// and its scavenger returns the pages), the forced collection is not paid on the
// redirects' core.
func (c *Consumer) release(freeOS bool) int {
	freed := 0
	kept := c.spare[:0]
	for _, b := range c.spare {
		if n := b.retained(); len(kept) > 0 || n > idleKeep {
			freed += n
			continue
		}
		kept = append(kept, b)
	}
	clear(c.spare[len(kept):])
	c.spare = kept
	if cap(c.lines) > idleKeep {
		freed += cap(c.lines)
		c.lines = nil
	}
	freed += cap(c.damaged.scratch)
	c.damaged.scratch = nil
	if freeOS && freed >= freeOSAfter {
		c.releases.Add(1)
		debug.FreeOSMemory()
	}
	return freed
}

// retained estimates the bytes a batch keeps for reuse: the capacities of its
// buffers and the entries of its intern index at their most (a cleared map keeps its
// size).
func (b *delivery) retained() int {
	const mapEntry = int(unsafe.Sizeof(uint64(0)) + unsafe.Sizeof(0) + 8) // key, value, control and slack
	return cap(b.buf) + cap(b.recs)*int(unsafe.Sizeof(record{})) +
		cap(b.events)*int(unsafe.Sizeof(batchEvent{})) + cap(b.elems) +
		cap(b.spans)*int(unsafe.Sizeof(span{})) + cap(b.emitted) +
		cap(b.refused)*int(unsafe.Sizeof(refusal{})) + max(b.seenPeak, len(b.seen))*mapEntry
}
