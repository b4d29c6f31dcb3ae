package localbus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/testutil/schematest"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

// tamperEdgeID returns f with its edge id changed: still a well-shaped click fact,
// but one whose edge id is not the edge's identity, which Persist refuses.
func tamperEdgeID(t testing.TB, f clickfact.Fact) clickfact.Fact {
	t.Helper()
	id := factEdgeID(t, f)
	bad := strings.Repeat("0", len(id))
	if bytes.Count(f.Detail, []byte(id)) != 1 || id == bad {
		t.Fatalf("edge id %s is not in the detail once", id)
	}
	f.Detail = bytes.Replace(f.Detail, []byte(id), []byte(bad), 1)
	return f
}

// logBuffer collects a JSON slog handler's records.
type logBuffer struct{ syncbuf.Buffer }

func (l *logBuffer) records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRejectedEventIsSkippedAndTheRestDelivered(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 5)
	fs[2] = tamperEdgeID(t, fs[2])
	publishAll(t, bus, fs)

	ing := &fakeIngester{}
	logs := &logBuffer{}
	c := newConsumer(t, dir, ing, ConsumerOptions{IsRejected: isRejected, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}

	// The merged document is refused; then each event alone: four accepted, one not.
	if ing.calls != 6 || ing.rejected != 2 || ing.numDocs() != 4 {
		t.Errorf("ingest calls %d, rejected %d, accepted %d; want 6, 2 and 4", ing.calls, ing.rejected, ing.numDocs())
	}
	wantEdges := map[string]int{}
	for i, f := range fs {
		if i != 2 {
			wantEdges[factEdgeID(t, f)] = 1
		}
	}
	if diff := cmp.Diff(wantEdges, ing.edges()); diff != "" {
		t.Errorf("ingested edges (-want +got):\n%s", diff)
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	want := map[string]int{}
	for i, f := range fs {
		if i != 2 {
			want[f.IdempotencyKey] = 1
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts.jsonl keys (-want +got):\n%s", diff)
	}
	if s := c.Stats(); s.Delivered != 4 || s.Invalid != 1 || s.Refused != 1 || s.Batches != 1 || s.Retries != 0 {
		t.Errorf("consumer stats = %+v", s)
	}
	seg := segmentFiles(t, dir)
	if st := readOffset(t, dir); st.Position != segmentEnd(t, segmentPath(filepath.Join(dir, journalDir), seg[len(seg)-1])) {
		t.Errorf("offset %+v is not at the end of the journal: the bad event blocks the queue", st)
	}

	// The rejected fact is logged at ERROR, for an operator to act on: Persist's
	// answer, and where the fact is kept and how to send it again.
	var logged []string
	for _, r := range logs.records(t) {
		if r["level"] == "ERROR" {
			key, _ := r["idempotency_key"].(string)
			logged = append(logged, key)
			if key != fs[2].IdempotencyKey || !strings.Contains(r["err"].(string), "HTTP 400") ||
				r["refused_path"] != c.RefusedPath() || r["redrive"] != "linoone recover --from-log "+c.RefusedPath() {
				t.Errorf("error log %v does not name the refused fact, Persist's answer, its file and the redrive", r)
			}
		}
	}
	if len(logged) != 1 {
		t.Errorf("%d facts logged at ERROR, want 1", len(logged))
	}

	// The next batch is one merged document again.
	calls := ing.calls
	publishAll(t, bus, facts(t, 3))
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if ing.calls != calls+1 {
		t.Errorf("next batch took %d ingest calls, want 1", ing.calls-calls)
	}
}

// A transient failure while the events of a refused batch go one by one is retried
// without moving the offset; what Persist acknowledged is not sent again, and the
// refused event is counted once.
func TestTransientFailureWhileIngestingOneByOne(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 5)
	fs[1] = tamperEdgeID(t, fs[1])
	publishAll(t, bus, fs)

	var offsets []offsetState
	// Calls: 1 merged (refused), 2 fs[0], 3 fs[1] (refused), 4 fs[2] fails, then the
	// retry: 5 merged of fs[2:].
	ing := &fakeIngester{failOn: func(call int) bool { return call == 4 }}
	ing.onFail = func() { offsets = append(offsets, readOffset(t, dir)) }
	c := newConsumer(t, dir, ing, ConsumerOptions{IsRejected: isRejected})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]offsetState{{}}, offsets); diff != "" {
		t.Errorf("offsets during the failure (-want +got):\n%s", diff)
	}
	if ing.calls != 5 || ing.rejected != 2 {
		t.Errorf("ingest calls %d, rejected %d; want 5 and 2", ing.calls, ing.rejected)
	}
	if n := len(ing.docs[len(ing.docs)-1].Edges); n != 3 {
		t.Errorf("the retry ingested %d edges, want the 3 events still pending", n)
	}
	edges := ing.edges()
	for i, f := range fs {
		if want := map[bool]int{true: 0, false: 1}[i == 1]; edges[factEdgeID(t, f)] != want {
			t.Errorf("fact %d ingested %d times, want %d", i, edges[factEdgeID(t, f)], want)
		}
	}
	got := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	if len(got) != 4 || got[fs[1].IdempotencyKey] != 0 {
		t.Errorf("facts.jsonl keys = %v, want the 4 accepted facts", got)
	}
	if s := c.Stats(); s.Delivered != 4 || s.Invalid != 1 || s.Refused != 1 || s.Retries != 1 || s.Batches != 1 {
		t.Errorf("consumer stats = %+v", s)
	}
	if lines := refusedLines(t, c.RefusedPath()); len(lines) != 1 {
		t.Errorf("refused.jsonl holds %d lines, want the refused fact once", len(lines))
	}
}

