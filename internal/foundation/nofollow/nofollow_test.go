package nofollow

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOpenFileRefusesALink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.log")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "facts.jsonl")
	if err := os.Symlink(outside, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	_, err := OpenFile(link, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if !errors.Is(err, ErrSymlink) {
		t.Fatalf("OpenFile on a link: %v, want ErrSymlink", err)
	}
	if _, err := ReadFile(link); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadFile on a link: %v, want ErrSymlink", err)
	}
	if err := Check(link); !errors.Is(err, ErrSymlink) {
		t.Errorf("Check on a link: %v, want ErrSymlink", err)
	}
	if fi, _ := os.Stat(outside); fi.Size() != 0 {
		t.Errorf("the link's target was written: %d bytes", fi.Size())
	}
	// A regular file opens as before.
	plain := filepath.Join(dir, "plain")
	f, err := OpenFile(plain, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := Check(plain); err != nil {
		t.Error(err)
	}
	if err := Check(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Check on a missing file: %v", err)
	}
}

func TestPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Private(p); err != nil {
		t.Errorf("0600: %v", err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := Private(p); !errors.Is(err, ErrShared) {
			t.Errorf("%#o: %v, want ErrShared", mode, err)
		}
	}
}
