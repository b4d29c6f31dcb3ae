package shorturl

import (
	"sync"
	"sync/atomic"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// factOverhead is what a buffered fact costs besides its detail: the Fact header
// and the slice slot, roughly.
const factOverhead = 96

// backlog holds, in memory and up to max bytes, the facts that neither the bus nor
// the dead letters took, oldest first, until a flush hands them on. It owns copies
// of the facts' bytes: the Recorder reuses its buffers.
type backlog struct {
	max int

	mu    sync.Mutex
	facts []clickfact.Fact
	head  int // facts[:head] were taken
	size  int // bytes held

	n    atomic.Int64  // facts held, read without the lock (health, flush loop)
	wake chan struct{} // receives when a fact arrives in an empty backlog
}

func newBacklog(max int) *backlog {
	return &backlog{max: max, wake: make(chan struct{}, 1)}
}

func factSize(f clickfact.Fact) int {
	return len(f.Detail) + len(f.IdempotencyKey) + len(f.EventID) + factOverhead
}

// push keeps a copy of f, or reports false when it would not fit.
func (b *backlog) push(f clickfact.Fact) bool {
	sz := factSize(f)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size+sz > b.max {
		return false
	}
	f.Detail = append([]byte(nil), f.Detail...)
	if b.head > 0 && b.head == len(b.facts) { // empty: reuse the storage
		b.facts, b.head = b.facts[:0], 0
	}
	b.facts = append(b.facts, f)
	b.size += sz
	if b.n.Add(1) == 1 {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// take removes and returns the oldest fact.
func (b *backlog) take() (clickfact.Fact, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.head == len(b.facts) {
		return clickfact.Fact{}, false
	}
	f := b.facts[b.head]
	b.facts[b.head] = clickfact.Fact{}
	b.head++
	if b.head >= 1024 && 2*b.head >= len(b.facts) { // drop the taken prefix
		b.facts = append(b.facts[:0], b.facts[b.head:]...)
		b.head = 0
	}
	b.size -= factSize(f)
	b.n.Add(-1)
	return f, true
}

// putBack returns a fact that take handed out and that could not be delivered, at
// the front: it is the oldest again. It is kept even past max: it was held before.
func (b *backlog) putBack(f clickfact.Fact) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.head > 0 {
		b.head--
		b.facts[b.head] = f
	} else {
		b.facts = append([]clickfact.Fact{f}, b.facts...)
	}
	b.size += factSize(f)
	b.n.Add(1)
}

// len is how many facts wait.
func (b *backlog) len() int { return int(b.n.Load()) }
