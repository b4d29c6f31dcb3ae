//go:build unix

package localbus

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileLock is a flock(2) on a lock file. flock locks belong to the open file, so two
// fileLocks on one path conflict even inside one process.
type fileLock struct {
	f  *os.File
	fd int
}

func openLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	return &fileLock{f: f, fd: int(f.Fd())}, nil
}

func (l *fileLock) flock(how int) error {
	for {
		err := syscall.Flock(l.fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func (l *fileLock) lock() error {
	if err := l.flock(syscall.LOCK_EX); err != nil {
		return fmt.Errorf("flock %s: %w", l.f.Name(), err)
	}
	return nil
}

// tryLock takes the lock without waiting; held reports that someone else has it.
func (l *fileLock) tryLock() (held bool, err error) {
	err = l.flock(syscall.LOCK_EX | syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock %s: %w", l.f.Name(), err)
	}
	return false, nil
}

func (l *fileLock) unlock() error {
	if err := l.flock(syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

func (l *fileLock) close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close lock file: %w", err)
	}
	return nil
}

// unlinked reports whether the file fi describes was removed from its directory.
func unlinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