// refusedLines parses refused.jsonl strictly, one line a fact.
func refusedLines(t testing.TB, path string) []refusedLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []refusedLine
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		var r refusedLine
		if err := dec.Decode(&r); err != nil || l[len(l)-1] != '\n' {
			t.Fatalf("refused.jsonl line %d: %v\n%s", len(out)+1, err, l)
		}
		out = append(out, r)
	}
	return out
}

// TestRefusedFactIsKeptWhole: a click fact Persist refuses (422), valid as it is, was
// logged and skipped, and so lost: recover could not read it from the log, and
// nothing else held it. It is now appended whole to refused.jsonl, in the shape
// recover reads, and synced before the offset moves past it, while the rest of its
// batch is delivered; a commit retried after it was kept keeps it once.
func TestRefusedFactIsKeptWhole(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 5)
	publishAll(t, bus, fs)

	// Syncs in order, and the facts log's first sync fails: the commit is retried
	// after refused.jsonl was written.
	var mu sync.Mutex
	var synced []string
	failed := false
	orig := syncFile
	syncFile = func(f *os.File, dataOnly bool) error {
		mu.Lock()
		defer mu.Unlock()
		name := filepath.Base(f.Name())
		if strings.HasPrefix(name, ".tmp-"+consumerOffset) {
			name = consumerOffset
		}
		synced = append(synced, name)
		if name == "facts.jsonl" && !failed {
			failed = true
			return errors.New("disk full")
		}
		return orig(f, dataOnly)
	}
	t.Cleanup(func() { syncFile = orig })

	ing := &fakeIngester{refuse: map[string]bool{factEdgeID(t, fs[2]): true}}
	var logs syncbuf.Buffer
	c := newConsumer(t, dir, ing, ConsumerOptions{IsRejected: isRejected, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	mu.Lock()
	synced = nil // the offset the new consumer saved
	mu.Unlock()
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	syncFile = orig

	if s := c.Stats(); s.Delivered != 4 || s.Invalid != 1 || s.Refused != 1 || s.Retries != 1 {
		t.Errorf("consumer stats = %+v", s)
	}
	want := map[string]int{}
	for i, f := range fs {
		if i != 2 {
			want[f.IdempotencyKey] = 1
		}
	}
	if diff := cmp.Diff(want, keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))); diff != "" {
		t.Errorf("facts.jsonl keys (-want +got):\n%s", diff)
	}
	seg := segmentFiles(t, dir)
	if st := readOffset(t, dir); st.Position != segmentEnd(t, segmentPath(filepath.Join(dir, journalDir), seg[len(seg)-1])) {
		t.Errorf("offset %+v is not at the end of the journal", st)
	}

	if c.RefusedPath() != filepath.Join(dir, "refused.jsonl") {
		t.Errorf("refused path %s, want refused.jsonl in the bus directory", c.RefusedPath())
	}
	lines := refusedLines(t, c.RefusedPath())
	if len(lines) != 1 {
		t.Fatalf("refused.jsonl holds %d lines, want 1", len(lines))
	}
	l := lines[0]
	if !bytes.Equal(l.GraphFact, fs[2].Detail) || l.Level != "ERROR" || l.IdempotencyKey != fs[2].IdempotencyKey || !strings.Contains(l.Reason, "HTTP 422") {
		t.Errorf("refused line %+v does not hold the fact as built, at ERROR, with its key and Persist's answer", l)
	}
	schematest.MustValidate(t, schematest.GraphFact, l.GraphFact)
	if f, err := clickfact.Parse(l.GraphFact); err != nil || f.IdempotencyKey != fs[2].IdempotencyKey {
		t.Errorf("refused fact does not parse back: %v", err)
	}
	// The log line names the click's token, for "what happened to token X".
	var refusedLog []string
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Token string `json:"short_url_token"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err == nil && rec.Msg == "persist refused a click fact; kept whole, not delivered" {
			refusedLog = append(refusedLog, rec.Token)
		}
	}
	if !slices.Equal(refusedLog, []string{fs[2].Token}) {
		t.Errorf("refusal log lines name tokens %q, want [%s]\n%s", refusedLog, fs[2].Token, logs.String())
	}

	// refused.jsonl is synced before the offset that passes the fact is.
	mu.Lock()
	defer mu.Unlock()
	kept, moved := slices.Index(synced, "refused.jsonl"), slices.Index(synced, consumerOffset)
	if kept < 0 || moved < kept {
		t.Errorf("syncs %v: want refused.jsonl synced before the offset", synced)
	}
}

// Without IsRejected no failure is a rejection: a refused batch is retried, never
// skipped.
func TestRejectionIsRetriedWithoutIsRejected(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 3)
	fs[0] = tamperEdgeID(t, fs[0])
	publishAll(t, bus, fs)
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	ctx := ctxTimeout(t)
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := c.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("drain = %v, want DeadlineExceeded", err)
	}
	if st := readOffset(t, dir); st != (offsetState{}) {
		t.Errorf("offset = %+v, want none saved", st)
	}
	if s := c.Stats(); s.Invalid != 0 || s.Delivered != 0 || s.Retries == 0 {
		t.Errorf("consumer stats = %+v", s)
	}
	if ing.numDocs() != 0 || ing.rejected != ing.calls {
		t.Errorf("accepted %d documents, %d of %d calls refused; want all refused", ing.numDocs(), ing.rejected, ing.calls)
	}
}

// TestFailingWhileDeliveryFails: Failing (serve's "click-delivery" on /healthz) is
// true while Persist keeps failing a batch, which is retried with its events still
// in the journal, and false again once the batch is committed.
func TestFailingWhileDeliveryFails(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	publishAll(t, bus, facts(t, 3))
	ing := &fakeIngester{failures: math.MaxInt}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if c.Failing() {
		t.Fatal("Failing before any attempt")
	}
	done := make(chan error, 1)
	go func() { done <- c.Drain(ctxTimeout(t)) }()
	waitFor(t, func() bool { return c.Failing() && c.Stats().Retries >= 2 })
	if s := c.Stats(); s.Delivered != 0 {
		t.Errorf("delivered %d while Persist fails", s.Delivered)
	}
	ing.mu.Lock()
	ing.failures = 0
	ing.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatalf("drain = %v", err)
	}
	if s := c.Stats(); s.Delivered != 3 || c.Failing() {
		t.Errorf("after the batch was delivered: %+v, Failing %v", s, c.Failing())
	}
}

// TestKeptLinesFollowATornOne: a line of refused.jsonl that a crash cut short (its
// fact is kept again, the offset not having passed it) must not take the next line
// into it, where recover would read neither.
func TestKeptLinesFollowATornOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refused.jsonl")
	for _, tt := range []struct{ before, want string }{
		{"", "{\"a\":1}\n"},
		{"{\"a\":1}\n", "{\"a\":1}\n{\"a\":1}\n"},
		{"{\"a\":1}\n{\"level\":\"ERR", "{\"a\":1}\n{\"level\":\"ERR\n{\"a\":1}\n"},
	} {
		if err := os.WriteFile(path, []byte(tt.before), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := appendKept(path, []byte("{\"a\":1}\n")); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != tt.want {
			t.Errorf("after %q: %q, %v; want %q", tt.before, b, err, tt.want)
		}
	}
}

// mutateDetail rewrites a fact's detail through a map of its members.
func mutateDetail(t testing.TB, detail []byte, edit func(m map[string]json.RawMessage, vertex, edge string)) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(detail, &m); err != nil {
		t.Fatal(err)
	}
	var g struct{ Vertices, Edges []json.RawMessage }
	if err := json.Unmarshal(m["graphson"], &g); err != nil {
		t.Fatal(err)
	}
	edit(m, string(g.Vertices[0]), string(g.Edges[0]))
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// event is a GraphFactProduced event as Publish journals it, with detail as given.
func event(id, detailType, source, detail string) string {
	return `{"version":"0","id":"` + id + `","detail-type":"` + detailType + `","source":"` + source +
		`","account":"000000000000","time":"2026-11-29T10:11:12Z","region":"us-east-1","resources":[],"detail":` + detail + `}`
}

