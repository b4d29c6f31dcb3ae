package shorturl_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/graphson"
	"github.com/linoone/linoone/internal/schematest"
	"github.com/linoone/linoone/internal/shorturl"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

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
	for _, base := range []string{"", "s.example.com", "ftp://s.example.com", "https://u@s.example.com", "https://s.example.com/?q=1", "https://"} {
		if _, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: newMemStore(), ResolverBaseURL: base, Rand: rand.Reader}); !errors.Is(err, shorturl.ErrInvalidBaseURL) {
			t.Errorf("base %q: err = %v", base, err)
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
	golden(t, "short_url_artifact.json", b)
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

const testEventID = "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G"

func TestBuildClickFact(t *testing.T) {
	f, err := shorturl.BuildClickFact(testURL, testVisit, testEventID)
	if err != nil {
		t.Fatal(err)
	}
	if f.IdempotencyKey != "shorturl:"+testEventID || f.EventID != testEventID {
		t.Fatalf("fact = %+v", f)
	}
	golden(t, "click_fact.json", f.Detail)
	schematest.MustValidate(t, schematest.GraphFact, f.Detail)
	if strings.Contains(string(f.Detail), "created_at") || strings.Contains(string(f.Detail), "metadata") {
		t.Fatal("fact carries created_at or metadata")
	}
	back, err := shorturl.ParseFact(f.Detail)
	if err != nil {
		t.Fatalf("ParseFact of own fact: %v", err)
	}
	if back.IdempotencyKey != f.IdempotencyKey || !bytes.Equal(back.Detail, f.Detail) {
		t.Fatalf("ParseFact = %+v", back)
	}
	// A replayed fact is the same edge: same inputs, same bytes.
	again, _ := shorturl.BuildClickFact(testURL, testVisit, testEventID)
	if !bytes.Equal(again.Detail, f.Detail) {
		t.Fatal("the same click built twice differs")
	}
}

func TestBuildClickFactHostileUserAgent(t *testing.T) {
	v := testVisit
	v.UserAgent = "\"}]}\xff\x00" + strings.Repeat("A", 5000)
	f, err := shorturl.BuildClickFact(testURL, v, testEventID)
	if err != nil {
		t.Fatal(err)
	}
	schematest.MustValidate(t, schematest.GraphFact, f.Detail)
	if _, err := shorturl.ParseFact(f.Detail); err != nil {
		t.Fatal(err)
	}
}

func TestBuildClickFactRejectsBadEventID(t *testing.T) {
	for _, id := range []string{"", "01JZ8Q6W3C4V5B6N7M8K9J0H1G", "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1", "ev_01JZ8Q6W3C4V5B6N7M8K9J0HIL"} {
		if _, err := shorturl.BuildClickFact(testURL, testVisit, id); !errors.Is(err, shorturl.ErrInvalidFact) {
			t.Errorf("%q: err = %v", id, err)
		}
	}
}

func TestFactSchemaAndParserRejectHandMadeFacts(t *testing.T) {
	f, _ := shorturl.BuildClickFact(testURL, testVisit, testEventID)
	mutate := func(edit func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(f.Detail, &m)
		edit(m)
		b, _ := json.Marshal(m)
		return b
	}
	edge := func(m map[string]any) map[string]any {
		return m["graphson"].(map[string]any)["edges"].([]any)[0].(map[string]any)["@value"].(map[string]any)
	}
	tests := map[string][]byte{
		"metadata object": mutate(func(m map[string]any) { m["metadata"] = map[string]any{"campaign": "x"} }),
		"wrong fact type": mutate(func(m map[string]any) { m["fact_type"] = "short_url.clicked" }),
		"key mismatch":    mutate(func(m map[string]any) { m["idempotency_key"] = "shorturl:ev_01JZ8Q6W3C4V5B6N7M8K9J0H1H" }),
		"no edge":         mutate(func(m map[string]any) { m["graphson"].(map[string]any)["edges"] = []any{} }),
		"created_at on edge": mutate(func(m map[string]any) {
			edge(m)["properties"].(map[string]any)["created_at"] = map[string]any{"@type": "g:Property", "@value": map[string]any{"key": "created_at", "value": "x"}}
		}),
		"edge without user agent": mutate(func(m map[string]any) { delete(edge(m)["properties"].(map[string]any), "user_agent") }),
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			// JSON Schema cannot compare two members; the parser checks the key.
			if err := schematest.Validate(schematest.GraphFact, b); err == nil && name != "key mismatch" {
				t.Errorf("schema accepted it")
			}
			if _, err := shorturl.ParseFact(b); !errors.Is(err, shorturl.ErrInvalidFact) {
				t.Errorf("ParseFact err = %v", err)
			}
		})
	}
}

