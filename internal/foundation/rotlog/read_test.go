package rotlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readChain reads every file of path's chain, in order.
func readChain(t *testing.T, path string) string {
	t.Helper()
	files, err := Chain(path)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, f := range files {
		r, err := Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(&sb, r); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		r.Close()
	}
	return sb.String()
}

// A chain is the logs moved aside in the order of their time stamps, whatever the
// order they were made in, then the live log; a log left both plain and compressed
// counts once, and names that are no time stamp are no part of it.
func TestChainOrder(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "facts.jsonl")
	base := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	// Rotated in the order 2, 0, 1: the directory's order and the files' times are
	// not the stamps'.
	for _, i := range []int{2, 0, 1} {
		if err := os.WriteFile(log, fmt.Appendf(nil, "line %d\n", i), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Rotate(log, base.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Tidy(log, 10, nil); err != nil {
		t.Fatal(err)
	}
	// A crash between the .gz's rename and the plain file's removal: both are there.
	leftPlain := log + "." + base.Add(time.Hour).Format(stamp)
	if err := os.WriteFile(leftPlain, []byte("line 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"facts.jsonl.old": "old\n", "facts.jsonl.1.gz": "one\n", "other.jsonl": "other\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(log, []byte("live\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := readChain(t, log), "line 0\nline 1\nline 2\nlive\n"; got != want {
		t.Errorf("chain reads %q, want %q", got, want)
	}
	files, _ := Chain(log)
	if len(files) != 4 || files[1].Path != leftPlain || files[1].Compressed || !files[2].Compressed {
		t.Errorf("chain %+v: want the plain copy of the file left twice", files)
	}

	// Tidy compressed the plain copy after the chain was listed: its .gz is read.
	if err := os.Remove(leftPlain); err != nil {
		t.Fatal(err)
	}
	r, err := Open(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != "line 1\n" {
		t.Errorf("%s compressed meanwhile reads %q, %v", leftPlain, b, err)
	}
	r.Close()

	// A rotated file named alone is read alone, through gzip.
	one := log + "." + base.Format(stamp) + gzExt
	if got := readChain(t, one); got != "line 0\n" {
		t.Errorf("%s alone reads %q", one, got)
	}
	// No live log: the rotated ones are the chain.
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if got, want := readChain(t, log), "line 0\nline 1\nline 2\n"; got != want {
		t.Errorf("chain without a live log reads %q, want %q", got, want)
	}
	if _, err := Chain(filepath.Join(dir, "absent.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("chain of a log that never was: %v, want not exist", err)
	}
}

// A compressed log that is not whole is refused, naming it, by Verify and by Open's
// reader, wherever it is cut or damaged.
func TestCorruptGzipIsRefused(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "facts.jsonl")
	if err := os.WriteFile(log, []byte(strings.Repeat(`{"a":"some line of the log"}`+"\n", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Rotate(log, time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := Tidy(log, 10, nil); err != nil {
		t.Fatal(err)
	}
	files, err := Chain(log)
	if err != nil || len(files) != 1 || !files[0].Compressed {
		t.Fatalf("chain %+v, %v", files, err)
	}
	whole, err := os.ReadFile(files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(files[0]); err != nil {
		t.Fatalf("a whole .gz: %v", err)
	}
	damages := map[string][]byte{
		"cut in the middle":   whole[:len(whole)/2],
		"cut before the CRC":  whole[:len(whole)-4],
		"a flipped byte":      flip(whole, len(whole)/2),
		"a damaged header":    flip(whole, 0),
		"garbage appended":    append(append([]byte{}, whole...), "garbage"...),
		"empty":               {},
		"a damaged CRC field": flip(whole, len(whole)-6),
	}
	for name, b := range damages {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(files[0].Path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			err := Verify(files[0])
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != files[0].Path || !strings.Contains(err.Error(), files[0].Path) {
				t.Fatalf("Verify: %v, want a CorruptError naming %s", err, files[0].Path)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0xff
	return c
}
