package shorturl_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/golden"
	"github.com/linoone/linoone/internal/testutil/schematest"
)

// memStore is a hand-written fake Store.
type memStore struct {
	mu        sync.Mutex
	m         map[shorturl.Token]shorturl.ShortURL
	lookupErr error
	saveErr   error
	collide   int // answer "found" to this many lookups
	saves     int
}

func newMemStore() *memStore { return &memStore{m: map[shorturl.Token]shorturl.ShortURL{}} }

func (s *memStore) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lookupErr != nil {
		return shorturl.ShortURL{}, s.lookupErr
	}
	if s.collide > 0 {
		s.collide--
		return shorturl.ShortURL{Token: tok, Target: "https://taken.example/"}, nil
	}
	u, ok := s.m[tok]
	if !ok {
		return shorturl.ShortURL{}, shorturl.ErrNotFound
	}
	return u, nil
}

func (s *memStore) Save(_ context.Context, u shorturl.ShortURL) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saveErr != nil {
		return s.saveErr
	}
	s.saves++
	s.m[u.Token] = u
	return nil
}

func newIssuer(t *testing.T, st shorturl.Store) *shorturl.Issuer {
	t.Helper()
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st, ResolverBaseURL: "https://s.example.com/", Rand: rand.Reader, MaxDraws: 3})
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func TestShorten(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	u, err := newIssuer(t, st).Shorten(ctx, "https://example.com/landing?message_id=msg_123")
	if err != nil {
		t.Fatal(err)
	}
	if !shorturl.IsToken(string(u.Token)) || u.Path != "https://s.example.com/"+string(u.Token) || u.Target != "https://example.com/landing?message_id=msg_123" {
		t.Fatalf("Shorten = %+v", u)
	}
	if st.m[u.Token] != u {
		t.Fatalf("store holds %+v", st.m[u.Token])
	}
}

func TestShortenRedrawsOnCollision(t *testing.T) {
	st := newMemStore()
	st.collide = 2
	u, err := newIssuer(t, st).Shorten(context.Background(), "https://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if st.saves != 1 || st.m[u.Token] != u {
		t.Fatalf("saves = %d", st.saves)
	}
}

// TestShortenRedrawsOnAHeldToken: a token Persist answers malformed rows for (two
// targets, or a vertex without one) is held, not free; its lookup wraps ErrNotFound
// only so that the resolver answers 404.
func TestShortenRedrawsOnAHeldToken(t *testing.T) {
	const held = shorturl.Token("HeldToken1")
	st := newGraphStore()
	st.v[held] = []shorturl.ShortURL{{Token: held, Target: "https://a.example/"}, {Token: held, Target: "https://b.example/"}}
	first := make([]byte, 2*len(held)) // NewToken's first read: the held token's letters
	for i := range held {
		first[i] = byte(strings.IndexByte("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", held[i]))
	}
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st, ResolverBaseURL: "https://s.example.com/",
		Rand: io.MultiReader(bytes.NewReader(first), rand.Reader), MaxDraws: 3})
	if err != nil {
		t.Fatal(err)
	}
	u, err := is.Shorten(context.Background(), "https://c.example/")
	if err != nil {
		t.Fatal(err)
	}
	if u.Token == held || len(st.v[held]) != 2 {
		t.Fatalf("Shorten issued %+v; the held token has %d short URLs", u, len(st.v[held]))
	}
}

func TestShortenFailures(t *testing.T) {
	down := fmt.Errorf("dial: refused: %w", shorturl.ErrUnavailable)
	tests := []struct {
		name    string
		prepare func(*memStore)
		target  string
		want    error
	}{
		{"collisions exhaust the draws", func(s *memStore) { s.collide = 3 }, "https://example.com/", shorturl.ErrTokenSpaceBusy},
		{"lookup unavailable", func(s *memStore) { s.lookupErr = down }, "https://example.com/", shorturl.ErrUnavailable},
		{"save unavailable", func(s *memStore) { s.saveErr = down }, "https://example.com/", shorturl.ErrUnavailable},
		{"invalid target", func(*memStore) {}, "javascript:alert(1)", shorturl.ErrInvalidTarget},
		{"own host", func(*memStore) {}, "https://s.example.com/x", shorturl.ErrInvalidTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemStore()
			tt.prepare(st)
			u, err := newIssuer(t, st).Shorten(context.Background(), tt.target)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if u != (shorturl.ShortURL{}) || len(st.m) != 0 {
				t.Fatalf("a failed Shorten returned %+v and stored %d", u, len(st.m))
			}
		})
	}
}

