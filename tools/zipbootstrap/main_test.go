package main

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// input is a stand-in bootstrap: random bytes (incompressible) then a repetitive tail
// (compressible), large enough for several Deflate blocks.
func input(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 1<<20, 3<<20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return append(b, bytes.Repeat([]byte("\x7fELF linoone bootstrap "), 80000)...)
}

func zipFile(t *testing.T, in, out string) []byte {
	t.Helper()
	if err := run([]string{in, out}); err != nil {
		t.Fatalf("run(%s, %s): %v", in, out, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunIsReproducible(t *testing.T) {
	dir := t.TempDir()
	content := input(t)
	in := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(in, content, 0o755); err != nil {
		t.Fatal(err)
	}
	first := zipFile(t, in, filepath.Join(dir, "a.zip"))
	// A different file time and mode of the input must not matter.
	if err := os.Chtimes(in, time.Now(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(in, 0o700); err != nil {
		t.Fatal(err)
	}
	second := zipFile(t, in, filepath.Join(dir, "b.zip"))
	if !bytes.Equal(first, second) {
		t.Fatalf("two runs on the same input differ: %d and %d bytes", len(first), len(second))
	}
	// Overwriting an existing zip gives the same bytes again and leaves no temp file.
	again := zipFile(t, in, filepath.Join(dir, "a.zip"))
	if !bytes.Equal(first, again) {
		t.Fatal("rewriting a.zip changed its bytes")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("want bootstrap, a.zip and b.zip in the output directory, got %v", entries)
	}
	if len(first) >= len(content) {
		t.Errorf("zip is %d bytes for %d bytes of input: not compressed", len(first), len(content))
	}
}

func TestEntry(t *testing.T) {
	content := input(t)
	var buf bytes.Buffer
	if err := writeZip(&buf, content); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 {
		t.Fatalf("want one entry, got %d", len(zr.File))
	}
	f := zr.File[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"name", f.Name, "bootstrap"},
		{"method", f.Method, zip.Deflate},
		{"mode", f.Mode(), os.FileMode(0o755)},
		{"creator OS (high byte of made-by)", f.CreatorVersion >> 8, uint16(3)}, // 3 = Unix
		{"external attributes (Unix mode << 16)", f.ExternalAttrs, uint32(0o100755) << 16},
		{"modified", f.Modified, time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"flags (no data descriptor, no UTF-8 flag)", f.Flags, uint16(0)},
		{"central directory extra", len(f.Extra), 0},
		{"comment", f.Comment, ""},
		{"uncompressed size", f.UncompressedSize64, uint64(len(content))},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}

	// The local file header (offset 0) carries no extra field either, and the sizes.
	local := buf.Bytes()[:30]
	if sig := binary.LittleEndian.Uint32(local[0:]); sig != 0x04034b50 {
		t.Fatalf("local header signature %#x", sig)
	}
	if n := binary.LittleEndian.Uint16(local[28:]); n != 0 {
		t.Errorf("local header extra field length %d, want 0", n)
	}
	if n := binary.LittleEndian.Uint32(local[22:]); n != uint32(len(content)) {
		t.Errorf("local header uncompressed size %d, want %d", n, len(content))
	}

	rc, err := f.Open() // checks the CRC-32 at EOF
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, content) {
		t.Fatalf("content does not round-trip: got %d bytes, want %d", len(got), len(content))
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(in, []byte("bootstrap"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"no arguments", nil},
		{"one argument", []string{in}},
		{"three arguments", []string{in, filepath.Join(dir, "a.zip"), "extra"}},
		{"missing input", []string{filepath.Join(dir, "nope"), filepath.Join(dir, "out.zip")}},
		{"missing output directory", []string{in, filepath.Join(dir, "no", "such", "out.zip")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := run(tt.args); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}