func TestDeadLetter(t *testing.T) {
	f, _ := shorturl.BuildClickFact(testURL, testVisit, testEventID)
	d := shorturl.NewDeadLetter(f, testVisit.At, 1, errors.New("PutEvents: FailedEntryCount=1 (InternalFailure)"))
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "click_dlq_message.json", b)
	schematest.MustValidate(t, schematest.ClickDLQ, b)
	if d := shorturl.NewDeadLetter(f, testVisit.At, 0, nil); d.Reason == "" || d.Attempts != 1 {
		t.Fatalf("dead letter without a reason: %+v", d)
	}
	amp := testURL
	amp.Target = "https://example.com/a?b=<c>&d=e"
	fa, _ := shorturl.BuildClickFact(amp, testVisit, testEventID)
	enc, err := shorturl.NewDeadLetter(fa, testVisit.At, 1, errors.New("x")).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := shorturl.ParseDeadLetter(enc); err != nil || !bytes.Equal(got.Detail, fa.Detail) {
		t.Fatalf("the fact did not survive the dead letter byte for byte: %v\n%s\n%s", err, got.Detail, fa.Detail)
	}
	back, fact, err := shorturl.ParseDeadLetter(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Attempts != 1 || fact.IdempotencyKey != f.IdempotencyKey || !bytes.Equal(fact.Detail, f.Detail) {
		t.Fatalf("ParseDeadLetter = %+v, %+v", back, fact)
	}
	for name, body := range map[string]string{
		"not json":      `{`,
		"attempts 0":    strings.Replace(string(b), `"attempts":1`, `"attempts":0`, 1),
		"extra member":  strings.Replace(string(b), `"attempts":1`, `"attempts":1,"x":1`, 1),
		"bad time":      strings.Replace(string(b), d.FailedAt, "yesterday", 1),
		"bad fact":      `{"graph_fact":{},"failed_at":"2026-01-01T00:00:00Z","attempts":1,"reason":"x"}`,
		"trailing data": string(b) + `{"graph_fact":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := schematest.Validate(schematest.ClickDLQ, []byte(body)); err == nil {
				t.Error("schema accepted it")
			}
			if _, _, err := shorturl.ParseDeadLetter([]byte(body)); !errors.Is(err, shorturl.ErrInvalidFact) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// fakePublisher and fakeDLQ are hand-written fakes of the ports.
type fakePublisher struct {
	mu    sync.Mutex
	facts []shorturl.Fact
	err   error
	block bool
}

func (p *fakePublisher) Publish(ctx context.Context, f shorturl.Fact) error {
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
	letters []shorturl.DeadLetter
	err     error
}

func (q *fakeDLQ) DeadLetter(_ context.Context, d shorturl.DeadLetter) error {
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
	res, err := shorturl.NewResolver(st, rec)
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
	res, _ := shorturl.NewResolver(st, nil)
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
	f, _ := shorturl.BuildClickFact(testURL, testVisit, testEventID)
	body, _ := json.Marshal(shorturl.NewDeadLetter(f, testVisit.At, 2, errors.New("x")))
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
	if _, _, err := shorturl.Replay(context.Background(), pub, []byte("garbage")); !errors.Is(err, shorturl.ErrInvalidFact) {
		t.Fatalf("garbage: err = %v", err)
	}
}

// TestCoreImports keeps the domain core free of HTTP, AWS and generated API code; of
// our packages it may use only the pure graphson and hostname.
func TestCoreImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/linoone/linoone/internal/shorturl").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "net/http", strings.HasPrefix(dep, "net/http/"),
			strings.HasPrefix(dep, "github.com/aws/"),
			strings.HasPrefix(dep, "github.com/linoone/linoone/api"),
			strings.HasPrefix(dep, "github.com/linoone/linoone/internal/") &&
				dep != "github.com/linoone/linoone/internal/shorturl" && dep != "github.com/linoone/linoone/internal/graphson" &&
				dep != "github.com/linoone/linoone/internal/hostname":
			t.Errorf("the core depends on %s", dep)
		}
	}
}

// referenceClickFact builds the fact the slow, obvious way through the generic
// GraphSON code: the fast builder must produce the same bytes.
func referenceClickFact(t *testing.T, u shorturl.ShortURL, v shorturl.Visit, eventID string) []byte {
	t.Helper()
	vertex, err := u.Vertex()
	if err != nil {
		t.Fatal(err)
	}
	ua := strings.ToValidUTF8(v.UserAgent, "\uFFFD")
	if len(ua) > 1024 {
		ua = strings.ToValidUTF8(ua[:1024], "")
	}
	edge, err := graphson.NewEdge("short_url_visited", vertex, vertex, graphson.Properties{
		"event_identifier": eventID, "visitor_ip_address": v.IP, "user_agent": ua,
		"effective_at": v.At.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// AppendJSON, not json.Marshal: encoding/json would HTML-escape the output.
	doc, err := graphson.Document{Vertices: []graphson.Vertex{vertex}, Edges: []graphson.Edge{edge}}.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"schema_version":"1.0","graphson_format":"graphson-v3","fact_type":"short_url.visited","entity_types":["short_url"],"idempotency_key":"shorturl:` + eventID + `","graphson":` + string(doc) + `}`)
}

func TestFastFactBuilderMatchesReference(t *testing.T) {
	pieces := []string{"a", "Z", "/", "?", "&", "=", "\"", "\\", "\x01", "\x1f", "\t", "é", "😀", "\u2028", "<", ">", "%20", "'", "\xff"}
	r := mathrand.New(mathrand.NewPCG(1, 2))
	str := func(n int) string {
		var sb strings.Builder
		for range r.IntN(n) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		return sb.String()
	}
	for i := range 500 {
		u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/" + strings.ToValidUTF8(str(8), ""), Target: "https://example.com/" + strings.ToValidUTF8(str(40), "")}
		v := shorturl.Visit{IP: []string{"203.0.113.7", "2001:db8::1", ""}[i%3], UserAgent: str(60), At: time.Unix(int64(r.Uint32()), int64(r.IntN(1e9)))}
		if i%50 == 0 {
			v.UserAgent = strings.Repeat("é", 700) // cut at 1024 bytes, mid-rune
		}
		id := fmt.Sprintf("ev_01JZ8Q6W3C4V5B6N7M8K9J%04d", i)
		f, err := shorturl.BuildClickFact(u, v, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceClickFact(t, u, v, id); !bytes.Equal(f.Detail, want) {
			t.Fatalf("case %d differs:\n got %s\nwant %s", i, f.Detail, want)
		}
		if _, err := shorturl.ParseFact(f.Detail); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
}

func BenchmarkBuildClickFact(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := shorturl.BuildClickFact(testURL, testVisit, testEventID); err != nil {
			b.Fatal(err)
		}
	}
}