// The consumer's one structural decode: each record that is not a click event is
// skipped and counted, between two good ones in the same batch, and never reaches
// Persist or the facts log.
func TestStructuralChecks(t *testing.T) {
	const id = "8c6f1a9e-3b2d-4f5a-9e8d-7c6b5a4f3e2d"
	fs := facts(t, 3)
	good := string(fs[2].Detail)
	set := func(key, value string) func(map[string]json.RawMessage, string, string) {
		return func(m map[string]json.RawMessage, _, _ string) { m[key] = json.RawMessage(value) }
	}
	graph := func(format string) func(map[string]json.RawMessage, string, string) {
		return func(m map[string]json.RawMessage, v, e string) {
			m["graphson"] = json.RawMessage(strings.NewReplacer("V", v, "E", e).Replace(format))
		}
	}
	tests := []struct {
		name    string
		payload string
		valid   bool
	}{
		{"the good event", event(id, clickfact.DetailType, clickfact.Source, good), true},
		{"members reordered", event(id, clickfact.DetailType, clickfact.Source,
			mutateDetail(t, fs[2].Detail, func(map[string]json.RawMessage, string, string) {})), true},
		{"not json", event(id, clickfact.DetailType, clickfact.Source, good) + "x", false},
		{"no source", strings.Replace(event(id, clickfact.DetailType, clickfact.Source, good), `"source":"shorturl",`, "", 1), false},
		{"other source", event(id, clickfact.DetailType, "other", good), false},
		{"other detail-type", event(id, "GraphFactDeleted", clickfact.Source, good), false},
		{"no id", event("", clickfact.DetailType, clickfact.Source, good), false},
		{"no detail", strings.Replace(event(id, clickfact.DetailType, clickfact.Source, "{}"), `,"detail":{}`, "", 1), false},
		{"schema version", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, set("schema_version", `"2.0"`))), false},
		{"graphson format", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, set("graphson_format", `"graphson-v2"`))), false},
		{"fact type", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, set("fact_type", `"short_url.created"`))), false},
		{"idempotency key", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, set("idempotency_key", `"shorturl:01KABCDEFGHJKMNPQRSTVWXYZ0"`))), false},
		{"no idempotency key", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, func(m map[string]json.RawMessage, _, _ string) { delete(m, "idempotency_key") })), false},
		{"two vertices", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, graph(`{"vertices":[V,V],"edges":[E]}`))), false},
		{"no edge", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, graph(`{"vertices":[V],"edges":[]}`))), false},
		{"null vertices", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, graph(`{"vertices":null,"edges":[E]}`))), false},
		{"vertex null", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, graph(`{"vertices":[null],"edges":[E]}`))), false},
		{"edge not an object", event(id, clickfact.DetailType, clickfact.Source, mutateDetail(t, fs[2].Detail, graph(`{"vertices":[V],"edges":["x"]}`))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, seg := closedJournal(t, fs[:1])
			appendBytes(t, seg, frame(tt.payload))
			next, err := (&encoder{}).encode(fs[1], fixedNow, defaultRegion, crcTable())
			if err != nil {
				t.Fatal(err)
			}
			appendBytes(t, seg, next) // in the same segment, so that one batch holds all three

			ing := &fakeIngester{}
			c := newConsumer(t, dir, ing, ConsumerOptions{IsRejected: isRejected})
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			want, invalid := 2, int64(1)
			if tt.valid {
				want, invalid = 3, 0
			}
			if ing.calls != 1 || ing.rejected != 0 || len(ing.edges()) != want {
				t.Errorf("ingest calls %d, rejected %d, edges %d; want 1 merged document of %d edges",
					ing.calls, ing.rejected, len(ing.edges()), want)
			}
			if s := c.Stats(); s.Invalid != invalid || s.Delivered != int64(want) {
				t.Errorf("consumer stats = %+v, want %d invalid", s, invalid)
			}
			if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != want {
				t.Errorf("facts.jsonl has %d lines, want %d", n, want)
			}
		})
	}
}

