package denyfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/linoone/linoone/internal/local/denyfile"
)

// TestEditKeepsMode: an edit replaces the list through a temporary file, made
// 0600; the list keeps its own mode, so a serve running
// under another account can still read it.
func TestEditKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	if err := os.WriteFile(path, []byte("evil.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if _, err := denyfile.Add(path, "*.bad.example"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o644 {
		t.Errorf("mode %v after an edit, want -rw-r--r--", got)
	}
	if b, _ := os.ReadFile(path); string(b) != "evil.example\n*.bad.example\n" {
		t.Errorf("list %q", b)
	}
}

// TestEditsAtOnceAllLand: Add reads, changes and replaces the list; eight
// run at once, and every rule must be in the list afterwards, not only the last
// rename's.
func TestEditsAtOnceAllLand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := denyfile.Add(path, fmt.Sprintf("evil%d.example", i))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	lines, err := denyfile.Lines(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 8 {
		t.Fatalf("%d rules after 8 blocks at once: %q", len(lines), lines)
	}
}

// TestEditThroughSymlink: a list kept elsewhere and linked into place is
// edited where it is; the link stays a link.
func TestEditThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "lists", "deny.txt"), filepath.Join(dir, "denylist.txt")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("a.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := denyfile.Add(link, "b.example"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "a.example\nb.example\n" {
		t.Errorf("the linked list holds %q", b)
	}
}

// TestAddAndRemove: a rule is added once, removed once, and the others stay as
// they were written.
func TestAddAndRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denylist.txt")
	for _, step := range []struct {
		add, remove string
		changed     bool
		want        string
	}{
		{add: "evil.example", changed: true, want: "evil.example\n"},
		{add: "evil.example", changed: false, want: "evil.example\n"},
		{add: "*.bad.example", changed: true, want: "evil.example\n*.bad.example\n"},
		{remove: "good.example", changed: false, want: "evil.example\n*.bad.example\n"},
		{remove: "evil.example", changed: true, want: "*.bad.example\n"},
	} {
		var changed bool
		var err error
		if step.add != "" {
			changed, err = denyfile.Add(path, step.add)
		} else {
			changed, err = denyfile.Remove(path, step.remove)
		}
		if err != nil || changed != step.changed {
			t.Fatalf("%+v: changed %v, %v", step, changed, err)
		}
		if b, _ := os.ReadFile(path); string(b) != step.want {
			t.Fatalf("%+v: list %q", step, b)
		}
	}
}
