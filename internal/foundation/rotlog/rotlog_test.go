package rotlog

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/foundation/yield"
)

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Rotations compress what was moved aside, byte for byte, and keep the newest.
func TestRotateTidyKeepsNewest(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "facts.jsonl")
	now := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	var steps []Step
	for i := range 4 {
		if err := os.WriteFile(log, fmt.Appendf(nil, "line %d\n", i), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Rotate(log, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := Tidy(log, 2, func(s Step) { steps = append(steps, s) }); err != nil {
			t.Fatal(err)
		}
	}
	files, err := Rotated(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("rotated files %+v, want the newest 2", files)
	}
	for i, f := range files {
		if !f.Compressed {
			t.Errorf("%s not compressed", f.Path)
		}
		if got, want := gunzip(t, f.Path), fmt.Sprintf("line %d\n", i+2); got != want {
			t.Errorf("%s holds %q, want %q", f.Path, got, want)
		}
	}
	if want := 4 * 4; len(steps) != want {
		t.Errorf("steps %v, want %d", steps, want)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("the log itself is still there after Rotate: %v", err)
	}
}

// What a crash leaves between steps, Tidy finishes: a temporary .gz is removed and the
// file compressed again; a plain file whose .gz was renamed into place is removed.
func TestTidyAfterACrash(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "facts.jsonl")
	a := log + ".20261206T180000.000000000Z"
	b := log + ".20261206T180001.000000000Z"
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(p+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(dir, tmpPrefix+"facts.jsonl.20261206T180000.000000000Z.gz-123")
	if err := os.WriteFile(tmp, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	// b was compressed and renamed; the crash came before its removal.
	if err := compress(b, func(Step) {}); err != nil {
		t.Fatal(err)
	}
	if err := Tidy(log, 5, nil); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"facts.jsonl.20261206T180000.000000000Z.gz", "facts.jsonl.20261206T180001.000000000Z.gz"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("dir holds %v, want %v", names, want)
	}
	if got := gunzip(t, a+gzExt); got != a+"\n" {
		t.Errorf("%s holds %q", a, got)
	}
	if got := gunzip(t, b+gzExt); got != b+"\n" {
		t.Errorf("%s holds %q", b, got)
	}
}

func TestRotateRefusesALink(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "facts.jsonl")
	if err := os.Symlink(filepath.Join(t.TempDir(), "x"), log); err != nil {
		t.Skip(err)
	}
	if _, err := Rotate(log, time.Now()); err == nil {
		t.Error("Rotate moved a symbolic link aside")
	}
}

// TestCompressYields: compressing a rotated log gives way to the redirects while
// they are served (yield.When), as the consumer's long work does; a file of several
// megabytes takes more than yield.Interval to compress, so it yields at least once,
// and its .gz still holds every byte.
func TestCompressYields(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "facts.jsonl.1")
	var want []byte
	for i := 0; len(want) < 8<<20; i++ {
		want = fmt.Appendf(want, `{"n":%d,"pad":"%x"}`+"\n", i, i*7919)
	}
	if err := os.WriteFile(src, want, 0o600); err != nil {
		t.Fatal(err)
	}
	yield.When(func() bool { return true })
	t.Cleanup(func() { yield.When(nil) })
	before := yield.Yields()
	if err := compress(src, func(Step) {}); err != nil {
		t.Fatal(err)
	}
	if yield.Yields() == before {
		t.Error("compressing 8 MiB never yielded")
	}
	if got := gunzip(t, src+".gz"); got != string(want) {
		t.Errorf("the .gz holds %d bytes, want the %d written", len(got), len(want))
	}
}
