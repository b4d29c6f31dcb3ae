package localbus

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/foundation/flock"
)

const (
	writersDir = "journal.writers"
	// writersCheckEvery is how often a bus looks for other processes that want to
	// write: what a second writer (linoone replay) waits at most before its first
	// batch.
	writersCheckEvery = 20 * time.Millisecond
)

// writers coordinates the processes that append to one journal, so that the common
// case — one process — pays no lock and no stat per batch.
//
// journal.lock is the writers' flock. A bus that takes it when it opens keeps it
// (solo): its batches are a write and an fsync, nothing else, since nothing else
// changes the journal. A bus that finds it held announces itself with a file in
// journal.writers/, which it keeps flock'ed while it lives, and then takes the lock
// for each batch (shared), re-checking the active segment and its tail under it as
// any writer must when others write too. Every writersCheckEvery a solo bus looks at
// journal.writers/ (one stat while nothing changed); when another live bus announced
// itself, it announces itself too and turns shared, releasing the lock. A shared bus
// that finds no other live announcement takes the lock for good and turns solo again.
// An announcement whose process died is unlocked: whoever sees it removes it.
//
// All methods run on the bus's writer goroutine (or in OpenBus before it starts).
type writers struct {
	lock    *flock.File
	dir     string
	solo    bool
	own     *flock.File // our announcement while shared
	ownName string
	seen    time.Time // journal.writers/'s mtime when last read
	changed bool      // the lock was just taken for good: re-check the journal once
}

func openWriters(busDir string) (*writers, error) {
	w := &writers{dir: filepath.Join(busDir, writersDir)}
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return nil, fmt.Errorf("writers dir: %w", err)
	}
	lock, err := flock.Open(filepath.Join(busDir, journalLock))
	if err != nil {
		return nil, err
	}
	w.lock = lock
	held, err := lock.TryLock()
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	if !held {
		w.solo = true
		return w, nil
	}
	if err := w.announce(); err != nil {
		_ = lock.Close()
		return nil, err
	}
	return w, nil
}

// acquire takes the lock for one batch (shared) or does nothing (solo).
func (w *writers) acquire() error {
	if w.solo {
		return nil
	}
	return w.lock.Lock()
}

// release ends a batch's hold of the lock; an error affects only other writers.
func (w *writers) release() error {
	if w.solo {
		return nil
	}
	return w.lock.Unlock()
}

// check turns a solo bus shared when another bus announced itself, and a shared bus
// solo when none is left. It reports errors it could not act on; the mode stays.
func (w *writers) check() error {
	fi, err := os.Stat(w.dir)
	if err != nil {
		return fmt.Errorf("stat %s: %w", w.dir, err)
	}
	// File times are coarse: a change in the same tick as the last read keeps the
	// mtime, so a directory that changed lately is read again until it settles.
	if w.solo && fi.ModTime().Equal(w.seen) && time.Since(w.seen) > time.Second {
		return nil
	}
	w.seen = fi.ModTime()
	others, err := w.liveOthers()
	if err != nil {
		return err
	}
	switch {
	case w.solo && others:
		if err := w.announce(); err != nil {
			return err
		}
		w.solo = false
		return w.lock.Unlock()
	case !w.solo && !others:
		held, err := w.lock.TryLock()
		if err != nil || held {
			return err
		}
		w.solo, w.changed = true, true
		w.withdraw()
	}
	return nil
}

// liveOthers reports whether another bus that is alive announced itself, removing
// the announcements of processes that died.
func (w *writers) liveOthers() (bool, error) {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", w.dir, err)
	}
	live := false
	for _, e := range entries {
		if e.Name() == w.ownName || strings.HasPrefix(e.Name(), ".") {
			continue // ours, or one being announced
		}
		path := filepath.Join(w.dir, e.Name())
		l, err := flock.Open(path)
		if err != nil {
			continue // removed meanwhile
		}
		held, err := l.TryLock()
		switch {
		case err != nil:
		case held:
			live = true
		default:
			_ = os.Remove(path) // its process died; we hold its lock while removing
		}
		_ = l.Close()
	}
	return live, nil
}

// announce writes and flocks this bus's announcement. It is locked under a
// temporary name and renamed into place, so that no one ever sees it unlocked and
// takes it for the leftover of a dead process.
func (w *writers) announce() error {
	if w.own != nil {
		return nil
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("announcement name: %w", err)
	}
	name := fmt.Sprintf("%d-%x", os.Getpid(), rnd)
	tmp := filepath.Join(w.dir, ".tmp-"+name)
	l, err := flock.Open(tmp)
	if err != nil {
		return err
	}
	held, err := l.TryLock()
	if err == nil && held {
		err = fmt.Errorf("announcement %s is locked by another process", name)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(w.dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		_ = l.Close()
		return fmt.Errorf("announce writer: %w", err)
	}
	w.own, w.ownName = l, name
	return nil
}

// withdraw removes this bus's announcement.
func (w *writers) withdraw() {
	if w.own == nil {
		return
	}
	_ = os.Remove(filepath.Join(w.dir, w.ownName))
	_ = w.own.Close()
	w.own, w.ownName = nil, ""
}

// close withdraws the announcement and releases the lock.
func (w *writers) close() error {
	w.withdraw()
	return w.lock.Close()
}
