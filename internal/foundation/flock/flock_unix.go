//go:build unix

package flock

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/linoone/linoone/internal/foundation/nofollow"
)

// File is a flock(2) on a lock file. flock locks belong to the open file, so two
// Files on one path conflict even inside one process.
type File struct {
	f  *os.File
	fd int
}

// Open opens (creating, 0600) the lock file at path; it takes no lock.
func Open(path string) (*File, error) {
	f, err := nofollow.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return &File{f: f, fd: int(f.Fd())}, nil
}

func (l *File) flock(how int) error {
	for {
		err := syscall.Flock(l.fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Lock takes the lock, waiting for whoever has it.
func (l *File) Lock() error {
	if err := l.flock(syscall.LOCK_EX); err != nil {
		return fmt.Errorf("flock %s: %w", l.f.Name(), err)
	}
	return nil
}

// TryLock takes the lock without waiting; held reports that someone else has it.
func (l *File) TryLock() (held bool, err error) {
	err = l.flock(syscall.LOCK_EX | syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock %s: %w", l.f.Name(), err)
	}
	return false, nil
}

// Unlock releases the lock.
func (l *File) Unlock() error {
	if err := l.flock(syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close closes the lock file, which releases the lock.
func (l *File) Close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close lock file: %w", err)
	}
	return nil
}
