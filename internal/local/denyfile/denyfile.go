// Package denyfile edits local mode's deny list file (LINOONE_DENYLIST_FILE), the
// stand-in for the SSM parameter the Lambdas read: one rule a line, read by
// denylist.Poller. Edits are atomic and serialised, so a running serve never reads
// half a list and edits made at once all land.
package denyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/foundation/atomicfile"
	"github.com/linoone/linoone/internal/foundation/flock"
)

// Add appends rule to the list at file; added is false when the list has it
// already (the same rule text, as denylist.LineText writes it).
func Add(file, rule string) (added bool, err error) {
	err = edit(file, func(lines []string) []string {
		if contains(lines, rule) {
			return nil
		}
		added = true
		return append(lines, rule)
	})
	return added, err
}

// Remove removes rule from the list at file; removed is false when the list does
// not have it.
func Remove(file, rule string) (removed bool, err error) {
	err = edit(file, func(lines []string) []string {
		kept := lines[:0:0]
		for _, line := range lines {
			if denylist.LineText(line) != rule {
				kept = append(kept, line)
			}
		}
		if len(kept) == len(lines) {
			return nil
		}
		removed = true
		return kept
	})
	return removed, err
}

// Lines reads the list at file, one entry a line; an absent file has none.
func Lines(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deny list: %w", err)
	}
	s := strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

func contains(lines []string, rule string) bool {
	for _, line := range lines {
		if denylist.LineText(line) == rule {
			return true
		}
	}
	return false
}

// edit replaces the list at file with what change makes of its lines (nil: leave
// it as it is), under the list's edit lock. Through a symlink at file, the list it
// points to is edited, not replaced by a copy, and it keeps its mode: a serve
// running under another account may read it.
func edit(file string, change func([]string) []string) error {
	path := file
	if real, err := filepath.EvalSymlinks(file); err == nil {
		path = real
	}
	unlock, err := lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	lines, err := Lines(path)
	if err != nil {
		return err
	}
	next := change(lines)
	if next == nil {
		return nil
	}
	text := strings.Join(next, "\n")
	if text != "" {
		text += "\n"
	}
	perm := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := atomicfile.Replace(path, []byte(text), atomicfile.Options{Perm: perm}); err != nil {
		return fmt.Errorf("deny list: %w", err)
	}
	return nil
}

// lock takes the edit lock of the list at path, a file beside it.
func lock(path string) (unlock func(), err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("deny list: %w", err)
	}
	l, err := flock.Open(filepath.Join(dir, "."+filepath.Base(path)+".lock"))
	if err != nil {
		return nil, fmt.Errorf("deny list: %w", err)
	}
	if err := l.Lock(); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("deny list: %w", err)
	}
	return func() { _ = l.Close() }, nil // closing releases the lock
}
