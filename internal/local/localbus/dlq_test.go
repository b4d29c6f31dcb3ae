package localbus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/eventid"
	"github.com/linoone/linoone/internal/core/shorturl"
)

var dlqName = regexp.MustCompile(`^\d{8}T\d{9}Z-shorturl_ev_[0-9A-Z]{26}\.json$`)

func openDLQ(t testing.TB, dir string, opts DLQOptions) *DLQ {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	q, err := OpenDLQ(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// deadLetter dead-letters f as failed at now+i ms.
func deadLetter(t testing.TB, q *DLQ, f clickfact.Fact, i int) {
	t.Helper()
	d := clickfact.NewDeadLetter(f, fixedNow.Add(time.Duration(i)*time.Millisecond), 1, errors.New("PutEvents: InternalFailure"))
	if err := q.DeadLetter(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// flakyPublisher fails the keys in fail and records what it published.
type flakyPublisher struct {
	mu        sync.Mutex
	fail      map[string]bool
	published []string
}

func (p *flakyPublisher) Publish(_ context.Context, f clickfact.Fact) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail[f.IdempotencyKey] {
		return fmt.Errorf("%w: still down", ErrRejected)
	}
	p.published = append(p.published, f.IdempotencyKey)
	return nil
}

func dlqFiles(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestDeadLetterWritesParsableFile(t *testing.T) {
	dir := t.TempDir()
	q := openDLQ(t, dir, DLQOptions{})
	f := facts(t, 1)[0]
	deadLetter(t, q, f, 0)

	names := dlqFiles(t, dir)
	if len(names) != 1 || !dlqName.MatchString(names[0]) || !strings.HasPrefix(names[0], "20261129T101112345Z-") {
		t.Fatalf("dlq files = %v", names)
	}
	body, err := os.ReadFile(filepath.Join(dir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	d, got, err := clickfact.ParseDeadLetter(body)
	if err != nil {
		t.Fatal(err)
	}
	if got.IdempotencyKey != f.IdempotencyKey || d.Attempts != 1 || d.FailedAt != "2026-11-29T10:11:12.345Z" {
		t.Errorf("dead letter = %+v, fact key %s", d, got.IdempotencyKey)
	}

	entries, err := q.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Entry{Name: names[0], IdempotencyKey: f.IdempotencyKey, Token: f.Token, FailedAt: fixedNow, Attempts: 1, Reason: "PutEvents: InternalFailure"}
	if len(entries) != 1 || entries[0] != want {
		t.Errorf("List = %+v, want [%+v]", entries, want)
	}
}

func TestDeadLetterNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	q := openDLQ(t, dir, DLQOptions{})
	f := facts(t, 1)[0]
	deadLetter(t, q, f, 0)
	deadLetter(t, q, f, 0) // same failed_at, same key
	if names := dlqFiles(t, dir); len(names) != 2 {
		t.Errorf("files = %v, want 2", names)
	}
}

func TestDLQIsBounded(t *testing.T) {
	dir := t.TempDir()
	q := openDLQ(t, dir, DLQOptions{Max: 2})
	fs := facts(t, 3)
	deadLetter(t, q, fs[0], 0)
	deadLetter(t, q, fs[1], 1)
	err := q.DeadLetter(context.Background(), clickfact.NewDeadLetter(fs[2], fixedNow, 1, errors.New("x")))
	if !errors.Is(err, ErrDLQFull) {
		t.Errorf("third dead letter: %v, want ErrDLQFull", err)
	}
	// A replay in another process frees room; the count catches up.
	if err := os.Remove(filepath.Join(dir, dlqFiles(t, dir)[0])); err != nil {
		t.Fatal(err)
	}
	q.lastRecount = time.Time{}
	if err := q.DeadLetter(context.Background(), clickfact.NewDeadLetter(fs[2], fixedNow, 1, errors.New("x"))); err != nil {
		t.Errorf("after room was freed: %v", err)
	}
}

func TestReplay(t *testing.T) {
	dir := t.TempDir()
	later := fixedNow.Add(time.Hour)
	q := openDLQ(t, dir, DLQOptions{Now: func() time.Time { return later }})
	fs := facts(t, 5)
	for i, f := range fs {
		deadLetter(t, q, f, 5-i) // reverse order: replay must sort by failed_at
	}
	if err := os.WriteFile(filepath.Join(dir, "20260101T000000000Z-garbage.json"), []byte(`{"nope":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := &flakyPublisher{fail: map[string]bool{fs[1].IdempotencyKey: true, fs[3].IdempotencyKey: true}}
	var progress []int
	res, err := q.Replay(context.Background(), pub, func(done, total int) {
		if total != 6 {
			t.Errorf("progress total = %d, want 6", total)
		}
		progress = append(progress, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res != (ReplayResult{Replayed: 3, Failed: 2, Invalid: 1}) {
		t.Errorf("result = %+v", res)
	}
	if len(progress) != 6 || progress[5] != 6 {
		t.Errorf("progress = %v", progress)
	}
	wantOrder := []string{fs[4].IdempotencyKey, fs[2].IdempotencyKey, fs[0].IdempotencyKey}
	if fmt.Sprint(pub.published) != fmt.Sprint(wantOrder) {
		t.Errorf("published %v, want failed_at order %v", pub.published, wantOrder)
	}
	if _, err := os.Stat(filepath.Join(dir, "invalid", "20260101T000000000Z-garbage.json")); err != nil {
		t.Errorf("invalid file not moved to invalid/: %v", err)
	}

	entries, err := q.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("left in the DLQ: %+v, want the 2 that failed", entries)
	}
	for _, e := range entries {
		if !pub.fail[e.IdempotencyKey] || e.Attempts != 2 || !e.FailedAt.Equal(later) ||
			!strings.Contains(e.Reason, "still down") || e.Problem != "" || !strings.HasPrefix(e.Name, "20261129T111112345Z-") {
			t.Errorf("rewritten entry = %+v", e)
		}
	}

	// Re-running with the bus still failing those two replays nothing more.
	res, err = q.Replay(context.Background(), pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res != (ReplayResult{Failed: 2}) || len(pub.published) != 3 {
		t.Errorf("second run = %+v, published %d", res, len(pub.published))
	}
	// Once the bus recovers they go; after a full drain nothing is left to replay.
	pub.fail = nil
	if res, err = q.Replay(context.Background(), pub, nil); err != nil || res != (ReplayResult{Replayed: 2}) {
		t.Errorf("third run = %+v, %v", res, err)
	}
	if res, err = q.Replay(context.Background(), pub, nil); err != nil || res != (ReplayResult{}) {
		t.Errorf("fourth run = %+v, %v", res, err)
	}
	if names := dlqFiles(t, dir); len(names) != 0 {
		t.Errorf("files left: %v", names)
	}
}

// blockingPublisher holds the first Publish until released.
type blockingPublisher struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (p *blockingPublisher) Publish(context.Context, clickfact.Fact) error {
	p.once.Do(func() { close(p.entered) })
	<-p.release
	return nil
}

func TestConcurrentReplayIsRefused(t *testing.T) {
	dir := t.TempDir()
	q := openDLQ(t, dir, DLQOptions{})
	deadLetter(t, q, facts(t, 1)[0], 0)
	pub := &blockingPublisher{entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, err := q.Replay(context.Background(), pub, nil)
		done <- err
	}()
	<-pub.entered
	other := openDLQ(t, dir, DLQOptions{}) // as another process would
	_, err := other.Replay(context.Background(), &flakyPublisher{}, nil)
	if !errors.Is(err, ErrReplayRunning) || !strings.Contains(err.Error(), "another replay is running") {
		t.Errorf("second replay: %v, want ErrReplayRunning", err)
	}
	close(pub.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res, err := other.Replay(context.Background(), &flakyPublisher{}, nil); err != nil || res != (ReplayResult{}) {
		t.Errorf("replay after the first finished: %+v, %v", res, err)
	}
}

// The whole local failure path: the bus rejects (LINOONE_BUS_FAULT=always), the
// recorder dead-letters, replay republishes through a healthy bus, the consumer
// delivers the same facts with the same idempotency keys.
func TestFaultDeadLetterReplayDeliver(t *testing.T) {
	busDir, dlqDir := t.TempDir(), t.TempDir()
	q := openDLQ(t, dlqDir, DLQOptions{})
	faulty := openBus(t, busDir, BusOptions{Fault: FaultAlways})
	ids := eventid.New()
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{
		Publisher:   faulty,
		DeadLetters: q,
		EventIDs:    ids.Next,
		Logger:      testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	u := shorturl.ShortURL{Token: "AbCdEf1234", Path: "http://127.0.0.1:8080/AbCdEf1234", Target: "https://example.com/"}
	for range 3 {
		rec.Record(context.Background(), u, shorturl.Visit{IP: "127.0.0.1", UserAgent: "curl/8", At: fixedNow})
	}
	if c := rec.Counters(); c.DeadLettered.Load() != 3 || c.Published.Load() != 0 {
		t.Fatalf("recorder counters: published %d, dead-lettered %d", c.Published.Load(), c.DeadLettered.Load())
	}
	entries, err := q.List(context.Background())
	if err != nil || len(entries) != 3 {
		t.Fatalf("List = %d entries, %v", len(entries), err)
	}

	healthy := openBus(t, busDir, BusOptions{})
	res, err := q.Replay(context.Background(), healthy, nil)
	if err != nil || res != (ReplayResult{Replayed: 3}) {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	ing := &fakeIngester{}
	c := newConsumer(t, busDir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(busDir, "facts.jsonl")))
	if len(got) != 3 {
		t.Errorf("delivered %v, want 3 facts", got)
	}
	for _, e := range entries {
		if got[e.IdempotencyKey] != 1 {
			t.Errorf("%s delivered %d times, want 1", e.IdempotencyKey, got[e.IdempotencyKey])
		}
	}
}

// TestWaitingInDLQ: linoone status counts the DLQ's messages without opening it (which
// creates its directories and removes stale temporary files): a DLQ never created
// holds none, and a temporary file or a set-aside invalid message is not one waiting.
func TestWaitingInDLQ(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dlq")
	if n, err := WaitingInDLQ(dir); n != 0 || err != nil {
		t.Fatalf("a DLQ never created: %d, %v; want 0, nil", n, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("counting created the DLQ's directory: %v", err)
	}
	q := openDLQ(t, dir, DLQOptions{})
	for i, f := range facts(t, 3) {
		deadLetter(t, q, f, i)
	}
	for _, name := range []string{".tmp-123", filepath.Join(invalidDirName, "x"+dlqExt)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := WaitingInDLQ(dir); n != 3 || err != nil {
		t.Errorf("WaitingInDLQ = %d, %v; want 3, nil", n, err)
	}
}

// TestReplayFailureNamesTheToken: a fact whose replay fails is logged with its short
// URL's token, the field "what happened to token X" filters on.
func TestReplayFailureNamesTheToken(t *testing.T) {
	var logs bytes.Buffer
	q := openDLQ(t, t.TempDir(), DLQOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	fs := facts(t, 2)
	for i, f := range fs {
		deadLetter(t, q, f, i)
	}
	pub := &flakyPublisher{fail: map[string]bool{fs[0].IdempotencyKey: true, fs[1].IdempotencyKey: true}}
	if res, err := q.Replay(context.Background(), pub, nil); err != nil || res.Failed != 2 {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	got := map[string]string{} // idempotency key → token
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var l struct {
			Msg   string `json:"msg"`
			Key   string `json:"idempotency_key"`
			Token string `json:"short_url_token"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Msg == "dlq replay failed; message kept" {
			got[l.Key] = l.Token
		}
	}
	for _, f := range fs {
		if got[f.IdempotencyKey] != f.Token {
			t.Errorf("replay failure of %s names token %q, want %s\n%s", f.IdempotencyKey, got[f.IdempotencyKey], f.Token, logs.String())
		}
	}
}