// Publish checks only that a detail is delimited as an object; one that is not JSON
// all the same is journaled and then skipped by the consumer, and the facts log stays
// one JSON event per line.
func TestDetailThatIsNotJSONIsSkippedByTheConsumer(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	fs := facts(t, 2)
	publishAll(t, bus, fs[:1])
	if err := bus.Publish(context.Background(), clickfact.Fact{IdempotencyKey: "x", Detail: []byte(`{"a":}`)}); err != nil {
		t.Fatal(err)
	}
	publishAll(t, bus, fs[1:])
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{IsRejected: isRejected})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != 2 {
		t.Errorf("facts.jsonl has %d lines, want 2", n)
	}
	if s := c.Stats(); s.Invalid != 1 || s.Delivered != 2 {
		t.Errorf("consumer stats = %+v", s)
	}
}

// A fact written over several lines (a hand-edited dead letter) is compacted by
// Publish and delivered on one line.
func TestMultiLineDetailIsDeliveredOnOneLine(t *testing.T) {
	dir := t.TempDir()
	bus := openBus(t, dir, BusOptions{})
	f := facts(t, 1)[0]
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, f.Detail, "", "  "); err != nil {
		t.Fatal(err)
	}
	f.Detail = pretty.Bytes()
	publishAll(t, bus, []clickfact.Fact{f})
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{IsRejected: isRejected})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	lines := readFacts(t, filepath.Join(dir, "facts.jsonl"))
	if len(lines) != 1 || len(ing.edges()) != 1 {
		t.Fatalf("facts.jsonl has %d lines, %d edges ingested; want 1 and 1", len(lines), len(ing.edges()))
	}
	if keyCounts(t, lines)[f.IdempotencyKey] != 1 {
		t.Errorf("facts.jsonl does not hold %s", f.IdempotencyKey)
	}
}

// A batch is cut at MaxBatch events or MaxBatchBytes, never at the size of one read of
// the journal: larger transactions cost Persist less per event.
func TestBatchIsNotCutAtOneRead(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 1200)
	if n := journalFacts(t, dir, fs); n < 2*readChunk {
		t.Fatalf("journaled %d bytes, want more than two reads", n)
	}
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if ing.calls != 1 || len(ing.edges()) != len(fs) {
		t.Errorf("%d ingest calls of %d edges, want 1 of %d", ing.calls, len(ing.edges()), len(fs))
	}
	if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != len(fs) {
		t.Errorf("facts.jsonl has %d lines, want %d", n, len(fs))
	}
}

// overlapIngester is a fakeIngester whose first call waits (at most a second) for a
// second one to start, and which records how many calls ran at once.
type overlapIngester struct {
	fakeIngester
	mu      sync.Mutex
	running int
	most    int
	second  chan struct{}
	once    sync.Once
}

func (o *overlapIngester) IngestRaw(ctx context.Context, body []byte) error {
	o.mu.Lock()
	o.running++
	o.most = max(o.most, o.running)
	first := o.most == 1 && o.second != nil
	if o.running == 2 {
		o.once.Do(func() { close(o.second) })
	}
	o.mu.Unlock()
	if first {
		select {
		case <-o.second:
		case <-time.After(time.Second):
		}
	}
	defer func() { o.mu.Lock(); o.running--; o.mu.Unlock() }()
	return o.fakeIngester.IngestRaw(ctx, body)
}

// factKeys lists the idempotency keys of facts lines in order.
func factKeys(t testing.TB, lines []factsLine) []string {
	t.Helper()
	keys := make([]string, len(lines))
	for i, l := range lines {
		f, err := clickfact.Parse(l.Detail)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = f.IdempotencyKey
	}
	return keys
}

func keysOf(fs []clickfact.Fact) []string {
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.IdempotencyKey
	}
	return keys
}

// Drain, and Run while no redirects are served, keep the next batches in Persist while
// one is committed; the facts log still holds the events in journal order.
func TestConsumerKeepsBatchesInFlight(t *testing.T) {
	for _, name := range []string{"Drain", "Run"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fs := facts(t, 40)
			journalFacts(t, dir, fs)
			ing := &overlapIngester{second: make(chan struct{})}
			c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 5, PollInterval: 5 * time.Millisecond})
			if name == "Drain" {
				if err := c.Drain(ctxTimeout(t)); err != nil {
					t.Fatal(err)
				}
			} else {
				ctx, cancel := context.WithCancel(ctxTimeout(t))
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				for c.Stats().Delivered < int64(len(fs)) && ctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			if ing.most < 2 || ing.most > defaultPipeline {
				t.Errorf("at most %d ingests at once, want 2 to %d", ing.most, defaultPipeline)
			}
			if diff := cmp.Diff(keysOf(fs), factKeys(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))); diff != "" {
				t.Errorf("facts.jsonl keys (-want +got):\n%s", diff)
			}
			if s := c.Stats(); s.Batches != 8 || s.Delivered != 40 {
				t.Errorf("consumer stats = %+v, want 8 batches of 5", s)
			}
		})
	}
}

