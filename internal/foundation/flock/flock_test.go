//go:build unix

package flock

import (
	"path/filepath"
	"testing"
)

// TestTwoFilesOnOnePathConflict: flock locks belong to the open file, so a second
// File on the same path is kept out even in the same process, until the first
// unlocks or closes.
func TestTwoFilesOnOnePathConflict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if held, err := b.TryLock(); err != nil || !held {
		t.Fatalf("second file: held %v, %v; want held", held, err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if held, err := b.TryLock(); err != nil || held {
		t.Fatalf("after unlock: held %v, %v", held, err)
	}
	if err := b.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // closing releases
		t.Fatal(err)
	}
	if held, err := b.TryLock(); err != nil || held {
		t.Fatalf("after close: held %v, %v", held, err)
	}
}
