package resolverstack

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/clickfact"
	"github.com/linoone/linoone/internal/shorturl"
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
