// Package diskfree reports the free space of a file system and watches it cross a
// threshold, so that a service warns before its disk fills rather than at the first
// write that fails.
package diskfree

import (
	"errors"
	"sync"
	"time"
)

// ErrUnsupported is Stat's error where the platform has no statfs.
var ErrUnsupported = errors.New("free space not known on this platform")

// Space is a file system's size and the bytes an unprivileged process may still
// write to it.
type Space struct {
	Total, Avail uint64
}

// FreePercent is Avail as a percentage of Total (100 for an empty Total).
func (s Space) FreePercent() float64 {
	if s.Total == 0 {
		return 100
	}
	return 100 * float64(s.Avail) / float64(s.Total)
}

// Watch checks the file system that holds a path at most once per Every and reports
// whether its free space is under LowPercent, calling OnCross each time that
// changes (not on every check).
type Watch struct {
	Path       string
	LowPercent float64
	Every      time.Duration
	OnCross    func(low bool, s Space)
	// Stat is the file system query; nil means diskfree.Stat.
	Stat func(path string) (Space, error)

	mu      sync.Mutex
	checked time.Time
	low     bool
}

// Low reports whether the file system was under LowPercent free when last checked,
// checking again if Every has passed. A failed check keeps the last answer.
func (w *Watch) Low(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.LowPercent <= 0 {
		return false
	}
	if !w.checked.IsZero() && now.Sub(w.checked) < w.Every {
		return w.low
	}
	w.checked = now
	stat := w.Stat
	if stat == nil {
		stat = Stat
	}
	s, err := stat(w.Path)
	if err != nil {
		return w.low
	}
	if low := s.FreePercent() < w.LowPercent; low != w.low {
		w.low = low
		if w.OnCross != nil {
			w.OnCross(low, s)
		}
	}
	return w.low
}
