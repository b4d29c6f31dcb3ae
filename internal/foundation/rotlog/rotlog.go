// Package rotlog bounds an append-only log kept by its writer: Rotate moves the log
// aside under a name that sorts by time, and Tidy gzips the logs moved aside and
// keeps the newest of them. Every step is a rename or a write followed by fsync, so
// that a crash at any point leaves each line in at least one whole file: a log moved
// aside is removed only after its compressed copy is synced and renamed into place,
// and a Tidy after the crash finishes what the crash interrupted.
//
// It is not lumberjack (gopkg.in/natefinch/lumberjack.v2): that one writes through
// its own io.Writer, neither fsyncs nor lets the writer record where a rotation left
// the log, and compresses in a goroutine whose interruption leaves a partial .gz
// beside the original with no recovery; the facts log's at-least-once promise needs
// the writer (the bus consumer) to own the file and its offset.
package rotlog

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/foundation/nofollow"
	"github.com/linoone/linoone/internal/foundation/yield"
)

// Step is a point of Tidy's work, for tests that crash a process there.
type Step string

// The steps Tidy passes its hook, in order, for each file it compresses.
const (
	StepCompressed Step = "compressed" // the .gz is written and synced under a temporary name
	StepRenamed    Step = "renamed"    // the .gz has its name; the plain file is still there
	StepRemoved    Step = "removed"    // the plain file is removed
	StepPruned     Step = "pruned"     // the oldest .gz files past keep are removed
)

const (
	gzExt     = ".gz"
	tmpPrefix = ".tmp-"
	// stamp sorts by time as text; nanoseconds keep two rotations apart.
	stamp = "20060102T150405.000000000Z"
)

// Rotate renames the log at path to path + "." + a UTC time stamp and syncs its
// directory. It returns the new name. The writer opens a new log at path afterwards.
func Rotate(path string, now time.Time) (string, error) {
	if err := nofollow.Check(path); err != nil {
		return "", err
	}
	to := path + "." + now.UTC().Format(stamp)
	for {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		now = now.Add(time.Nanosecond)
		to = path + "." + now.UTC().Format(stamp)
	}
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("rotate %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	return to, nil
}

// File is a log moved aside.
type File struct {
	Path       string
	Size       int64
	Compressed bool
}

// Rotated lists the logs moved aside from path, oldest first: both the compressed
// ones and those waiting to be compressed.
func Rotated(path string) ([]File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range ents {
		name := e.Name()
		st, gz := rotatedStamp(base, name)
		if st == "" || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, File{Path: filepath.Join(dir, name), Size: fi.Size(), Compressed: gz})
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// rotatedStamp returns the time stamp of name if it is a log moved aside from base,
// and whether it is compressed.
func rotatedStamp(base, name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return "", false
	}
	rest, gz := strings.CutSuffix(rest, gzExt)
	if _, err := time.Parse(stamp, rest); err != nil || len(rest) != len(stamp) {
		return "", false
	}
	return rest, gz
}

// Tidy compresses the logs moved aside from path (oldest first), removes the
// temporary files a crash left and keeps the newest keep compressed ones. hook, if
// not nil, is called at each step.
func Tidy(path string, keep int, hook func(Step)) error {
	if hook == nil {
		hook = func(Step) {}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := removeTemps(dir, tmpPrefix+base+"."); err != nil {
		return err
	}
	files, err := Rotated(path)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, f := range files {
		if f.Compressed {
			have[f.Path] = true
		}
	}
	var errs []error
	for _, f := range files {
		if f.Compressed {
			continue
		}
		if !have[f.Path+gzExt] {
			if err := compress(f.Path, hook); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		// A crash after the rename left both: the .gz is whole (synced first).
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		if err := syncDir(dir); err != nil {
			errs = append(errs, err)
		}
		hook(StepRemoved)
	}
	if err := prune(path, keep); err != nil {
		errs = append(errs, err)
	}
	hook(StepPruned)
	return errors.Join(errs...)
}

// compress writes src's gzip beside it under a temporary name, syncs it, and renames
// it to src + ".gz".
func compress(src string, hook func(Step)) error {
	in, err := nofollow.OpenFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	dir, base := filepath.Split(src)
	tmp, err := os.CreateTemp(dir, tmpPrefix+base+gzExt+"-*")
	if err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	zw, err := gzip.NewWriterLevel(tmp, gzip.BestSpeed)
	if err != nil {
		return err
	}
	// The gzip runs beside the redirects on serve's one core: it yields as the
	// consumer's long work does (docs/performance.md, "Yield"), or each rotation holds
	// the redirects waiting behind ~10 ms slices of it.
	if _, err := io.Copy(zw, &yieldingReader{r: in}); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("compress %s: fsync: %w", src, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	hook(StepCompressed)
	if err := os.Rename(tmp.Name(), src+gzExt); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	ok = true
	if err := syncDir(dir); err != nil {
		return err
	}
	hook(StepRenamed)
	return nil
}

// yieldingReader reads r, giving way (yield.Point.Maybe) before each read.
type yieldingReader struct {
	r io.Reader
	p yield.Point
}

func (y *yieldingReader) Read(b []byte) (int, error) {
	y.p.Maybe()
	return y.r.Read(b)
}

// prune removes the oldest compressed logs past keep.
func prune(path string, keep int) error {
	files, err := Rotated(path)
	if err != nil {
		return err
	}
	var gz []File
	for _, f := range files {
		if f.Compressed {
			gz = append(gz, f)
		}
	}
	var errs []error
	for i := 0; i < len(gz)-max(keep, 0); i++ {
		if err := os.Remove(gz[i].Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func removeTemps(dir, prefix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil && !errors.Is(serr, os.ErrInvalid) { // Windows cannot sync a directory
		return fmt.Errorf("fsync dir %s: %w", dir, serr)
	}
	return cerr
}
