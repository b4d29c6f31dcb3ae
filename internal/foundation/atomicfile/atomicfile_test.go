package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linoone/linoone/internal/foundation/atomicfile"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "offset")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := atomicfile.Replace(path, []byte(content), atomicfile.Options{}); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600 by default", fi.Mode().Perm(), err)
	}
	if err := atomicfile.Replace(path, []byte("x"), atomicfile.Options{Perm: 0o644}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want the 0644 asked for", fi.Mode().Perm())
	}
	assertOnly(t, dir, "offset")
}

// TestReplaceNeverFollowsASymlink: a symlink planted at the target is replaced by
// the file, and the file it pointed to is left as it was.
func TestReplaceNeverFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "serve.json")
	if err := os.Symlink(outside, path); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := atomicfile.Replace(path, []byte("new"), atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Errorf("target is still a symlink (%v)", err)
	}
}

// TestCreate: the first writer creates the file; a later one, or one that finds a
// symlink there, writes nothing and is told so.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "credentials.json")
	created, err := atomicfile.Create(path, []byte("one"), atomicfile.Options{})
	if err != nil || !created {
		t.Fatalf("first Create = %v, %v; want created", created, err)
	}
	created, err = atomicfile.Create(path, []byte("two"), atomicfile.Options{})
	if err != nil || created {
		t.Fatalf("second Create = %v, %v; want not created", created, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Errorf("content %q, want the first writer's", b)
	}
	link := filepath.Join(dir, "idempotency-secret")
	outside := filepath.Join(t.TempDir(), "absent")
	if err := os.Symlink(outside, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if created, err := atomicfile.Create(link, []byte("secret"), atomicfile.Options{}); err != nil || created {
		t.Errorf("Create over a dangling symlink = %v, %v; want not created", created, err)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dangling symlink's target was created (%v)", err)
	}
	assertOnly(t, dir, "credentials.json", "idempotency-secret")
}

// TestCreateRace: of many concurrent writers exactly one creates the file, and the
// file holds its content.
func TestCreateRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	for i := range 16 {
		content := string(rune('a' + i))
		wg.Go(func() {
			created, err := atomicfile.Create(path, []byte(content), atomicfile.Options{})
			if err != nil {
				t.Error(err)
			}
			if created {
				mu.Lock()
				winners = append(winners, content)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b, _ := os.ReadFile(path)
	if len(winners) != 1 || winners[0] != string(b) {
		t.Errorf("winners %q, file %q: want exactly one, whose content the file holds", winners, b)
	}
}

// TestSyncs: the file is synced before it is put in place, then its directory, both
// through Options.Sync; a failing sync leaves the target as it was and no
// temporary file behind.
func TestSyncs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "offset")
	var synced []string
	o := atomicfile.Options{Sync: func(f *os.File) error {
		_, err := os.Stat(path)
		synced = append(synced, filepath.Base(f.Name())+map[bool]string{true: " (target present)", false: ""}[err == nil])
		return f.Sync()
	}}
	if err := atomicfile.Replace(path, []byte("1"), o); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 2 || !strings.HasPrefix(synced[0], ".tmp-offset-") || strings.HasSuffix(synced[0], "(target present)") ||
		synced[1] != filepath.Base(dir)+" (target present)" {
		t.Errorf("synced %q, want the temporary file, then the directory once the target is in place", synced)
	}
	failing := atomicfile.Options{Sync: func(*os.File) error { return errors.New("disk full") }}
	if err := atomicfile.Replace(path, []byte("2"), failing); err == nil {
		t.Fatal("a failing sync was not reported")
	}
	if b, _ := os.ReadFile(path); string(b) != "1" {
		t.Errorf("content %q after a failed write, want the old one", b)
	}
	assertOnly(t, dir, "offset")
}

// assertOnly checks that dir holds exactly names: no temporary file is left.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}
