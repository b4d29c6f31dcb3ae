package diskfree

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// smallTmpfs mounts a 1 MiB tmpfs for the test, or skips where it cannot (not root,
// not Linux).
func smallTmpfs(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("tmpfs is Linux's")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (root needed): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// On a real, small file system: filling it past 95 % crosses into low once, freeing
// it crosses back.
func TestWatchOnATmpfs(t *testing.T) {
	dir := smallTmpfs(t)
	var crossings []bool
	w := &Watch{Path: dir, LowPercent: 5, Every: time.Second, OnCross: func(low bool, s Space) {
		crossings = append(crossings, low)
		if s.Total != 1<<20 {
			t.Errorf("tmpfs total %d, want 1 MiB", s.Total)
		}
	}}
	now := time.Now()
	if w.Low(now) {
		t.Fatal("an empty tmpfs is low")
	}
	fill := filepath.Join(dir, "fill")
	if err := os.WriteFile(fill, make([]byte, 1<<20-16<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	if w.Low(now.Add(time.Millisecond)) {
		t.Error("checked again before Every passed")
	}
	for i := range 3 {
		if !w.Low(now.Add(time.Duration(i+1) * time.Second)) {
			t.Fatalf("a full tmpfs is not low (check %d)", i)
		}
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if w.Low(now.Add(5 * time.Second)) {
		t.Error("still low once freed")
	}
	if len(crossings) != 2 || !crossings[0] || crossings[1] {
		t.Errorf("crossings %v, want [true false]: once each way", crossings)
	}
}

func TestWatchOff(t *testing.T) {
	w := &Watch{Path: t.TempDir(), LowPercent: 0, Stat: func(string) (Space, error) { return Space{Total: 100, Avail: 0}, nil }}
	if w.Low(time.Now()) {
		t.Error("LowPercent 0 reports low")
	}
}