// Failed ingests, of the batch being committed or of the one behind it, are retried
// and the facts log holds each event once, in journal order.
func TestPipelineKeepsOrderUnderIngestFailures(t *testing.T) {
	for _, every := range []int{2, 3, 5} {
		t.Run(fmt.Sprintf("every_%d", every), func(t *testing.T) {
			dir := t.TempDir()
			fs := facts(t, 60)
			journalFacts(t, dir, fs)
			ing := &fakeIngester{failOn: func(call int) bool { return call%every == 0 }}
			c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 4})
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(keysOf(fs), factKeys(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))); diff != "" {
				t.Errorf("facts.jsonl keys (-want +got):\n%s", diff)
			}
			if len(ing.edges()) != len(fs) {
				t.Errorf("%d distinct edges ingested, want %d", len(ing.edges()), len(fs))
			}
			if s := c.Stats(); s.Retries == 0 || s.Delivered != 60 || s.Batches != 15 {
				t.Errorf("consumer stats = %+v", s)
			}
		})
	}
}

// A crash at any stage of a batch's commit, while the next batches are in Persist
// (in the same segment or the next ones), loses nothing and duplicates nothing in the
// facts log: a consumer started on what the crash left delivers the rest, and the
// log holds each event once, in order.
func TestPipelineCrashAtEachStage(t *testing.T) {
	fs := facts(t, 30)
	for _, st := range []struct {
		name  string
		stage commitStage
		torn  bool // the crash cut the facts append short
	}{
		{"ingested", stageIngested, false},
		{"facts", stageFacts, false},
		{"facts_torn", stageFacts, true},
		{"offset", stageOffset, false},
	} {
		for _, at := range []int{1, 2, 3, 6} {
			t.Run(fmt.Sprintf("%s/batch_%d", st.name, at), func(t *testing.T) {
				dir, crashed := t.TempDir(), t.TempDir()
				journalSegments(t, dir, fs, 8) // batches of 5, 3; 5, 3; …
				c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5})
				seen := 0
				c.atStage = func(s commitStage) {
					if s != st.stage {
						return
					}
					if seen++; seen == at {
						snapshot(t, dir, crashed, st.torn)
					}
				}
				if err := c.Drain(ctxTimeout(t)); err != nil {
					t.Fatal(err)
				}
				ing := &fakeIngester{}
				c2 := newConsumer(t, crashed, ing, ConsumerOptions{MaxBatch: 5})
				if err := c2.Drain(ctxTimeout(t)); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(keysOf(fs), factKeys(t, readFacts(t, filepath.Join(crashed, "facts.jsonl")))); diff != "" {
					t.Errorf("facts.jsonl keys after the restart (-want +got):\n%s", diff)
				}
				// The restart ingests again from the batch being committed on: at
				// least what the facts log lacked.
				if want := len(fs) - 5*at; len(ing.edges()) < want {
					t.Errorf("restart ingested %d events, want at least %d", len(ing.edges()), want)
				}
				if segs := segmentFiles(t, crashed); len(segs) != 1 || segs[0] != 4 {
					t.Errorf("segments left after the restart: %v, want the last one", segs)
				}
			})
		}
	}
}

// TestCommitOrderOnDisk checks the commit protocol on disk at each of its stages,
// not only what a restart recovers: a batch's facts are appended and synced before
// the offset moves past it, so that a crash between the two leaves the batch to be
// delivered again rather than skipped. TestPipelineCrashAtEachStage takes its
// snapshots where the code under test calls its stage hooks, so a commit that moved
// the offset first would move its hooks with it; this test would see the offset
// already moved at stageFacts.
func TestCommitOrderOnDisk(t *testing.T) {
	dir := t.TempDir()
	journalSegments(t, dir, facts(t, 30), 8)
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5})
	factsSize := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "facts.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var committed offsetState // the offset after the last batch's commit
	var appended int64        // facts.jsonl's size then
	stages := 0
	c.atStage = func(s commitStage) {
		stages++
		off, size := readOffset(t, dir), factsSize()
		switch s {
		case stageIngested:
			if off != committed || size != appended {
				t.Errorf("ingested: offset %+v, facts %d bytes; want the last commit's %+v, %d", off, size, committed, appended)
			}
		case stageFacts:
			if off != committed || size <= appended {
				t.Errorf("facts synced: offset %+v, facts %d bytes; want the offset unmoved (%+v) and facts past %d", off, size, committed, appended)
			}
			appended = size
		case stageOffset:
			if off == committed || off.FactsSize != appended || size != appended {
				t.Errorf("offset moved: %+v, facts %d bytes; want a new offset that records %d bytes of facts", off, size, appended)
			}
			committed = off
		}
	}
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if stages != 3*8 { // 30 facts in segments of 8: batches of 5, 3, 5, 3, 5, 3, 5, 1
		t.Fatalf("%d stages seen, want 24", stages)
	}
}

