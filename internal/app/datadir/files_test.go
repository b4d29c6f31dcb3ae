package datadir

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, Bus, "journal"), 0o700); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if err := CheckFiles(dir, log); err != nil {
		t.Fatalf("a plain data dir: %v", err)
	}
	// A link deep inside is found.
	seg := filepath.Join(dir, Bus, "journal", "000000000001.log")
	if err := os.Symlink("/tmp/elsewhere", seg); err != nil {
		t.Skip(err)
	}
	if err := CheckFiles(dir, log); !errors.Is(err, ErrLinked) || !strings.Contains(err.Error(), seg) {
		t.Errorf("a linked segment: %v, want ErrLinked naming it", err)
	}
	if err := os.Remove(seg); err != nil {
		t.Fatal(err)
	}
	// A readable secret is warned of, not refused.
	if err := os.WriteFile(filepath.Join(dir, IdempotencySecretFile), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := CheckFiles(dir, log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "chmod 600") {
		t.Errorf("no warning of a shared secret: %s", logs.String())
	}
}

// The lock file is not followed either.
func TestLockRefusesALink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "pid")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ServeLock)); err != nil {
		t.Skip(err)
	}
	if unlock, err := Lock(dir); err == nil {
		unlock()
		t.Fatal("Lock followed a link")
	}
}
