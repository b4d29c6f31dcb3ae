package denylist

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// Holder holds the list in force. Readers see one list or the next, never a mix;
// the zero Holder blocks nothing. It is safe for concurrent use.
type Holder struct {
	cur atomic.Pointer[List]
}

// List is the list in force (nil: none, blocks nothing).
func (h *Holder) List() *List { return h.cur.Load() }

// Set puts l in force.
func (h *Holder) Set(l *List) { h.cur.Store(l) }

// Screen is the core's screening port: whether target is blocked and by which kind
// of rule.
func (h *Holder) Screen(target string) (kind string, blocked bool) {
	r, ok := h.cur.Load().Match(target)
	return string(r.Kind), ok
}

// logLoaded reports a newly loaded list: its size and every malformed line.
func logLoaded(log *slog.Logger, source string, l *List, bad []*LineError) {
	for _, e := range bad {
		log.Warn("deny list: malformed rule ignored", "source", source, "line", e.Line, "err", e.Err)
	}
	log.Info("deny list loaded", "source", source, "rules", l.Len(), "malformed", len(bad))
}

// Poller keeps a Holder in step with a file, checked by identity (a rename over it
// is a change), size, modification time and change time (which no tool can set back,
// so an edit that keeps the modification time is seen too). An absent file is an
// empty list; a file that cannot be read leaves the list in force.
//
// A change that leaves fewer rules in force, the file gone included, is taken only if
// the file still looks the same a moment later: an editor saving in place empties
// the file before it writes it, and a poll in between would lift every block.
type Poller struct {
	Path     string
	Holder   *Holder
	Log      *slog.Logger
	Failures *atomic.Int64 // optional: counts the reloads that failed
	// Settle is how long a change that drops rules must stay unchanged before it is
	// in force; default 200ms.
	Settle time.Duration

	seen   stamp
	loaded bool
}

// stamp is what Poller compares of the file: fi nil when it is absent.
type stamp struct {
	fi      fs.FileInfo
	changed time.Time // the change time (ctime), zero where unknown
}

func stampOf(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stamp{fi: fi, changed: changeTime(path)}, nil
}

func (a stamp) same(b stamp) bool {
	if a.fi == nil || b.fi == nil {
		return a.fi == nil && b.fi == nil
	}
	return os.SameFile(a.fi, b.fi) && a.fi.Size() == b.fi.Size() &&
		a.fi.ModTime().Equal(b.fi.ModTime()) && a.changed.Equal(b.changed)
}

// Reload reads the file when it changed since the last load, and reports whether
// the list in force changed. On error the list in force stays.
func (p *Poller) Reload() (bool, error) {
	st, err := stampOf(p.Path)
	if err != nil {
		return false, err
	}
	if p.loaded && st.same(p.seen) {
		return false, nil
	}
	l, bad, err := readList(st, p.Path)
	if err != nil {
		return false, err
	}
	before := p.Holder.List()
	if l.Len() < before.Len() {
		settle := p.Settle
		if settle <= 0 {
			settle = 200 * time.Millisecond
		}
		time.Sleep(settle)
		if again, err := stampOf(p.Path); err != nil || !again.same(st) {
			return false, err // still changing: the next poll looks again
		}
	}
	p.Holder.Set(l)
	p.seen, p.loaded = st, true
	switch {
	case st.fi == nil && before.Len() > 0:
		p.Log.Warn("deny list removed: every block is lifted", "source", p.Path, "rules_before", before.Len())
	case st.fi == nil:
		p.Log.Info("deny list absent: nothing is blocked", "source", p.Path)
	case l.Len() == 0 && before.Len() > 0:
		p.Log.Warn("deny list emptied: every block is lifted", "source", p.Path, "rules_before", before.Len())
		logLoaded(p.Log, p.Path, l, bad)
	default:
		logLoaded(p.Log, p.Path, l, bad)
	}
	return true, nil
}

// readList parses the file st describes; an absent file is an empty list.
func readList(st stamp, path string) (*List, []*LineError, error) {
	if st.fi == nil {
		return &List{}, nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return Parse(f)
}

// Run reloads every interval until ctx ends, logging each failure (the list in
// force stays).
func (p *Poller) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := p.Reload(); err != nil {
				if p.Failures != nil {
					p.Failures.Add(1)
				}
				p.Log.Error("deny list unreadable: the previous list stays in force", "source", p.Path, "err", err)
			}
		}
	}
}