// TestCommitSyncsInOrder: each batch's facts are synced, then the offset's
// temporary file, then, after the rename, the directory that holds it; so that a
// machine crash can lose neither a batch's facts behind its offset nor the offset's
// rename. The syncs themselves are watched: the consumer's own counters cannot tell
// a sync skipped.
func TestCommitSyncsInOrder(t *testing.T) {
	w := watchSyncs(t)
	dir := t.TempDir()
	journalSegments(t, dir, facts(t, 30), 8)
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{MaxBatch: 5})
	w.since()
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range w.since() {
		switch {
		case name == filepath.Join(dir, "facts.jsonl"):
			got = append(got, "facts")
		case strings.HasPrefix(filepath.Base(name), ".tmp-"+consumerOffset):
			got = append(got, "offset")
		case name == dir:
			got = append(got, "dir")
		}
	}
	var want []string
	for range 8 { // batches of 5, 3, 5, 3, 5, 3, 5, 1
		want = append(want, "facts", "offset", "dir")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("syncs of the commits (-want +got):\n%s", diff)
	}
}

// TestFactsLogRotation: facts.jsonl grows without bound and is rotated from outside.
// Moved aside, it went on taking every batch under its new name for as long as the
// consumer ran (it keeps the file open); the consumer now starts a new facts.jsonl
// at the next batch. Moved aside or cut (copy-truncate), the file's new size is
// saved with the offset before a batch is appended to it, so that a crash in that
// batch cuts the file back to where it stood rather than to the old file's size,
// in the middle of a line; also when it was rotated while no consumer ran.
func TestFactsLogRotation(t *testing.T) {
	move := func(t *testing.T, path, to string) {
		if err := os.Rename(path, to); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name    string
		stopped bool // rotated between two consumers
		rotate  func(t *testing.T, path, to string)
	}{
		{"moved aside", false, move},
		{"moved aside while stopped", true, move},
		{"copied and cut", false, func(t *testing.T, path, to string) {
			b, err := os.ReadFile(path)
			if err == nil {
				err = os.WriteFile(to, b, 0o600)
			}
			if err == nil {
				err = os.Truncate(path, 0)
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, crashed := t.TempDir(), t.TempDir()
			fs := facts(t, 6)
			bus := openBus(t, dir, BusOptions{})
			publishAll(t, bus, fs[:1])
			c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "facts.jsonl")
			if tt.stopped {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
			tt.rotate(t, path, path+".1")
			if tt.stopped {
				c = newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
			}
			publishAll(t, bus, fs[1:]) // a batch longer than the file rotated
			c.atStage = func(s commitStage) {
				if s == stageFacts {
					snapshot(t, dir, crashed, false) // the batch appended, the offset not moved
				}
			}
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(keysOf(fs[:1]), factKeys(t, readFacts(t, path+".1"))); diff != "" {
				t.Errorf("the rotated file's keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(keysOf(fs[1:]), factKeys(t, readFacts(t, path))); diff != "" {
				t.Errorf("facts.jsonl keys after the rotation (-want +got):\n%s", diff)
			}
			if st := readOffset(t, dir); st.FactsSize != fileSize(t, path) {
				t.Errorf("offset %+v does not record facts.jsonl's %d bytes", st, fileSize(t, path))
			}

			if err := newConsumer(t, crashed, &fakeIngester{}, ConsumerOptions{}).Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(keysOf(fs[1:]), factKeys(t, readFacts(t, filepath.Join(crashed, "facts.jsonl")))); diff != "" {
				t.Errorf("facts.jsonl keys after a crash in the first batch after the rotation (-want +got):\n%s", diff)
			}
		})
	}
}

// With batches in flight the consumer reads on into the next segment; when it stops
// with batches of both segments uncommitted, the next run reads them again from the
// first one, in order.
func TestPipelineAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 40)
	journalSegments(t, dir, fs, 5)
	ing := &overlapIngester{second: make(chan struct{})}
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 5})
	// Batches end with their segments: they overlap only if the consumer reads on.
	ing.failOn = func(call int) bool { return call >= 4 }
	ctx, cancel := context.WithTimeout(ctxTimeout(t), 200*time.Millisecond)
	defer cancel()
	if err := c.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("drain = %v, want DeadlineExceeded", err)
	}
	if ing.most < 2 {
		t.Errorf("at most %d ingests at once, want batches of the next segments in flight", ing.most)
	}
	if st := readOffset(t, dir); st.Segment != 3 {
		t.Errorf("offset %+v, want the end of segment 3, the last committed", st)
	}
	ing.failOn = nil
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keysOf(fs), factKeys(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))); diff != "" {
		t.Errorf("facts.jsonl keys (-want +got):\n%s", diff)
	}
	if segs := segmentFiles(t, dir); len(segs) != 1 || segs[0] != 8 {
		t.Errorf("segments left: %v, want the last one", segs)
	}
}

// snapshot copies what a crash of the consumer of dir leaves on disk into to: the
// journal, the facts log and the offset. torn cuts the facts log halfway between the
// size the offset records and its end, as a crash in the middle of an append does.
func snapshot(t testing.TB, dir, to string, torn bool) {
	t.Helper()
	copyFile := func(rel string) {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if rel == "facts.jsonl" && torn {
			b = b[:(readOffset(t, dir).FactsSize+int64(len(b)))/2]
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, rel), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range segmentFiles(t, dir) {
		copyFile(filepath.Join(journalDir, segmentName(s)))
	}
	copyFile("facts.jsonl")
	copyFile(consumerOffset)
}

// MaxBatchBytes bounds the ingest body, not the journal bytes its events came from:
// a click's GraphSON is a fraction of its event, and the batch takes as many clicks
// as the body holds.
func TestBatchIsBoundedByItsBody(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 300)
	size := journalFacts(t, dir, fs)
	limit := int(size / 4) // the body of all 300 is under half the journal's bytes
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatchBytes: limit})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if ing.largest > limit || ing.calls > 3 {
		t.Errorf("%d ingest calls, largest body %d bytes; want at most 3 under %d", ing.calls, ing.largest, limit)
	}
	if diff := cmp.Diff(keysOf(fs), factKeys(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))); diff != "" {
		t.Errorf("facts.jsonl keys (-want +got):\n%s", diff)
	}
}

