package localbus

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/foundation/rotlog"
)

// TestRefusedIsBounded: refused.jsonl is moved aside once it reaches its bound and
// only the newest files moved aside are kept, compressed; the lines of the kept
// files and the current one follow each other with none missing.
func TestRefusedIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), refusedFile)
	const maxSize, keep, batches = 250, 2, 20
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for i := range batches {
		line := fmt.Sprintf("{\"n\":%03d,\"pad\":%q}\n", i, strings.Repeat("x", 80))
		if err := boundKept(path, maxSize, keep, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := appendKept(path, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	files, err := rotlog.Rotated(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != keep {
		t.Fatalf("%d files moved aside kept, want %d: %+v", len(files), keep, files)
	}
	var all string
	for _, f := range files {
		if !f.Compressed {
			t.Errorf("%s is not compressed", f.Path)
		}
		all += readRotated(t, f)
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) >= maxSize+100 {
		t.Errorf("refused.jsonl holds %d bytes, past its bound %d", len(cur), maxSize)
	}
	all += string(cur)
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	// Each file holds three lines (3 × 99 bytes ≥ 250): two kept, plus the current two.
	first := batches - len(lines)
	if first <= 0 || len(lines) != 3*keep+2 {
		t.Fatalf("%d lines kept from %d, want the newest %d", len(lines), batches, 3*keep+2)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf("{\"n\":%03d,", first+i)) {
			t.Errorf("line %d is %.12q, want fact %d: a line lost or repeated", i, l, first+i)
		}
	}
}

// readRotated is the lines of a file moved aside, read as serve's readers read them.
func readRotated(t *testing.T, f rotlog.File) string {
	t.Helper()
	r, err := rotlog.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
