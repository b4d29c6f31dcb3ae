package localbus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/eventid"
	"github.com/linoone/linoone/internal/core/graphson"
)

var fixedNow = time.Date(2026, 11, 29, 10, 11, 12, 345_000_000, time.UTC)

// facts builds n real click facts spread over a few short URLs, so that merged
// ingest documents share vertices.
func facts(t testing.TB, n int) []clickfact.Fact {
	t.Helper()
	ids := eventid.New()
	out := make([]clickfact.Fact, n)
	for i := range out {
		tok := fmt.Sprintf("Tok%07d", i%3)
		c := clickfact.Click{Token: tok, Path: "http://127.0.0.1:8080/" + tok, Target: "https://example.com/" + tok, IP: "127.0.0.1", UserAgent: "test/1.0", At: fixedNow}
		id, err := ids.Next()
		if err != nil {
			t.Fatal(err)
		}
		f, err := clickfact.Build(c, id)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = f
	}
	return out
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func openBus(t testing.TB, dir string, opts BusOptions) *Bus {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	b, err := OpenBus(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// closedJournal publishes fs through a new bus in a temporary directory and closes
// it, and returns the directory and its first segment.
func closedJournal(t testing.TB, fs []clickfact.Fact) (dir, seg string) {
	t.Helper()
	dir = t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	publishAll(t, bus, fs)
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, segmentPath(filepath.Join(dir, journalDir), 1)
}

// drainFresh drains the journal in dir with a new consumer into a new fake Persist,
// and returns that.
func drainFresh(t testing.TB, dir string) *fakeIngester {
	t.Helper()
	ing := &fakeIngester{}
	if err := newConsumer(t, dir, ing, ConsumerOptions{}).Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	return ing
}

func newConsumer(t testing.TB, dir string, ing Ingester, opts ConsumerOptions) *Consumer {
	t.Helper()
	opts.Ingester = ing
	if opts.FactsPath == "" {
		opts.FactsPath = filepath.Join(dir, "facts.jsonl")
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff = time.Millisecond
		opts.MaxBackoff = 10 * time.Millisecond
	}
	c, err := NewConsumer(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func publishAll(t testing.TB, b *Bus, fs []clickfact.Fact) {
	t.Helper()
	for _, f := range fs {
		if err := b.Publish(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
}

// errPersistRejected is the fake Persist's answer to a document it refuses, as
// *persist.Client answers a 400 or 422 with persist.ErrInvalidDocument.
var errPersistRejected = errors.New("fake persist rejected the document")

// isRejected is ConsumerOptions.IsRejected for the fake, as serve wires
// errors.Is(err, persist.ErrInvalidDocument).
func isRejected(err error) bool { return errors.Is(err, errPersistRejected) }

// fakeIngester stands in for Persist: it decodes each ingest body strictly into a
// graphson.Document and verifies the identities, refusing (errPersistRejected) what
// does not pass or holds an edge in refuse, and records the documents it accepted.
// It fails transiently, as an unreachable Persist does, while failures > 0 or when
// failOn says so.
type fakeIngester struct {
	mu       sync.Mutex
	docs     []graphson.Document
	calls    int
	rejected int
	failures int
	largest  int                 // the largest body received
	refuse   map[string]bool     // edge ids refused although valid, as a 422 would
	failOn   func(call int) bool // optional: whether call (1-based) fails transiently
	onFail   func()              // called on each failure, before returning
}

func (f *fakeIngester) IngestRaw(_ context.Context, body []byte) error {
	var doc graphson.Document
	err := json.Unmarshal(body, &doc)
	if err == nil {
		err = doc.Verify()
	}
	for _, e := range doc.Edges {
		if err == nil && f.refuse[e.ID] {
			err = fmt.Errorf("HTTP 422: edge %s refused", e.ID)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.largest = max(f.largest, len(body))
	if f.failures > 0 || (f.failOn != nil && f.failOn(f.calls)) {
		f.failures = max(f.failures-1, 0)
		if f.onFail != nil {
			f.onFail()
		}
		return errors.New("persist unavailable")
	}
	if err != nil {
		f.rejected++
		return fmt.Errorf("ingest: HTTP 400: %v: %w", err, errPersistRejected)
	}
	f.docs = append(f.docs, doc)
	return nil
}

// edges counts ingested edges by id.
func (f *fakeIngester) edges() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[string]int{}
	for _, d := range f.docs {
		for _, e := range d.Edges {
			m[e.ID]++
		}
	}
	return m
}

func (f *fakeIngester) numDocs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.docs)
}

// factEdgeID is the id of the click edge inside a fact.
func factEdgeID(t testing.TB, f clickfact.Fact) string {
	t.Helper()
	var d struct {
		GraphSON graphson.Document `json:"graphson"`
	}
	if err := json.Unmarshal(f.Detail, &d); err != nil {
		t.Fatal(err)
	}
	return d.GraphSON.Edges[0].ID
}

type factsLine struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// readFacts parses facts.jsonl strictly: one event per line.
func readFacts(t testing.TB, path string) []factsLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []factsLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var l factsLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("facts line %d: %v\n%s", len(out)+1, err, sc.Bytes())
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// keyCounts counts facts lines by idempotency key.
func keyCounts(t testing.TB, lines []factsLine) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, l := range lines {
		f, err := clickfact.Parse(l.Detail)
		if err != nil {
			t.Fatal(err)
		}
		m[f.IdempotencyKey]++
	}
	return m
}

func readOffset(t testing.TB, dir string) offsetState {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, consumerOffset))
	if errors.Is(err, os.ErrNotExist) {
		return offsetState{}
	}
	if err != nil {
		t.Fatal(err)
	}
	var st offsetState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// saveOffsetPastTheNewestSegment saves in dir a consumer offset in segment 9, past
// the newest segment of a journal made for a test: an offset saved for another
// journal.
func saveOffsetPastTheNewestSegment(t testing.TB, dir string) {
	t.Helper()
	stale, err := json.Marshal(offsetState{Segment: 9, Position: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, consumerOffset), stale, 0o600); err != nil {
		t.Fatal(err)
	}
}

func segmentFiles(t testing.TB, dir string) []uint64 {
	t.Helper()
	segs, err := listSegments(filepath.Join(dir, journalDir))
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// segmentEnd is where the frames of the segment at path end: its published end
// (version 2) or its size (version 1).
func segmentEnd(t testing.TB, path string) int64 {
	t.Helper()
	_, end := boundsAt(t, path)
	return end
}

// boundsAt is segmentBoundsAt, failing the test on an error.
func boundsAt(t testing.TB, path string) (start, end int64) {
	t.Helper()
	start, end, err := segmentBoundsAt(path, crcTable())
	if err != nil {
		t.Fatal(err)
	}
	return start, end
}

// appendBytes adds b to the segment at path as a writer adds a batch: at the end of
// its frames, then (version 2) publishing the new end.
func appendBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	writeAtEnd(t, path, b, true)
}

// writePastEnd writes b where the segment's next batch goes without publishing it:
// what a writer that died mid-batch leaves. In a version 1 segment that is a torn
// tail.
func writePastEnd(t testing.TB, path string, b []byte) {
	t.Helper()
	writeAtEnd(t, path, b, false)
}

func writeAtEnd(t testing.TB, path string, b []byte, publish bool) {
	t.Helper()
	start, end := boundsAt(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, end); err != nil {
		t.Fatal(err)
	}
	if publish && start > 0 {
		if _, err := f.WriteAt(appendSegmentHeader(nil, end+int64(len(b)), crcTable()), 0); err != nil {
			t.Fatal(err)
		}
	}
}

func ctxTimeout(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// journalFacts writes the facts' events straight into segment 1 of dir's journal,
// framed as Publish frames them, without a bus and its fsync per batch; it returns
// the bytes written.
func journalFacts(t testing.TB, dir string, fs []clickfact.Fact) int64 {
	t.Helper()
	return journalSegments(t, dir, fs, len(fs))
}

// journalSegments is journalFacts with per events a segment, from segment 1 on.
func journalSegments(t testing.TB, dir string, fs []clickfact.Fact, per int) int64 {
	t.Helper()
	tab := crcTable()
	e := &encoder{}
	if err := os.MkdirAll(filepath.Join(dir, journalDir), 0o700); err != nil {
		t.Fatal(err)
	}
	var total int64
	for seg := uint64(1); len(fs) > 0; seg++ {
		var out []byte
		for _, f := range fs[:min(per, len(fs))] {
			fr, err := e.encode(f, fixedNow, defaultRegion, tab)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fr...)
		}
		fs = fs[min(per, len(fs)):]
		if err := os.WriteFile(segmentPath(filepath.Join(dir, journalDir), seg), out, 0o600); err != nil {
			t.Fatal(err)
		}
		total += int64(len(out))
	}
	return total
}

// syncWatch sees every sync of the package (syncFile) while a test runs: the
// synced files' names in order, and a hold that keeps a sync from starting.
type syncWatch struct {
	mu    sync.Mutex
	names []string
	hold  func(name string) <-chan struct{} // a channel to wait on before syncing name; nil: none
}

// watchSyncs puts a syncWatch in front of syncFile until the test ends. Set it up
// before the test opens a bus or consumer, whose goroutines call syncFile.
func watchSyncs(t testing.TB) *syncWatch {
	w := &syncWatch{}
	orig := syncFile
	syncFile = func(f *os.File, dataOnly bool) error {
		w.mu.Lock()
		w.names = append(w.names, f.Name())
		hold := w.hold
		w.mu.Unlock()
		if hold != nil {
			if ch := hold(f.Name()); ch != nil {
				<-ch
			}
		}
		return orig(f, dataOnly)
	}
	t.Cleanup(func() { syncFile = orig })
	return w
}

// since returns the names synced since the last call, and forgets them.
func (w *syncWatch) since() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.names
	w.names = nil
	return n
}

func (w *syncWatch) holdWith(hold func(name string) <-chan struct{}) {
	w.mu.Lock()
	w.hold = hold
	w.mu.Unlock()
}
