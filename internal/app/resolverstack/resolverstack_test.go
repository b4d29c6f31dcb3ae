package resolverstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

const token = "aB3dE5gH7j"

// store knows one short URL and counts lookups.
type store struct{ lookups atomic.Int64 }

func (s *store) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	s.lookups.Add(1)
	if tok != token {
		return shorturl.ShortURL{}, shorturl.ErrNotFound
	}
	return shorturl.ShortURL{Token: token, Path: "https://l.example/" + token, Target: "https://example.com/"}, nil
}

func (s *store) Save(context.Context, shorturl.ShortURL) error { return nil }

type publisher struct{ err error }

func (p publisher) Publish(context.Context, clickfact.Fact) error { return p.err }

type deadLetters struct{ n atomic.Int64 }

func (d *deadLetters) DeadLetter(context.Context, clickfact.DeadLetter) error {
	d.n.Add(1)
	return nil
}

func TestStack(t *testing.T) {
	tests := []struct {
		name              string
		publishErr        error
		cacheSize         int
		wantLookups       int64
		wantPublished     int64
		wantDeadLettered  int64
		wantMetricInFlush string
	}{
		{name: "published, hot set", cacheSize: 10, wantLookups: 1, wantPublished: 2, wantMetricInFlush: "FactsPublished"},
		{name: "published, no hot set", wantLookups: 2, wantPublished: 2, wantMetricInFlush: "FactsPublished"},
		{name: "dead-lettered", publishErr: errors.New("bus down"), cacheSize: 10, wantLookups: 1, wantDeadLettered: 2, wantMetricInFlush: "FactsDeadLettered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, dl, out := &store{}, &deadLetters{}, &bytes.Buffer{}
			s, err := New(Deps{Store: st, Publisher: publisher{tt.publishErr}, DeadLetters: dl, CacheSize: tt.cacheSize,
				PublishTimeout: time.Second, Logger: slog.New(slog.DiscardHandler), MetricsOut: out, Environment: "test"})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				rec := httptest.NewRecorder()
				s.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+token, nil))
				if rec.Code != http.StatusFound || rec.Header().Get("Location") != "https://example.com/" {
					t.Fatalf("GET /%s = %d %q", token, rec.Code, rec.Header().Get("Location"))
				}
			}
			if got := st.lookups.Load(); got != tt.wantLookups {
				t.Errorf("store lookups = %d, want %d", got, tt.wantLookups)
			}
			if got := s.Counters.Published.Load(); got != tt.wantPublished {
				t.Errorf("published = %d, want %d", got, tt.wantPublished)
			}
			if got := s.Counters.DeadLettered.Load(); got != tt.wantDeadLettered || dl.n.Load() != tt.wantDeadLettered {
				t.Errorf("dead-lettered = %d (DLQ got %d), want %d", got, dl.n.Load(), tt.wantDeadLettered)
			}
			if err := s.Metrics.Flush(time.Now()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantMetricInFlush) || !strings.Contains(out.String(), `"Environment":"test"`) {
				t.Errorf("EMF line %q lacks %s or the environment", out, tt.wantMetricInFlush)
			}
		})
	}
}

func TestStackNeedsAStore(t *testing.T) {
	if _, err := New(Deps{Publisher: publisher{}, DeadLetters: &deadLetters{}, MetricsOut: &bytes.Buffer{}, Environment: "test"}); err == nil {
		t.Fatal("a stack without a store was built")
	}
}

// switchable fails while its error is set.
type switchable struct{ err atomic.Pointer[error] }

func (s *switchable) fail(err error) { s.err.Store(&err) }
func (s *switchable) get() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

type switchPublisher struct {
	switchable
	keys sync.Map // idempotency key → *atomic.Int64 publishes
}

func (p *switchPublisher) Publish(_ context.Context, f clickfact.Fact) error {
	if err := p.get(); err != nil {
		return err
	}
	n, _ := p.keys.LoadOrStore(f.IdempotencyKey, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return nil
}

type switchDLQ struct{ switchable }

func (d *switchDLQ) DeadLetter(context.Context, clickfact.DeadLetter) error { return d.get() }

func healthz(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /healthz = %d", rec.Code)
	}
	return strings.TrimSpace(rec.Body.String())
}

