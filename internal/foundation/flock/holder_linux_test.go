package flock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHolderNamesTheProcessHoldingTheLock: Holder reads /proc/locks, taking no lock:
// it names this process while it holds the lock, and no one once it has let go, or
// for a lock file no one ever opened.
func TestHolderNamesTheProcessHoldingTheLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.lock")
	if pid, known, err := Holder(path); pid != 0 || !known || err != nil {
		t.Fatalf("a lock file that does not exist: %d, %v, %v; want 0, known", pid, known, err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	other, err := Open(filepath.Join(dir, "y.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	if pid, known, err := Holder(path); pid != os.Getpid() || !known || err != nil {
		t.Errorf("while held: %d, %v, %v; want %d", pid, known, err, os.Getpid())
	}
	if pid, _, err := Holder(filepath.Join(dir, "y.lock")); pid != 0 || err != nil {
		t.Errorf("another lock file, open but not locked: %d, %v; want 0", pid, err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if pid, _, err := Holder(path); pid != 0 || err != nil {
		t.Errorf("once unlocked: %d, %v; want 0", pid, err)
	}
}

// TestFlockHolderReadsProcLocks: only a FLOCK line on the file's device and inode
// names its holder; a process waiting for the lock ("->"), a POSIX lock on the same
// file and a lock on another device's same inode do not. Device numbers are hex.
func TestFlockHolderReadsProcLocks(t *testing.T) {
	dev := unix.Mkdev(259, 1) // "103:01"
	listing := strings.Join([]string{
		"1: POSIX  ADVISORY  WRITE 111 103:01:42 0 EOF",
		"2: FLOCK  ADVISORY  WRITE 222 fe:00:42 0 EOF",
		"3: FLOCK  ADVISORY  WRITE 333 103:01:42 0 EOF",
		"3: -> FLOCK  ADVISORY  WRITE 444 103:01:42 0 EOF",
	}, "\n")
	if pid, err := flockHolder(strings.NewReader(listing), dev, 42); pid != 333 || err != nil {
		t.Errorf("holder = %d, %v; want 333", pid, err)
	}
	if pid, err := flockHolder(strings.NewReader(listing), dev, 43); pid != 0 || err != nil {
		t.Errorf("another inode: %d, %v; want 0", pid, err)
	}
	if _, err := flockHolder(strings.NewReader("3: FLOCK  ADVISORY  WRITE x 103:01:42 0 EOF"), dev, 42); err == nil {
		t.Error("a pid that is not a number was taken")
	}
}