func TestNewIssuerRejectsBadBaseURL(t *testing.T) {
	for _, base := range []string{"", "s.example.com", "ftp://s.example.com", "https://u@s.example.com", "https://s.example.com/?q=1", "https://",
		// Short URLs carry the base for good: nothing a browser cannot follow.
		"http://:8080", "http://s.example.com?", "http://s.example.com#", "https://s.example.com/go#",
		"http://s.example.com:0", "http://s.example.com:99999", "http://[::1]:0"} {
		if _, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: newMemStore(), ResolverBaseURL: base, Rand: rand.Reader}); !errors.Is(err, shorturl.ErrInvalidBaseURL) {
			t.Errorf("base %q: err = %v", base, err)
		}
	}
	for _, base := range []string{"http://127.0.0.1:8080", "https://s.example.com/go/", "http://[::1]:65535", "https://s.example.com:1"} {
		if _, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: newMemStore(), ResolverBaseURL: base, Rand: rand.Reader}); err != nil {
			t.Errorf("base %q: %v", base, err)
		}
	}
}

func TestArtifact(t *testing.T) {
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://short.example.com/7BTadEDkJ8", Target: "https://example.com/landing?message_id=msg_123"}
	doc, err := u.Artifact()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	golden.JSON(t, "short_url_artifact.json", b)
	schematest.MustValidate(t, schematest.Artifact, b)
	// The id is the identity vector of schemas/testdata/identity-vectors.json.
	if id := doc.Vertices[0].ID; id != "8a4c8eac84dedac8822b48cac916e4beb2ed6d26029356df16672e75409566a3" {
		t.Errorf("vertex id %s is not the identity vector's", id)
	}
	if n := len(doc.Vertices[0].Properties); n != 3 {
		t.Errorf("short_url vertex has %d properties, want exactly 3", n)
	}
}

func TestArtifactSchemaRejectsExtras(t *testing.T) {
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://short.example.com/7BTadEDkJ8", Target: "https://example.com/"}
	for name, props := range map[string]graphson.Properties{
		"created_by": {"short_url_token": string(u.Token), "short_url_path": u.Path, "target_url": u.Target, "created_by": "producer"},
		"created_at": {"short_url_token": string(u.Token), "short_url_path": u.Path, "target_url": u.Target, "created_at": "2026-01-01T00:00:00Z"},
		"no target":  {"short_url_token": string(u.Token), "short_url_path": u.Path},
		"bad token":  {"short_url_token": "short", "short_url_path": u.Path, "target_url": u.Target},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := graphson.NewVertex("short_url", props)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(graphson.Document{Vertices: []graphson.Vertex{v}})
			if err := schematest.Validate(schematest.Artifact, b); err == nil {
				t.Fatalf("schema accepted %s", b)
			}
		})
	}
}

var (
	testURL   = shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://short.example.com/7BTadEDkJ8", Target: "https://example.com/landing?message_id=msg_123"}
	testVisit = shorturl.Visit{IP: "203.0.113.7", UserAgent: "Mozilla/5.0 (X11; Linux x86_64)", At: time.Date(2026, 11, 29, 17, 13, 58, 123456789, time.FixedZone("CET", 3600))}
)

var testClick = clickfact.Click{Token: string(testURL.Token), Path: testURL.Path, Target: testURL.Target,
	IP: testVisit.IP, UserAgent: testVisit.UserAgent, At: testVisit.At}

const testEventID = "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G"

// fakePublisher and fakeDLQ are hand-written fakes of the ports.
type fakePublisher struct {
	mu    sync.Mutex
	facts []clickfact.Fact
	err   error
	block bool
}

