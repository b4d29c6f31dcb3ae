//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory, or skips the test
// when this process may not mount (it needs root or CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): the full-disk test needs root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the file system is full, and returns it.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			return path
		}
	}
}

// TestDiskFullBuffersClicks is issue 9's finding 4 on a real full disk: serve's
// data dir is a small tmpfs, filled up while redirects are answered. Once the room
// the journal wrote ahead is used up, every fact fails the journal and the DLQ with
// ENOSPC and waits in memory (none goes to the log) while /healthz says click
// recording is degraded; once space returns
// every acknowledged click is recorded, none twice, and health is ok again.
func TestDiskFullBuffersClicks(t *testing.T) {
	data := mountTmpfs(t, 16<<20)
	in := newInstance(t, "LINOONE_DATA_DIR="+data, "LINOONE_LOG_LEVEL=warn")
	in.dataDir = data
	in.start()
	tokens := shortenN(t, in, 3)
	filler := fillDisk(t, data)

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	sent := map[string]request{}
	degraded := func() bool {
		h := healthBody(t, in.resolver)
		return strings.Contains(h, `"click-recording"`) && strings.Contains(h, `"status":"degraded"`)
	}
	// The journal's active segment has room written ahead of its end (a MiB), which a
	// full disk does not take away: clicks are journaled until it is used up (about
	// 550 of them), and only then wait in memory. 200 more wait there.
	more := -1
	for i := 0; more != 0; i++ {
		if i == 3000 {
			t.Fatalf("healthz after %d redirects on a full disk = %s, want click-recording degraded", i, healthBody(t, in.resolver))
		}
		ua, tok := fmt.Sprintf("disk-%d", i), tokens[i%len(tokens)]
		code, err := get(context.Background(), client, "http://"+in.resolver+"/"+tok, ua)
		if err != nil || code != http.StatusFound {
			t.Fatalf("GET /%s = %d, %v", tok, code, err)
		}
		sent[ua] = request{token: tok, acked: true}
		switch {
		case more > 0:
			more--
		case i%50 == 49 && degraded():
			more = 200
		}
	}
	if !degraded() {
		t.Fatalf("healthz on a full disk = %s, want click-recording degraded", healthBody(t, in.resolver))
	}
	if strings.Contains(in.logs.String(), "graph_fact") {
		t.Fatalf("facts reached the log although the buffer had room:\n%s", in.logs)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	facts := waitDelivered(t, in, tokens, sent)
	checkCrashFacts(t, in, tokens, sent, facts)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if h := healthBody(t, in.resolver); !strings.Contains(h, "click-recording") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("healthz after space returned = %s, want click recording ok", h)
		}
	}
}

// TestDiskLowIsReported (issue 47): with its data dir on a small tmpfs filled past
// LINOONE_DISK_LOW_PERCENT, serve's /healthz names disk-low and serve warns once;
// once room returns, the flag clears.
func TestDiskLowIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts linoone serve")
	}
	data := mountTmpfs(t, 32<<20)
	in := newInstance(t, "LINOONE_DATA_DIR="+data, "LINOONE_DISK_LOW_PERCENT=20")
	in.dataDir = data
	in.start()
	if h := healthBody(t, in.resolver); strings.Contains(h, "disk-low") {
		t.Fatalf("healthz on a roomy disk = %s", h)
	}
	filler := fillDisk(t, data)
	// Leave 10 % free: under the threshold, room enough to serve.
	if err := os.Truncate(filler, max(0, fileSizeOf(t, filler)-3<<20)); err != nil {
		t.Fatal(err)
	}
	waitHealth := func(want bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			h := healthBody(t, in.resolver)
			if strings.Contains(h, `"disk-low"`) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("healthz = %s, want disk-low %v", h, want)
			}
		}
	}
	waitHealth(true)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitHealth(false)
	if n := strings.Count(in.logs.String(), "nearly full"); n != 1 {
		t.Errorf("serve warned %d times of a nearly full disk, want once per crossing:\n%s", n, in.logs)
	}
}

func fileSizeOf(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
