// Package logbudget bounds the lines a second that a log source anyone can trigger
// (a malformed request, a refused signature) writes, so that one client cannot fill
// the disk with them or drown the lines that matter.
package logbudget

import (
	"sync"
	"time"
)

// Budget lets through at most a number of lines a second and counts the others. It
// is safe for concurrent use.
type Budget struct {
	perSecond int
	now       func() time.Time

	mu      sync.Mutex
	second  int64 // the Unix second whose lines n counts
	n       int
	leftOut int // lines left out since the last one let through
}

// New returns a budget of perSecond lines a second (at least 1).
func New(perSecond int) *Budget {
	return &Budget{perSecond: max(perSecond, 1), now: time.Now}
}

// Take reports whether a line may be written now and, when it may, how many were
// left out since the last one written: the line should say so.
func (b *Budget) Take() (ok bool, leftOut int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.now().Unix(); s != b.second {
		b.second, b.n = s, 0
	}
	if b.n >= b.perSecond {
		b.leftOut++
		return false, 0
	}
	b.n++
	leftOut, b.leftOut = b.leftOut, 0
	return true, leftOut
}