// A batch reads the journal a chunk at a time and only as far as it needs: a small
// one (BusyBatch, while redirects are served) reads one chunk, a large one grows its
// buffer and keeps the records it had read intact.
func TestReadTakesOnlyTheChunksABatchNeeds(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 1200)
	if n := journalFacts(t, dir, fs); n < 2*readChunk {
		t.Fatalf("journaled %d bytes, want more than two chunks", n)
	}
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
	from := 0
	for _, tt := range []struct {
		limit, chunks int
	}{{2, 1}, {1000, 2}} {
		c.batchLimit = tt.limit
		b := c.newBatch()
		if ok, err := c.fetch(b, false); !ok || err != nil {
			t.Fatalf("fetch = %v, %v", ok, err)
		}
		c.assemble(b)
		c.pos = b.end
		if len(b.events) != tt.limit || c.Stats().Invalid != 0 {
			t.Fatalf("batch of %d: %d events, %d invalid", tt.limit, len(b.events), c.Stats().Invalid)
		}
		if len(b.buf) > tt.chunks*readChunk {
			t.Errorf("batch of %d read into %d bytes, want at most %d chunks", tt.limit, len(b.buf), tt.chunks)
		}
		// Every record intact, the ones read before the buffer grew too.
		for i := range b.events {
			b.events[i].state = eventIngested
		}
		lines, _ := b.factsLines(nil, b.recs)
		path := filepath.Join(t.TempDir(), "lines.jsonl")
		if err := os.WriteFile(path, lines, 0o600); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(keysOf(fs[from:from+tt.limit]), factKeys(t, readFacts(t, path))); diff != "" {
			t.Errorf("batch of %d (-want +got):\n%s", tt.limit, diff)
		}
		from += tt.limit
	}
}

// concurrencyIngester takes every body after a short wait and records how many
// calls ran at once.
type concurrencyIngester struct {
	running, most atomic.Int64
}

func (c *concurrencyIngester) IngestRaw(context.Context, []byte) error {
	n := c.running.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	c.running.Add(-1)
	return nil
}

// Pipeline bounds the batches in Persist at once (serve's inline consumer keeps two).
func TestPipelineOption(t *testing.T) {
	for _, depth := range []int{1, 2} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			dir := t.TempDir()
			journalFacts(t, dir, facts(t, 40))
			ing := &concurrencyIngester{}
			c := newConsumer(t, dir, ing, ConsumerOptions{MaxBatch: 5, Pipeline: depth})
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			if got := ing.most.Load(); got != int64(depth) {
				t.Errorf("at most %d ingests at once, want %d", got, depth)
			}
			if n := len(readFacts(t, filepath.Join(dir, "facts.jsonl"))); n != 40 {
				t.Errorf("facts.jsonl has %d lines, want 40", n)
			}
		})
	}
}

// A segment whose file ends before the end its header published (cut outside
// linoone, or its size lost in a crash) is read only as far as the file goes: the
// batch buffer a consumer reuses still holds an earlier batch's frames past that
// point, with valid checksums, and they must not be delivered again.
func TestFileShorterThanItsEndDeliversNoStaleBytes(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 20)
	seg := segmentPath(filepath.Join(dir, journalDir), 1)
	enc := &encoder{}
	var frames [][]byte
	for _, f := range fs {
		fr, err := enc.encode(f, fixedNow, defaultRegion, crcTable())
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, bytes.Clone(fr))
	}
	if err := os.MkdirAll(filepath.Dir(seg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seg, appendSegmentHeader(nil, segHeader, crcTable()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames[:10] {
		appendBytes(t, seg, fr)
	}
	ing := &fakeIngester{}
	c := newConsumer(t, dir, ing, ConsumerOptions{Pipeline: 1})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	first := segmentEnd(t, seg)
	for _, fr := range frames[10:] {
		appendBytes(t, seg, fr)
	}
	if err := os.Truncate(seg, first+int64(3*len(frames[10]))); err != nil {
		t.Fatal(err)
	}
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	counts := keyCounts(t, readFacts(t, filepath.Join(dir, "facts.jsonl")))
	for i, f := range fs {
		want := 1
		if i >= 13 {
			want = 0 // past the end of the file
		}
		if counts[f.IdempotencyKey] != want {
			t.Errorf("event %d delivered %d times, want %d", i, counts[f.IdempotencyKey], want)
		}
	}
}

// A segment whose header is damaged (a flipped byte in its magic or its end) is
// neither cut nor skipped: the next writer leaves it as it is and goes on in a new
// segment, and the consumer reads its frames, which check themselves, once a newer
// segment exists.
func TestDamagedHeaderLosesNoFrame(t *testing.T) {
	for _, tt := range []struct {
		name string
		at   int64
	}{
		{"magic, first half", 1},
		{"magic, second half", 5},
		{"end", 9},
		{"end's checksum", 17},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := facts(t, 11)
			dir, seg := closedJournal(t, fs[:10])
			size := fileSize(t, seg)
			f, err := os.OpenFile(seg, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, tt.at); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{b[0] ^ 0x5a}, tt.at); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}

			publishAll(t, openBus(t, dir, BusOptions{}), fs[10:])
			if got := fileSize(t, seg); got != size {
				t.Errorf("the damaged segment went from %d to %d bytes", size, got)
			}
			if n := len(drainFresh(t, dir).edges()); n != len(fs) {
				t.Errorf("delivered %d of %d events", n, len(fs))
			}
		})
	}
}

