package localbus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/foundation/rotlog"
)

// rotationOpts rotates the facts log every batch or two of 5 events.
var rotationOpts = FactsLogOptions{MaxSize: 6 << 10, Keep: 1000}

// allFactsKeys reads the facts log and every log moved aside from it (compressed or
// not), checking each line is a whole event, and counts them by idempotency key.
func allFactsKeys(t *testing.T, path string) map[string]int {
	t.Helper()
	files, err := rotlog.Rotated(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	read := func(name string, r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			var l factsLine
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, sc.Bytes())
			}
			f, err := clickfact.Parse(l.Detail)
			if err != nil {
				t.Fatal(err)
			}
			counts[f.IdempotencyKey]++
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = bytes.NewReader(b)
		if f.Compressed {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			r = zr
		}
		read(f.Path, r)
	}
	if b, err := os.ReadFile(path); err == nil {
		read(path, bytes.NewReader(b))
	}
	return counts
}

// The facts log rotates by size; what is moved aside is compressed, every event is
// in exactly one file, and only Keep compressed files stay.
func TestFactsLogRotates(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 60)
	journalSegments(t, dir, fs, 20)
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5, FactsLog: rotationOpts})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "facts.jsonl")
	counts := allFactsKeys(t, path)
	for _, k := range keysOf(fs) {
		if counts[k] != 1 {
			t.Errorf("%s is in the facts logs %d times, want once", k, counts[k])
		}
	}
	files, _ := rotlog.Rotated(path)
	if len(files) < 3 {
		t.Fatalf("%d logs moved aside, want several", len(files))
	}
	for _, f := range files {
		if !f.Compressed {
			t.Errorf("%s is not compressed after Close", f.Path)
		}
	}
	// A batch is never split: a log holds at most MaxSize, or one batch.
	if fi, err := os.Stat(path); err != nil || fi.Size() > rotationOpts.MaxSize+5*2<<10 {
		t.Errorf("facts.jsonl: %v, size past MaxSize %d and a batch", err, rotationOpts.MaxSize)
	}

	// Keep bounds what stays.
	c2 := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5, FactsLog: FactsLogOptions{MaxSize: 6 << 10, Keep: 2}})
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := rotlog.Rotated(path); len(files) != 2 {
		t.Errorf("%d logs kept, want 2", len(files))
	}
}

// Off writes no facts log and still delivers and moves the offset.
func TestFactsLogOff(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 12)
	journalSegments(t, dir, fs, 20)
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 5, FactsPath: filepath.Join(dir, "none.jsonl"), FactsLog: FactsLogOptions{Off: true}})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if len(ing.edges()) != len(fs) {
		t.Errorf("%d events ingested, want %d", len(ing.edges()), len(fs))
	}
	if _, err := os.Stat(filepath.Join(dir, "none.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a facts log was written with Off: %v", err)
	}
	if off := readOffset(t, dir); off.Position == 0 {
		t.Errorf("offset not moved: %+v", off)
	}
}

// A symbolic link in place of the facts log is refused, not followed.
func TestFactsLogRefusesALink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "facts.jsonl")); err != nil {
		t.Skip(err)
	}
	_, err := NewConsumer(dir, ConsumerOptions{Ingester: &fakeIngester{}, FactsPath: filepath.Join(dir, "facts.jsonl")})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("NewConsumer on a linked facts log: %v, want a refusal naming the link", err)
	}
}

const (
	envRotateChild = "LINOONE_TEST_ROTATE_CHILD" // the bus dir the child consumes
	envRotatePause = "LINOONE_TEST_ROTATE_PAUSE" // step:n, where the child pauses
)

// TestRotateChild is the child process of TestFactsLogKill9AtEachRotationStep: it
// drains the bus and, at the nth time it reaches the step, says so in a file and
// waits to be killed.
func TestRotateChild(t *testing.T) {
	dir := os.Getenv(envRotateChild)
	if dir == "" {
		t.Skip("the child of TestFactsLogKill9AtEachRotationStep")
	}
	step, nth, _ := strings.Cut(os.Getenv(envRotatePause), ":")
	n, _ := strconv.Atoi(nth)
	seen := 0
	hook := func(s rotlog.Step) {
		if string(s) != step {
			return
		}
		if seen++; seen == n {
			_ = os.WriteFile(filepath.Join(dir, "paused"), []byte(s), 0o600)
			select {} // until SIGKILL
		}
	}
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5, FactsLog: rotationOpts, atRotate: hook})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	t.Fatalf("drained without reaching step %s %d times (%d)", step, n, seen)
}

// A consumer killed with SIGKILL at any step of a rotation loses no line: a consumer
// started after it delivers the rest, and every event is in a whole line of the facts
// log or of a log moved aside (at least once).
func TestFactsLogKill9AtEachRotationStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	steps := []rotlog.Step{stepMoved, stepReopened, rotlog.StepCompressed, rotlog.StepRenamed, rotlog.StepRemoved, rotlog.StepPruned}
	fs := facts(t, 60)
	for _, step := range steps {
		for _, nth := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", step, nth), func(t *testing.T) {
				dir := t.TempDir()
				journalSegments(t, dir, fs, 20)
				cmd := exec.Command(os.Args[0], "-test.run=^TestRotateChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), envRotateChild+"="+dir, fmt.Sprintf("%s=%s:%d", envRotatePause, step, nth))
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() { _ = cmd.Wait(); close(done) }()
				waitPaused(t, dir, cmd, done, &out)
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-done
				if err := os.Remove(filepath.Join(dir, "paused")); err != nil {
					t.Fatal(err)
				}
				c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5, FactsLog: rotationOpts})
				if err := c.Drain(ctxTimeout(t)); err != nil {
					t.Fatal(err)
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				counts := allFactsKeys(t, filepath.Join(dir, "facts.jsonl"))
				for _, k := range keysOf(fs) {
					if counts[k] < 1 {
						t.Errorf("%s lost", k)
					}
				}
				if files, _ := rotlog.Rotated(filepath.Join(dir, "facts.jsonl")); len(files) == 0 {
					t.Error("nothing was rotated")
				} else {
					for _, f := range files {
						if !f.Compressed {
							t.Errorf("%s left uncompressed after the restart", f.Path)
						}
					}
				}
			})
		}
	}
}

func waitPaused(t *testing.T, dir string, cmd *exec.Cmd, done <-chan struct{}, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, "paused")); err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("the child exited before pausing:\n%s", out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	_ = cmd.Process.Kill()
	t.Fatalf("the child did not pause within 30s:\n%s", out.String())
}
