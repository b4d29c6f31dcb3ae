package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/app/config"
)

// TestDocGenerated: docs/configuration.md is what configdoc writes (make generate),
// so `make test` fails on a stale page as `make lint` does.
func TestDocGenerated(t *testing.T) {
	var b bytes.Buffer
	if err := write(&b, config.Binaries(), config.Vars()); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Error("docs/configuration.md is out of date with internal/app/config: run make generate and commit")
	}
	for _, v := range config.Vars() {
		if !strings.Contains(b.String(), "| `"+v.Name+"` |") {
			t.Errorf("the page has no row for %s", v.Name)
		}
	}
}

// TestCheckRefuses: a variable that a configuration reads but Vars does not
// describe, or one described that nothing reads, stops the page from being written.
func TestCheckRefuses(t *testing.T) {
	vars := config.Vars()
	read := readers(config.Binaries())
	if err := check(vars, read); err != nil {
		t.Fatalf("the real configuration: %v", err)
	}
	read["LINOONE_NEW_KNOB"] = []string{"resolve λ"}
	if err := check(vars, read); err == nil || !strings.Contains(err.Error(), "LINOONE_NEW_KNOB (read by resolve λ): describe it in Vars") {
		t.Errorf("an undescribed variable: %v", err)
	}
	delete(read, "LINOONE_NEW_KNOB")
	delete(read, "LINOONE_DLQ_TIMEOUT")
	if err := check(vars, read); err == nil || !strings.Contains(err.Error(), "LINOONE_DLQ_TIMEOUT is described") {
		t.Errorf("a variable nothing reads: %v", err)
	}
}
