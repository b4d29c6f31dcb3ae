package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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

// TestEveryNamedVariableDescribed: a LINOONE_ variable named anywhere in the
// module's code (not its tests) is on the page, so that one read outside
// internal/app/config, as discover reads its endpoint, is not missed.
func TestEveryNamedVariableDescribed(t *testing.T) {
	described := map[string]bool{}
	for _, v := range config.Vars() {
		described[v.Name] = true
	}
	literal := regexp.MustCompile(`"(LINOONE_[A-Z0-9_]*[A-Z0-9])"`)
	root := filepath.Join("..", "..", "..", "..")
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			seen++
			if !described[m[1]] {
				t.Errorf("%s names %s, which internal/app/config/vars.go does not describe", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Errorf("found %d variable names in the code, want the module's", seen)
	}
}
