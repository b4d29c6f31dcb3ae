package shorturl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

// syncLog is a log buffer the Recorder's Run goroutine and the test share.
type syncLog struct{ syncbuf.Buffer }

// factKeys are the idempotency keys of the whole facts in the log's graph_fact
// attributes, in order.
func (l *syncLog) factKeys(t *testing.T) []string {
	t.Helper()
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			GraphFact json.RawMessage `json:"graph_fact"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if line.GraphFact != nil {
			f, err := clickfact.Parse(line.GraphFact)
			if err != nil {
				t.Fatalf("logged fact: %v", err)
			}
			keys = append(keys, f.IdempotencyKey)
		}
	}
	return keys
}

func newBufferedRecorder(t *testing.T, pub shorturl.Publisher, dlq shorturl.DeadLetters, logs *syncLog, bufferBytes, perSecond int) *shorturl.Recorder {
	t.Helper()
	var mu sync.Mutex
	n := 0
	r, err := shorturl.NewRecorder(shorturl.RecorderConfig{
		Publisher: pub, DeadLetters: dlq, PublishTimeout: 50 * time.Millisecond, DLQTimeout: 50 * time.Millisecond,
		EventIDs: func() (string, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", n), nil
		},
		Logger:      slog.New(slog.NewJSONHandler(logs, nil)),
		BufferBytes: bufferBytes, LogFactsPerSecond: perSecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (p *fakePublisher) setErr(err error) { p.mu.Lock(); p.err = err; p.mu.Unlock() }
func (q *fakeDLQ) setErr(err error)       { q.mu.Lock(); q.err = err; q.mu.Unlock() }

func (p *fakePublisher) keys() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := map[string]int{}
	for _, f := range p.facts {
		m[f.IdempotencyKey]++
	}
	return m
}

func recordN(rec *shorturl.Recorder, n int) {
	for i := range n {
		v := testVisit
		v.UserAgent = fmt.Sprintf("agent-%d", i)
		rec.Record(context.Background(), testURL, v)
	}
}

func TestBufferHoldsFactsUntilTheBusRecovers(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("bus: no space left on device")}, &fakeDLQ{err: errors.New("dlq: no space left on device")}, &syncLog{}
	rec := newBufferedRecorder(t, pub, dlq, logs, 64<<20, 0)
	recordN(rec, 10)
	c := rec.Counters()
	if c.Buffered.Load() != 10 || c.LostToLog.Load() != 0 || rec.Pending() != 10 {
		t.Fatalf("buffered %d, lost to log %d, pending %d; want 10, 0, 10", c.Buffered.Load(), c.LostToLog.Load(), rec.Pending())
	}
	if keys := logs.factKeys(t); len(keys) != 0 || !rec.Degraded() {
		t.Fatalf("logged facts %v, degraded %v; want none, true", keys, rec.Degraded())
	}
	if n, err := rec.Flush(context.Background()); n != 0 || err == nil {
		t.Fatalf("flush while both fail = %d, %v; want 0 and an error", n, err)
	}

	pub.setErr(nil)
	if n, err := rec.Flush(context.Background()); n != 10 || err != nil {
		t.Fatalf("flush = %d, %v; want 10, nil", n, err)
	}
	if n, _ := rec.Flush(context.Background()); n != 0 {
		t.Fatalf("second flush handed on %d facts again", n)
	}
	keys := pub.keys()
	if len(keys) != 10 {
		t.Fatalf("published %d distinct facts, want 10", len(keys))
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("%s published %d times", k, n)
		}
	}
	if c.Published.Load() != 10 || rec.Pending() != 0 || rec.Degraded() {
		t.Fatalf("published %d, pending %d, degraded %v; want 10, 0, false", c.Published.Load(), rec.Pending(), rec.Degraded())
	}
}

func TestBufferFlushFallsBackToDeadLetters(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("bus down")}, &fakeDLQ{err: errors.New("dlq down")}, &syncLog{}
	rec := newBufferedRecorder(t, pub, dlq, logs, 64<<20, 0)
	recordN(rec, 3)
	dlq.setErr(nil)
	if n, err := rec.Flush(context.Background()); n != 3 || err != nil {
		t.Fatalf("flush = %d, %v; want 3, nil", n, err)
	}
	if len(dlq.letters) != 3 || rec.Counters().DeadLettered.Load() != 3 {
		t.Fatalf("dead letters %d, counted %d; want 3", len(dlq.letters), rec.Counters().DeadLettered.Load())
	}
}

func TestBufferRunRetriesUntilTheBusRecovers(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("bus down")}, &fakeDLQ{err: errors.New("dlq down")}, &syncLog{}
	rec := newBufferedRecorder(t, pub, dlq, logs, 64<<20, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx); close(done) }()
	recordN(rec, 25)
	time.Sleep(300 * time.Millisecond) // a few failed retries
	pub.setErr(nil)
	for deadline := time.Now().Add(10 * time.Second); rec.Pending() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still %d pending", rec.Pending())
		}
	}
	cancel()
	<-done
	keys := pub.keys()
	if len(keys) != 25 {
		t.Fatalf("published %d distinct facts, want 25", len(keys))
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("%s published %d times", k, n)
		}
	}
	if got := logs.factKeys(t); len(got) != 0 {
		t.Fatalf("facts logged: %v", got)
	}
}

func TestBufferBoundExceededLogsTheExcessWhole(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("bus down")}, &fakeDLQ{err: errors.New("dlq down")}, &syncLog{}
	rec := newBufferedRecorder(t, pub, dlq, logs, 8<<10, 0) // a few facts
	recordN(rec, 40)
	c := rec.Counters()
	buffered, lost := c.Buffered.Load(), c.LostToLog.Load()
	if buffered == 0 || lost == 0 || buffered+lost != 40 || c.Dropped.Load() != 0 {
		t.Fatalf("buffered %d, lost to log %d, dropped %d; want both > 0, summing to 40, none dropped", buffered, lost, c.Dropped.Load())
	}
	logged := logs.factKeys(t)
	if int64(len(logged)) != lost {
		t.Fatalf("%d facts logged whole, %d counted", len(logged), lost)
	}
	// Stopping logs the buffered rest whole too: every fact is in the log once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec.Run(ctx)
	seen := map[string]bool{}
	for _, k := range logs.factKeys(t) {
		if seen[k] {
			t.Errorf("%s logged twice", k)
		}
		seen[k] = true
	}
	if len(seen) != 40 || c.LostToLog.Load() != 40 {
		t.Fatalf("after stop: %d distinct facts logged, %d counted; want 40", len(seen), c.LostToLog.Load())
	}
}

func TestLogLimitCountsDroppedFacts(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("bus down")}, &fakeDLQ{err: errors.New("dlq down")}, &syncLog{}
	rec := newBufferedRecorder(t, pub, dlq, logs, 0, 2)
	recordN(rec, 5)
	c := rec.Counters()
	if c.LostToLog.Load() != 2 || c.Dropped.Load() != 3 || len(logs.factKeys(t)) != 2 {
		t.Fatalf("lost to log %d, dropped %d, logged %d; want 2, 3, 2", c.LostToLog.Load(), c.Dropped.Load(), len(logs.factKeys(t)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec.Run(ctx) // the summary names the dropped facts as lost
	if !strings.Contains(logs.String(), `"dropped":3`) || !strings.Contains(logs.String(), "LOST") {
		t.Fatalf("no summary of the dropped facts in\n%s", logs)
	}
}

// fullLog is a log whose disk is full.
type fullLog struct{}

func (fullLog) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestFactsTheLogCouldNotTakeAreDropped: a fact "logged whole" to a log that could
// not write its line is no copy of it; it is counted dropped (the LOST alarm), not
// logged, both past the buffer and when the buffered rest is logged at a stop.
func TestFactsTheLogCouldNotTakeAreDropped(t *testing.T) {
	for _, bufferBytes := range []int{0, 64 << 20} {
		rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{
			Publisher: &fakePublisher{err: errors.New("bus down")}, DeadLetters: &fakeDLQ{err: errors.New("dlq: no space left on device")},
			PublishTimeout: 50 * time.Millisecond, DLQTimeout: 50 * time.Millisecond,
			EventIDs:    func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0001", nil },
			Logger:      slog.New(slog.NewJSONHandler(fullLog{}, nil)),
			BufferBytes: bufferBytes,
		})
		if err != nil {
			t.Fatal(err)
		}
		recordN(rec, 3)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec.Run(ctx) // a stop logs the buffered rest whole
		if c := rec.Counters(); c.LostToLog.Load() != 0 || c.Dropped.Load() != 3 {
			t.Errorf("buffer %d: lost to log %d, dropped %d; want 0 and 3", bufferBytes, c.LostToLog.Load(), c.Dropped.Load())
		}
	}
}

// countingPublisher fails every publish and counts them.
type countingPublisher struct{ n atomic.Int64 }

func (p *countingPublisher) Publish(context.Context, clickfact.Fact) error {
	p.n.Add(1)
	return errors.New("bus down")
}

// TestBufferRetriesBackOff: while the bus and the DLQ both fail, the buffer is tried
// again after 100 ms, doubling to 5 s, as docs/architecture.md says: 0.1, 0.3, 0.7, 1.5 and
// 3.1 s after the first try, so 5 retries in 4 s. The once-a-second summary must not
// bring retries forward (it made them one a second, 8 or more in 4 s).
func TestBufferRetriesBackOff(t *testing.T) {
	pub := &countingPublisher{}
	rec := newBufferedRecorder(t, pub, &fakeDLQ{err: errors.New("dlq: no space left on device")}, &syncLog{}, 1<<20, 0)
	recordN(rec, 1)
	first := pub.n.Load() // the redirect's own publish
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rec.Run(ctx); close(done) }()
	time.Sleep(4 * time.Second)
	cancel()
	<-done
	// Run's first flush, its retries, and the flush at the stop.
	if got := pub.n.Load() - first - 2; got < 3 || got > 5 {
		t.Errorf("%d retries in 4 s, want 5 (3 under a slow scheduler)", got)
	}
}
