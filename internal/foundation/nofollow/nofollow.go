// Package nofollow opens files without following a symbolic link in their last
// component, so that a file a service writes in its data directory cannot be
// redirected elsewhere by a link put in its place (issue 44, finding 7), and checks
// that files holding secrets are private to their owner.
package nofollow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrSymlink is returned for a path whose last component is a symbolic link.
var ErrSymlink = errors.New("is a symbolic link; refusing to follow it (replace it with a regular file)")

// OpenFile is os.OpenFile that refuses to follow a symbolic link at name: it fails
// with an error wrapping ErrSymlink instead.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|oNoFollow, perm)
	if err != nil && isLinkErr(err) {
		if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s %w", name, ErrSymlink)
		}
	}
	if err == nil && oNoFollow == 0 {
		// No O_NOFOLLOW here: check what was opened is what the name holds now.
		if err = checkNotLink(name); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return f, err
}

// Check reports an error wrapping ErrSymlink when name is a symbolic link; a path
// that does not exist is no error.
func Check(name string) error { return checkNotLink(name) }

func checkNotLink(name string) error {
	_, err := lstatNotLink(name)
	return err
}

// lstatNotLink is os.Lstat of name, an error wrapping ErrSymlink when it is a
// symbolic link, and nil information and error when it does not exist.
func lstatNotLink(name string) (fs.FileInfo, error) {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", name, ErrSymlink)
	}
	return fi, nil
}

// ReadFile is os.ReadFile that refuses to follow a symbolic link at name.
func ReadFile(name string) ([]byte, error) {
	f, err := OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ErrShared is returned by Private for a file that group or others may read.
var ErrShared = errors.New("is readable by group or others; it holds a secret (chmod 600 it)")

// Private reports an error wrapping ErrShared when the file at name grants any
// permission to group or others (on systems with Unix permissions), and ErrSymlink
// when it is a link. A missing file is no error.
func Private(name string) error {
	fi, err := lstatNotLink(name)
	if fi == nil || err != nil {
		return err
	}
	if unixPerms && fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s (mode %#o) %w", name, fi.Mode().Perm(), ErrShared)
	}
	return nil
}