// An offset saved for another journal (the journal was removed or replaced, and its
// numbering began again) points past the newest segment. The consumer must not take
// the segments below it for consumed and delete them: it reads them from the oldest.
func TestOffsetPastTheNewestSegmentDeletesNothing(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 6)
	journalSegments(t, dir, fs, 3) // segments 1 and 2
	saveOffsetPastTheNewestSegment(t, dir)
	if n := len(drainFresh(t, dir).edges()); n != len(fs) {
		t.Errorf("delivered %d of %d events", n, len(fs))
	}
}

// TestLagCountsFromTheSavedOffset: a consumer that has delivered nothing yet (Persist
// down since the start, say) reports as its lag the journal bytes past its saved
// offset, not the whole journal: /healthz's bus_lag_bytes overstated the backlog by
// everything earlier runs delivered until a first batch committed.
func TestLagCountsFromTheSavedOffset(t *testing.T) {
	tests := []struct {
		name string
		// setup leaves a journal and an offset in dir and returns the journal bytes
		// not delivered.
		setup func(t *testing.T, dir string) int64
	}{
		{"offset in the segment", func(t *testing.T, dir string) int64 {
			fs := facts(t, 8)
			bus := openBus(t, dir, BusOptions{})
			publishAll(t, bus, fs[:5])
			c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
			if err := c.Drain(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			seg := segmentPath(filepath.Join(dir, journalDir), segmentFiles(t, dir)[0])
			delivered := segmentEnd(t, seg)
			publishAll(t, bus, fs[5:])
			return segmentEnd(t, seg) - delivered
		}},
		{"offset past the newest segment", func(t *testing.T, dir string) int64 {
			size := journalSegments(t, dir, facts(t, 6), 3) // version 1: frames from 0
			saveOffsetPastTheNewestSegment(t, dir)
			return size // read again from the oldest segment
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			want := tt.setup(t, dir)
			c := newConsumer(t, dir, &fakeIngester{failures: 1 << 30}, ConsumerOptions{})
			if lag, err := c.Lag(); err != nil || lag != want {
				t.Errorf("lag before any delivery = %d, %v; want %d", lag, err, want)
			}
		})
	}
}

// TestOffsetPastTheEndOfTheNewestSegmentStops: an offset past the end of the segment
// writers are writing in is damage, not a segment a crash cut (a writer that opens
// the journal alone starts a new one). Reading on from the end skipped the clicks
// written since below the offset, on every drain, and never moved the offset; the
// consumer now stops with an error that names the offset file, and delivers once
// it is removed.
func TestOffsetPastTheEndOfTheNewestSegmentStops(t *testing.T) {
	dir := t.TempDir()
	fs := facts(t, 6)
	bus := openBus(t, dir, BusOptions{})
	publishAll(t, bus, fs[:3])
	c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
	if err := c.Drain(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	damaged := readOffset(t, dir)
	damaged.Position += 64 << 10
	b, err := json.Marshal(damaged)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, consumerOffset), b, 0o600); err != nil {
		t.Fatal(err)
	}
	publishAll(t, bus, fs[3:]) // below the damaged offset

	ing := &fakeIngester{}
	c = newConsumer(t, dir, ing, ConsumerOptions{})
	for range 2 { // and again: nothing was skipped meanwhile
		err := c.Drain(ctxTimeout(t))
		if !errors.Is(err, errOffsetPastEnd) || !strings.Contains(err.Error(), filepath.Join(dir, consumerOffset)) {
			t.Fatalf("drain = %v, want errOffsetPastEnd naming the offset file", err)
		}
	}
	if ing.calls != 0 || readOffset(t, dir) != damaged {
		t.Fatalf("%d ingests, offset %+v; want none, and the offset as it was", ing.calls, readOffset(t, dir))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// What the error says to do: remove the offset, and the journal is delivered again.
	if err := os.Remove(filepath.Join(dir, consumerOffset)); err != nil {
		t.Fatal(err)
	}
	got := drainFresh(t, dir).edges()
	for i, f := range fs[3:] {
		if got[factEdgeID(t, f)] != 1 {
			t.Errorf("event %d, written below the damaged offset, delivered %d times", 3+i, got[factEdgeID(t, f)])
		}
	}
}

// TestNewerSegmentFormatIsLeftAlone: a segment in a format after this program's
// (after a downgrade, say) is neither written to, read past nor deleted; taken for
// a damaged header, it was stepped over and deleted with the facts in it.
func TestNewerSegmentFormatIsLeftAlone(t *testing.T) {
	for _, seg := range []int{1, 2} { // an older segment, then the newest
		t.Run(fmt.Sprintf("segment_%d", seg), func(t *testing.T) {
			dir := t.TempDir()
			journalSegments(t, dir, facts(t, 6), 3)
			path := segmentPath(filepath.Join(dir, "journal"), uint64(seg))
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{0, 0, 0, 0, 'L', 'N', 'J', '3'}, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := newConsumer(t, dir, &fakeIngester{}, ConsumerOptions{})
			if err := c.Drain(ctxTimeout(t)); !errors.Is(err, errNewerSegment) {
				t.Errorf("drain: %v, want errNewerSegment", err)
			}
			if seg == 2 {
				if b, err := OpenBus(dir, BusOptions{Logger: testLogger(t)}); !errors.Is(err, errNewerSegment) {
					if err == nil {
						_ = b.Close()
					}
					t.Errorf("open bus: %v, want errNewerSegment", err)
				}
			}
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
				t.Fatalf("the newer segment was changed or removed: %v", err)
			}
		})
	}
}
