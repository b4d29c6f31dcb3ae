package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesLinkedDataFiles is issue 44's finding 7 through the real serve: a
// facts.jsonl replaced by a symbolic link before start is not followed (no visitor
// address lands outside the data dir); serve refuses to start and names the link.
// An idempotency secret others may read is warned of.
func TestServeRefusesLinkedDataFiles(t *testing.T) {
	in := newInstance(t)
	in.start()
	in.shorten("https://example.com/before")
	in.stop()

	secret := filepath.Join(in.dataDir, "idempotency-secret")
	if err := os.Chmod(secret, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "world-readable.jsonl")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	facts := filepath.Join(in.dataDir, "facts.jsonl")
	if err := os.Remove(facts); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, facts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Env = in.env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "symbolic link") || !strings.Contains(string(out), facts) {
		t.Fatalf("serve with a linked facts.jsonl: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "idempotency-secret") || !strings.Contains(string(out), "chmod 600") {
		t.Errorf("serve did not warn of an idempotency secret others may read:\n%s", out)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Size() != 0 {
		t.Errorf("the link's target: %v, %d bytes written", err, fi.Size())
	}
}
