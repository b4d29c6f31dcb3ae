// Package resolverstack builds the resolver as linoone serve and the Resolve function
// both run it: Persist behind the hot set, the recorder that publishes each click's
// fact (dead-lettering what cannot be published), the resolver, its HTTP handler,
// and the EMF metrics of the recorder's and the hot set's counters. The callers bring the adapters:
// the local bus and DLQ, or EventBridge and SQS.
package resolverstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/eventid"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/persist/hotset"
)

// Deps is what the resolver stack is built from.
type Deps struct {
	Store          shorturl.Store       // Persist
	Publisher      shorturl.Publisher   // the bus every click's fact goes to
	DeadLetters    shorturl.DeadLetters // where a fact the bus refused goes
	CacheSize      int                  // short URLs kept in the hot set; 0 disables it
	PublishTimeout time.Duration        // how long a redirect waits for the bus
	DLQTimeout     time.Duration        // then for the dead letters (0: the recorder's default)
	Logger         *slog.Logger
	MetricsOut     io.Writer             // where the EMF lines go
	Namespace      string                // the metrics' CloudWatch namespace ("": metrics.Namespace)
	Environment    string                // the metrics' Environment dimension
	Health         func() httpapi.Health // optional: what GET /healthz reports besides click recording
	// ClickBufferBytes bounds the memory holding facts the bus and the DLQ both
	// refused, until Stack.Recorder.Run flushes them (serve); 0: none, such facts
	// are logged at once (Lambda, where nothing runs after the handler returns).
	ClickBufferBytes int
	// ClickLogFactsPerSecond bounds the facts logged whole past the buffer; 0: none.
	ClickLogFactsPerSecond int
	// Screening is the operator's deny list: a short URL whose target it blocks
	// answers 410. Its counters (created when nil) are emitted on their own line.
	Screening shorturl.Screening
}

// HealthClickRecording is what GET /healthz names as degraded while click facts
// wait in the buffer or went to the log in the last minutes.
const HealthClickRecording = "click-recording"

// Stack is the built resolver.
type Stack struct {
	Handler  *httpapi.ResolverHandler // GET /{token}, GET /healthz
	Store    shorturl.Store           // Store behind the hot set (uncounted), for an issuer in the same process
	Counters *shorturl.Counters
	Metrics  metrics.Group // the counters as EMF: flush per invocation, or Run
	Screen   *shorturl.ScreenCounters
	Recorder *shorturl.Recorder
}

// New builds the resolver stack.
func New(d Deps) (*Stack, error) {
	if d.Store == nil {
		return nil, errors.New("resolver stack: a store is required")
	}
	counters := &shorturl.Counters{}
	ids := eventid.New()
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: d.Publisher, DeadLetters: d.DeadLetters, EventIDs: ids.Next,
		PublishTimeout: d.PublishTimeout, DLQTimeout: d.DLQTimeout, Logger: d.Logger, Counters: counters,
		BufferBytes: d.ClickBufferBytes, LogFactsPerSecond: d.ClickLogFactsPerSecond})
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	watched := &watchedStore{Store: d.Store}
	var store, issuerStore shorturl.Store = watched, watched
	clickMetrics := metrics.ClickFacts(counters)
	if d.CacheSize > 0 { // on Lambda it survives across warm invocations
		hs := hotset.New(watched, d.CacheSize)
		store, issuerStore = hs, hs.Uncounted()
		clickMetrics = append(clickMetrics, metrics.HotSet(hs.Hits, hs.Misses)...)
	}
	screen := d.Screening
	if screen.Counters == nil {
		screen.Counters = &shorturl.ScreenCounters{}
	}
	if screen.Logger == nil {
		screen.Logger = d.Logger
	}
	res, err := shorturl.NewResolver(store, rec, screen)
	if err != nil {
		return nil, fmt.Errorf("resolver: %w", err)
	}
	emf, err := metrics.New(d.MetricsOut, d.Namespace, d.Environment, clickMetrics...)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	screenEMF, err := metrics.New(d.MetricsOut, d.Namespace, d.Environment, metrics.Screening(screen.Counters)...)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &Stack{
		Handler:  httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res, Logger: d.Logger, Health: health(rec, watched, d.Health)}),
		Store:    issuerStore,
		Counters: counters,
		Metrics:  metrics.Group{emf, screenEMF},
		Screen:   screen.Counters,
		Recorder: rec,
	}, nil
}

// health adds the recorder's and Persist's state to what the caller reports on GET
// /healthz.
func health(rec *shorturl.Recorder, store *watchedStore, more func() httpapi.Health) func() httpapi.Health {
	return func() httpapi.Health {
		var h httpapi.Health
		if more != nil {
			h = more()
		}
		if store.watch.Failing() {
			h.Degraded = append(h.Degraded, httpapi.HealthPersist) // visitors of short URLs outside the hot set get 503
		}
		if rec.Degraded() {
			h.Degraded = append(h.Degraded, HealthClickRecording)
		}
		return h
	}
}

// watchedStore is the store under the hot set: every call it passes on reaches
// Persist, and its watch notes the outcome (httpapi.HealthPersist).
type watchedStore struct {
	shorturl.Store
	watch httpapi.PersistWatch
}

func (w *watchedStore) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	u, err := w.Store.Lookup(ctx, tok)
	w.watch.Observe(ctx, err)
	return u, err
}

func (w *watchedStore) Save(ctx context.Context, u shorturl.ShortURL) error {
	err := w.Store.Save(ctx, u)
	w.watch.Observe(ctx, err)
	return err
}