func (p *fakePublisher) Publish(ctx context.Context, f clickfact.Fact) error {
	if p.block {
		<-ctx.Done()
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	f.Detail = bytes.Clone(f.Detail) // Publish must not keep the caller's buffer
	p.facts = append(p.facts, f)
	return nil
}

type fakeDLQ struct {
	mu      sync.Mutex
	letters []clickfact.DeadLetter
	err     error
	block   bool
}

func (q *fakeDLQ) DeadLetter(ctx context.Context, d clickfact.DeadLetter) error {
	if q.block {
		<-ctx.Done()
		return ctx.Err()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	d.GraphFact = bytes.Clone(d.GraphFact)
	q.letters = append(q.letters, d)
	return nil
}

func newRecorder(t *testing.T, pub shorturl.Publisher, dlq shorturl.DeadLetters, logs *bytes.Buffer) *shorturl.Recorder {
	t.Helper()
	n := 0
	r, err := shorturl.NewRecorder(shorturl.RecorderConfig{
		Publisher: pub, DeadLetters: dlq, PublishTimeout: 50 * time.Millisecond,
		EventIDs: func() (string, error) { n++; return fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", n), nil },
		Logger:   slog.New(slog.NewJSONHandler(logs, nil)),
		Now:      func() time.Time { return testVisit.At },
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveRecordsTheClick(t *testing.T) {
	st := newMemStore()
	st.m[testURL.Token] = testURL
	pub, dlq, logs := &fakePublisher{}, &fakeDLQ{}, &bytes.Buffer{}
	rec := newRecorder(t, pub, dlq, logs)
	res, err := shorturl.NewResolver(st, rec, shorturl.Screening{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.Resolve(context.Background(), string(testURL.Token), testVisit)
	if err != nil || got != testURL {
		t.Fatalf("Resolve = %+v, %v", got, err)
	}
	if len(pub.facts) != 1 || len(dlq.letters) != 0 || rec.Counters().Published.Load() != 1 {
		t.Fatalf("published %d, dead-lettered %d", len(pub.facts), len(dlq.letters))
	}
	schematest.MustValidate(t, schematest.GraphFact, pub.facts[0].Detail)
	want, err := clickfact.Build(testClick, pub.facts[0].EventID)
	if err != nil || !bytes.Equal(pub.facts[0].Detail, want.Detail) {
		t.Fatalf("the recorded fact is not the click's fact (%v):\n got %s\nwant %s", err, pub.facts[0].Detail, want.Detail)
	}

	for _, tok := range []string{"unknownTok", "bad", "7BTadEDk-8"} {
		if _, err := res.Resolve(context.Background(), tok, testVisit); err == nil {
			t.Fatalf("%s resolved", tok)
		}
	}
	if len(pub.facts) != 1 {
		t.Fatalf("a failed resolution published a fact")
	}
}

func TestResolveInvalidTokenNeverTouchesStore(t *testing.T) {
	st := newMemStore()
	st.lookupErr = errors.New("must not be called")
	res, _ := shorturl.NewResolver(st, nil, shorturl.Screening{})
	if _, err := res.Resolve(context.Background(), "../etc/pas", testVisit); !errors.Is(err, shorturl.ErrInvalidToken) {
		t.Fatalf("err = %v", err)
	}
}

func TestRecorderDeadLettersFailedPublish(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("FailedEntryCount=1")}, &fakeDLQ{}, &bytes.Buffer{}
	rec := newRecorder(t, pub, dlq, logs)
	rec.Record(context.Background(), testURL, testVisit)
	if len(dlq.letters) != 1 || rec.Counters().DeadLettered.Load() != 1 || rec.Counters().Published.Load() != 0 {
		t.Fatalf("dead letters %d", len(dlq.letters))
	}
	d := dlq.letters[0]
	if d.Attempts != 1 || !strings.Contains(d.Reason, "FailedEntryCount=1") {
		t.Fatalf("dead letter %+v", d)
	}
	b, _ := json.Marshal(d)
	schematest.MustValidate(t, schematest.ClickDLQ, b)
}

func TestRecorderPublishTimeoutIsBounded(t *testing.T) {
	pub, dlq, logs := &fakePublisher{block: true}, &fakeDLQ{}, &bytes.Buffer{}
	rec := newRecorder(t, pub, dlq, logs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the visitor went away: the click is still recorded
	start := time.Now()
	rec.Record(ctx, testURL, testVisit)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Record took %v with a 50ms publish timeout", el)
	}
	if len(dlq.letters) != 1 || !strings.Contains(dlq.letters[0].Reason, "deadline") {
		t.Fatalf("dead letters %+v", dlq.letters)
	}
}

// TestRecorderKeepsToTheInvocationDeadline: on Lambda the request's context ends
// when the function is about to be stopped. A publish timeout longer than that must
// not eat the dead letter's turn: the fact reaches the DLQ, or the log, in time.
func TestRecorderKeepsToTheInvocationDeadline(t *testing.T) {
	for _, dlqBlocks := range []bool{false, true} {
		pub, dlq, logs := &fakePublisher{block: true}, &fakeDLQ{block: dlqBlocks}, &bytes.Buffer{}
		rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{
			Publisher: pub, DeadLetters: dlq, PublishTimeout: 10 * time.Second, DLQTimeout: 10 * time.Second,
			EventIDs: func() (string, error) { return testEventID, nil },
			Logger:   slog.New(slog.NewJSONHandler(logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		rec.Record(ctx, testURL, testVisit)
		took := time.Since(start)
		cancel()
		if took > 2*time.Second {
			t.Fatalf("DLQ blocking %v: Record took %v past a 300ms invocation deadline", dlqBlocks, took)
		}
		c := rec.Counters()
		if dlqBlocks {
			if c.LostToLog.Load() != 1 || !strings.Contains(logs.String(), `"graph_fact"`) {
				t.Fatalf("neither bus nor DLQ answered: the fact must be logged whole; log %s", logs)
			}
			continue
		}
		if len(dlq.letters) != 1 || c.DeadLettered.Load() != 1 || c.LostToLog.Load() != 0 {
			t.Fatalf("the bus did not answer: the fact must be dead-lettered; letters %d, log %s", len(dlq.letters), logs)
		}
	}
}

func TestRecorderLogsWholeFactWhenDLQFails(t *testing.T) {
	pub, dlq, logs := &fakePublisher{err: errors.New("bus down")}, &fakeDLQ{err: errors.New("queue down")}, &bytes.Buffer{}
	rec := newRecorder(t, pub, dlq, logs)
	rec.Record(context.Background(), testURL, testVisit)
	if rec.Counters().LostToLog.Load() != 1 {
		t.Fatal("LostToLog not counted")
	}
	var line struct {
		Level     string          `json:"level"`
		GraphFact json.RawMessage `json:"graph_fact"`
		PubErr    string          `json:"publish_err"`
		DLQErr    string          `json:"dlq_err"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil {
		t.Fatalf("log %q: %v", logs, err)
	}
	if line.Level != "ERROR" || line.PubErr != "bus down" || line.DLQErr != "queue down" {
		t.Fatalf("log line %+v", line)
	}
	schematest.MustValidate(t, schematest.GraphFact, line.GraphFact)
}

func TestReplay(t *testing.T) {
	f, _ := clickfact.Build(testClick, testEventID)
	body, _ := json.Marshal(clickfact.NewDeadLetter(f, testVisit.At, 2, errors.New("x")))
	pub := &fakePublisher{}
	d, got, err := shorturl.Replay(context.Background(), pub, body)
	if err != nil || d.Attempts != 2 || got.IdempotencyKey != f.IdempotencyKey {
		t.Fatalf("Replay = %+v, %+v, %v", d, got, err)
	}
	if len(pub.facts) != 1 || !bytes.Equal(pub.facts[0].Detail, f.Detail) {
		t.Fatal("replay did not publish the same fact")
	}
	pub.err = errors.New("still down")
	if _, _, err := shorturl.Replay(context.Background(), pub, body); err == nil || !strings.Contains(err.Error(), "attempt 3") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := shorturl.Replay(context.Background(), pub, []byte("garbage")); !errors.Is(err, clickfact.ErrInvalid) {
		t.Fatalf("garbage: err = %v", err)
	}
}

// TestResolverRefusesWhatIssuanceWould: whatever the store returns, the resolver
// redirects only to targets issuance could have accepted (ErrInvalidStored, which is
// also ErrNotFound), and Find never records a click.
func TestResolverRefusesWhatIssuanceWould(t *testing.T) {
	for target, ok := range map[string]bool{
		"https://example.com/ok":               true,
		"HTTP://EXAMPLE.COM:8080/a?b#c":        true,
		"https://[2001:db8::1]:443/x":          true,
		"https://exämple.com/päth":             true,
		"javascript:alert(document.cookie)":    false,
		"ftp://example.com/":                   false,
		"https:///nohost":                      false,
		"https://:443/":                        false,
		"https://user:pw@example.com/":         false,
		"https://evil.example\\@good.example/": false,
		"https://example.com/a b":              false,
		"https://example.com/\x00":             false,
		"https://example.com/\u202eevil":       false,
		"//example.com/":                       false,
		"":                                     false,
	} {
		st := newMemStore()
		st.m["7BTadEDkJ8"] = shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example/7BTadEDkJ8", Target: target}
		pub := &fakePublisher{}
		res, _ := shorturl.NewResolver(st, newRecorder(t, pub, &fakeDLQ{}, &bytes.Buffer{}), shorturl.Screening{})
		_, err := res.Resolve(context.Background(), "7BTadEDkJ8", testVisit)
		if ok != (err == nil) || !ok && (!errors.Is(err, shorturl.ErrInvalidStored) || !errors.Is(err, shorturl.ErrNotFound)) {
			t.Errorf("%q: err = %v, want ok=%v", target, err, ok)
		}
		if want := map[bool]int{true: 1, false: 0}[ok]; len(pub.facts) != want {
			t.Errorf("%q: %d facts published, want %d", target, len(pub.facts), want)
		}
		if _, err := res.Find(context.Background(), "7BTadEDkJ8"); ok != (err == nil) || len(pub.facts) > 1 {
			t.Errorf("%q: Find = %v, %d facts", target, err, len(pub.facts))
		}
	}
}
