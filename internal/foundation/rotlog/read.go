package rotlog

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Chain is the files that hold the lines of the log at path, in the order they were
// written: the logs moved aside from it, oldest first, then path itself if it exists
// (the live log, last). A log moved aside that a crash left both plain and
// compressed is listed once, plain: the .gz was made from it. A path that is itself
// a log moved aside (its name ends in a time stamp) is the one file of its chain.
func Chain(path string) ([]File, error) {
	base := filepath.Base(path)
	live, statErr := os.Stat(path)
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return nil, statErr
	}
	if live != nil && live.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if isRotatedName(base) {
		if live == nil {
			return nil, statErr
		}
		return []File{{Path: path, Size: live.Size(), Compressed: isGzip(path)}}, nil
	}
	rotated, err := Rotated(path)
	if err != nil {
		return nil, err
	}
	out := dedupePlain(rotated)
	if live != nil {
		out = append(out, File{Path: path, Size: live.Size(), Compressed: isGzip(path)})
	}
	if len(out) == 0 {
		return nil, statErr // path's: it does not exist, and no file was moved aside from it
	}
	return out, nil
}

// dedupePlain keeps one copy of each log moved aside, the plain one where a crash
// left both; rotated is sorted by name, so a plain file comes right before its .gz.
func dedupePlain(rotated []File) []File {
	var out []File
	for _, f := range rotated {
		if f.Compressed && len(out) > 0 && out[len(out)-1].Path+gzExt == f.Path {
			continue
		}
		out = append(out, f)
	}
	return out
}

// isRotatedName reports whether name is that of a log moved aside by Rotate.
func isRotatedName(name string) bool {
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '.' {
			if st, _ := rotatedStamp(name[:i], name); st != "" {
				return true
			}
		}
	}
	return false
}

// isGzip reports whether the file at path begins with gzip's magic number.
func isGzip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	return n == 2 && magic == [2]byte{0x1f, 0x8b}
}

// Open opens a file of a chain for reading its lines: a compressed one through
// gzip, whose error at the end (a CRC or a length that does not match, a cut
// stream) names the file. A plain log moved aside that Tidy has compressed since
// the chain was listed is read from its .gz.
func Open(f File) (io.ReadCloser, error) {
	file, err := os.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) && !f.Compressed && isRotatedName(filepath.Base(f.Path)) {
		f = File{Path: f.Path + gzExt, Compressed: true}
		file, err = os.Open(f.Path)
	}
	if err != nil {
		return nil, err
	}
	if !f.Compressed {
		return file, nil
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(file, 64<<10))
	if err != nil {
		file.Close()
		return nil, &CorruptError{Path: f.Path, Err: err}
	}
	return &gzipFile{zr: zr, f: file, path: f.Path}, nil
}

// Verify reads a compressed file of a chain to its end, so that a reader can refuse
// a damaged chain before it acts on any of its lines. A plain file passes.
func Verify(f File) error {
	if !f.Compressed {
		return nil
	}
	r, err := Open(f)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	return err
}

// CorruptError reports a compressed log that cannot be read to its end.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is not a whole gzip file: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

type gzipFile struct {
	zr   *gzip.Reader
	f    *os.File
	path string
}

func (g *gzipFile) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &CorruptError{Path: g.path, Err: err}
	}
	return n, err
}

func (g *gzipFile) Close() error {
	zerr := g.zr.Close()
	ferr := g.f.Close()
	return errors.Join(zerr, ferr)
}
