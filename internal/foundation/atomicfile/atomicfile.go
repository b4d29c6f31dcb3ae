// Package atomicfile writes whole files: a reader, or the file system after a
// crash, finds either what was there before or all of the new content, never a
// part of it. It is the one way Linoone writes a file it replaces (a consumer's
// offset, the deny list, serve's listening record) or creates once (credentials,
// the idempotency secret).
//
// Both functions write a temporary file beside the target (created exclusively, so
// a symlink planted at its name is never followed), sync it, put it in place and
// sync the directory. Putting it in place never follows a symlink at the target:
// rename(2) replaces the link itself, and link(2) fails on it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Options tune a write; the zero value is mode 0600 and (*os.File).Sync.
type Options struct {
	// Perm is the file's mode (default 0600).
	Perm fs.FileMode
	// Sync flushes a file or a directory to the disk (default (*os.File).Sync). A
	// package that accounts for every sync it makes routes them through its own.
	Sync func(*os.File) error
}

func (o Options) perm() fs.FileMode {
	if o.Perm == 0 {
		return 0o600
	}
	return o.Perm
}

func (o Options) sync(f *os.File) error {
	if o.Sync == nil {
		return f.Sync()
	}
	return o.Sync(f)
}

// Replace writes data to path, replacing what is there.
func Replace(path string, data []byte, o Options) error {
	tmp, err := writeTemp(path, data, o)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path), o)
}

// Create writes data to path unless something is there already (a file, a
// directory or a symlink, dangling or not): then it writes nothing and reports
// false, and the caller reads what another writer made. Where the file system has
// no hard links it falls back to a rename, which is atomic but lets the last of
// two concurrent writers win.
func Create(path string, data []byte, o Options) (created bool, err error) {
	tmp, err := writeTemp(path, data, o)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp) // once linked, only the temporary name goes
	switch err := os.Link(tmp, path); {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		if _, serr := os.Lstat(path); serr == nil {
			return false, nil
		}
		if err := os.Rename(tmp, path); err != nil {
			return false, fmt.Errorf("create %s: %w", path, err)
		}
	}
	return true, syncDir(filepath.Dir(path), o)
}

// writeTemp writes data to a new file beside path, with o's mode, synced, and
// returns its name.
func writeTemp(path string, data []byte, o Options) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return "", fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	_, werr := f.Write(data)
	var cerr, serr error
	if werr == nil {
		cerr = f.Chmod(o.perm())
	}
	if werr == nil && cerr == nil {
		serr = o.sync(f)
	}
	closeErr := f.Close()
	if err := errors.Join(werr, cerr, serr, closeErr); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}

// syncDir makes the new name in dir durable. Windows cannot open a directory to
// sync it (and its renames are durable with the file system's journal).
func syncDir(dir string, o Options) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	serr := o.sync(d)
	cerr := d.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
