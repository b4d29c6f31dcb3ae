package status

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSizeDataDirByPart: every file of a data dir is counted in its part, rotated
// and half-compressed logs with their log, a symbolic link not followed, and the
// parts sum to the total; the free space is the file system's.
func TestSizeDataDirByPart(t *testing.T) {
	dir := t.TempDir()
	files := map[string]int{
		"facts.jsonl":                                     100,
		"facts.jsonl.20261206T101010.000000000Z":          200,
		"facts.jsonl.20261205T101010.000000000Z.gz":       30,
		".tmp-facts.jsonl.gz-123":                         4,
		"persist.db":                                      5000,
		"persist.db-wal":                                  700,
		"persist.db-shm":                                  32,
		"bus/00000000000000000000.seg":                    900,
		"bus/consumer.offset":                             8,
		"bus/refused.jsonl":                               60,
		"bus/refused.jsonl.20261206T101010.000000000Z.gz": 6,
		"dlq/00000001.json":                               11,
		"serve.lock":                                      5,
		"idempotency-secret":                              32,
	}
	for name, n := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	big := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(big, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(big, filepath.Join(dir, "facts.jsonl.20261204T101010.000000000Z")); err != nil {
			t.Fatal(err)
		}
	}
	d, err := SizeDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{PartFacts: 334, PartPersistDB: 5000, PartWAL: 732, PartJournal: 908,
		PartDLQ: 11, PartRefused: 66, PartOther: 37}
	var sum int64
	for _, p := range d.Parts {
		if p.Bytes != want[p.Name] {
			t.Errorf("%s: %d bytes, want %d", p.Name, p.Bytes, want[p.Name])
		}
		sum += p.Bytes
	}
	if len(d.Parts) != len(want) || d.Total != sum || sum != 7088 {
		t.Errorf("parts %+v, total %d; want %d parts summing to 7088", d.Parts, d.Total, len(want))
	}
	if runtime.GOOS == "linux" && (d.FreeBytes == nil || *d.FreeBytes == 0 || *d.FreePercent <= 0 || *d.FreePercent > 100) {
		t.Errorf("free space %v, %v; want the file system's", d.FreeBytes, d.FreePercent)
	}

	var out bytes.Buffer
	if err := (Report{Disk: d}).Write(&out, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"data dir", "facts log", "334 bytes", "persist db", "5.0 kB", "bus journal", "908 bytes", "refused", "66 bytes", "free space"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("status does not print %q:\n%s", line, out.String())
		}
	}
}