// TestHealthReportsBufferedClicks: with the bus and the DLQ both failing, clicks
// wait in the buffer, none is logged, and /healthz says click recording is
// degraded; once the bus works, Run publishes each exactly once and health is ok.
func TestHealthReportsBufferedClicks(t *testing.T) {
	pub, dlq, logs := &switchPublisher{}, &switchDLQ{}, &syncbuf.Buffer{}
	pub.fail(errors.New("no space left on device"))
	dlq.fail(errors.New("no space left on device"))
	s, err := New(Deps{Store: &store{}, Publisher: pub, DeadLetters: dlq, CacheSize: 10, PublishTimeout: time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), MetricsOut: &bytes.Buffer{}, Environment: "test", ClickBufferBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		rec := httptest.NewRecorder()
		s.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+token, nil))
		if rec.Code != http.StatusFound {
			t.Fatalf("GET /%s = %d", token, rec.Code)
		}
	}
	if got, want := healthz(t, s.Handler), `{"degraded":["click-recording"],"status":"degraded"}`; got != want {
		t.Fatalf("healthz = %s, want %s", got, want)
	}
	if s.Counters.Buffered.Load() != 5 || s.Counters.LostToLog.Load() != 0 || strings.Contains(logs.String(), "graph_fact") {
		t.Fatalf("buffered %d, lost to log %d; logs:\n%s", s.Counters.Buffered.Load(), s.Counters.LostToLog.Load(), logs)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Recorder.Run(ctx); close(done) }()
	pub.fail(nil)
	for deadline := time.Now().Add(10 * time.Second); s.Recorder.Pending() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("buffer not flushed")
		}
	}
	cancel()
	<-done
	n := 0
	pub.keys.Range(func(k, v any) bool {
		if c := v.(*atomic.Int64).Load(); c != 1 {
			t.Errorf("%s published %d times", k, c)
		}
		n++
		return true
	})
	if n != 5 {
		t.Fatalf("%d distinct facts published, want 5", n)
	}
	if got, want := healthz(t, s.Handler), `{"status":"ok"}`; got != want {
		t.Fatalf("healthz after the flush = %s, want %s", got, want)
	}
}

// switchStore is store, failing every lookup with its error while one is set.
type switchStore struct {
	store
	switchable
}

func (s *switchStore) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	if err := s.get(); err != nil {
		s.lookups.Add(1)
		return shorturl.ShortURL{}, err
	}
	return s.store.Lookup(ctx, tok)
}

// TestHealthReportsPersistUnavailable: while Persist cannot answer the resolver's
// lookups, visitors get 503 and /healthz names persist degraded; a lookup a visitor
// gave up on says nothing about Persist; the next lookup Persist answers, even with
// not found, clears it.
func TestHealthReportsPersistUnavailable(t *testing.T) {
	st := &switchStore{}
	s, err := New(Deps{Store: st, Publisher: publisher{}, DeadLetters: &deadLetters{}, CacheSize: 10, PublishTimeout: time.Second,
		Logger: slog.New(slog.DiscardHandler), MetricsOut: &bytes.Buffer{}, Environment: "test"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context, tok string) int {
		rec := httptest.NewRecorder()
		s.Handler.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/"+tok, nil))
		return rec.Code
	}
	const ok, degraded = `{"status":"ok"}`, `{"degraded":["persist"],"status":"degraded"}`
	st.fail(fmt.Errorf("persist lookup: timeout: %w", shorturl.ErrUnavailable))
	if code := get(context.Background(), token); code != http.StatusServiceUnavailable {
		t.Fatalf("GET /%s with Persist unavailable = %d, want 503", token, code)
	}
	if got := healthz(t, s.Handler); got != degraded {
		t.Fatalf("healthz = %s, want %s", got, degraded)
	}

	st.fail(nil)
	if code := get(context.Background(), "zZ9yY8xX7w"); code != http.StatusNotFound {
		t.Fatalf("GET of an unknown token = %d, want 404", code)
	}
	if got := healthz(t, s.Handler); got != ok {
		t.Fatalf("healthz once Persist answered = %s, want %s", got, ok)
	}

	st.fail(fmt.Errorf("persist lookup: %w: %w", context.Canceled, shorturl.ErrUnavailable))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	get(gone, token)
	if got := healthz(t, s.Handler); got != ok {
		t.Fatalf("healthz after a lookup its visitor gave up on = %s, want %s", got, ok)
	}
}

// TestHotSetMetricsRideOnTheClickLine: the hot set's hits and misses are fields of
// the click-fact line a redirect writes anyway (one line per flush, as before), the
// issuer's lookups through Stack.Store are not counted, and without a hot set there
// are no such fields.
func TestHotSetMetricsRideOnTheClickLine(t *testing.T) {
	for _, cacheSize := range []int{10, 0} {
		out := &bytes.Buffer{}
		s, err := New(Deps{Store: &store{}, Publisher: publisher{}, DeadLetters: &deadLetters{}, CacheSize: cacheSize,
			PublishTimeout: time.Second, Logger: slog.New(slog.DiscardHandler), MetricsOut: out, Environment: "test"})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			rec := httptest.NewRecorder()
			s.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+token, nil))
			if rec.Code != http.StatusFound {
				t.Fatalf("GET /%s = %d", token, rec.Code)
			}
		}
		if _, err := s.Store.Lookup(t.Context(), "zzzzzzzzzz"); !errors.Is(err, shorturl.ErrNotFound) { // an issuer's collision check
			t.Fatalf("issuer lookup: %v", err)
		}
		if err := s.Metrics.Flush(time.Now()); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 1 {
			t.Fatalf("cache %d: %d EMF lines, want the one click-fact line: %s", cacheSize, len(lines), out)
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
			t.Fatal(err)
		}
		hits, hasHits := line["HotSetHits"]
		misses, hasMisses := line["HotSetMisses"]
		switch {
		case cacheSize > 0 && (hits != 2.0 || misses != 1.0):
			t.Errorf("hot set: HotSetHits %v HotSetMisses %v, want 2 and 1 (the issuer's lookup uncounted)", hits, misses)
		case cacheSize == 0 && (hasHits || hasMisses):
			t.Errorf("no hot set, yet the line has hot set fields: %s", lines[0])
		}
	}
}
