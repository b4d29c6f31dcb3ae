package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/linoone/linoone/internal/core/denylist/denylisttest"
	"github.com/linoone/linoone/internal/core/eventid"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localbus"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/persist/hotset"
)

// benchStack is local mode in one process: local Persist over real HTTP, the durable
// local bus and DLQ, and the handlers.
type benchStack struct {
	lp     *localpersist.Store
	client *persist.Client
	bus    *localbus.Bus
	dlq    *localbus.DLQ
}

func newBenchStack(b *testing.B) *benchStack { return newBenchStackSync(b, localbus.SyncEach) }

func newBenchStackSync(b *testing.B, sync localbus.SyncMode) *benchStack {
	b.Helper()
	dir := b.TempDir()
	// As serve runs it: local Persist checks its own pair, the client signs with it,
	// so the numbers include both.
	pair := sigv4.Credentials{AccessKeyID: "LNKBENCHPERSIST00001", SecretAccessKey: "bench-persist-secret-0123456789abcdefgh"}
	verifier, err := sigv4.New(pair, "us-east-1", "execute-api", sigv4.WithMaxBodyBytes(localpersist.DefaultMaxBodyBytes))
	if err != nil {
		b.Fatal(err)
	}
	lp, err := localpersist.Open(context.Background(), filepath.Join(dir, "persist.db"), localpersist.Options{Authenticator: verifier})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(lp.Handler())
	b.Cleanup(func() { srv.Close(); _ = lp.Close() })
	pc, err := persist.New(persist.Config{BaseURL: srv.URL, SigV4: &persist.SigV4{
		Credentials: credentials.NewStaticCredentialsProvider(pair.AccessKeyID, pair.SecretAccessKey, ""), Region: "us-east-1"}})
	if err != nil {
		b.Fatal(err)
	}
	bus, err := localbus.OpenBus(filepath.Join(dir, "bus"), localbus.BusOptions{Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bus.Close() })
	dlq, err := localbus.OpenDLQ(filepath.Join(dir, "dlq"), localbus.DLQOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return &benchStack{lp: lp, client: pc, bus: bus, dlq: dlq}
}

// BenchmarkResolve measures GET /{token} through the resolver handler: a real
// Persist lookup behind the hot set, and, in the "fact" case, the click fact built and
// durably queued on the local bus (group commit). The difference between the two is
// the cost of fact publication per redirect.
func BenchmarkResolve(b *testing.B) {
	for _, c := range []struct {
		name           string
		withFact, deny bool
	}{{"lookup-only", false, false}, {"with-fact-on-local-bus", true, false}, {"lookup-only-denylist-100k", false, true}} {
		withFact := c.withFact
		b.Run(c.name, func(b *testing.B) {
			st := newBenchStack(b)
			store := hotset.New(st.client, 100_000)
			u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "http://127.0.0.1:8080/7BTadEDkJ8", Target: "https://example.com/landing?message_id=msg_123"}
			if err := store.Save(context.Background(), u); err != nil {
				b.Fatal(err)
			}
			var rec *shorturl.Recorder
			if withFact {
				var err error
				rec, err = shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: st.bus, DeadLetters: st.dlq, EventIDs: eventid.New().Next})
				if err != nil {
					b.Fatal(err)
				}
			}
			var screen shorturl.Screening
			if c.deny { // 100,000 rules, none matching: the deny list's cost per redirect
				screen.Screen = holding(b, denylisttest.Rules(100_000))
			}
			res, _ := shorturl.NewResolver(store, rec, screen)
			h := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res})
			b.ReportAllocs()
			b.SetParallelism(32) // 64 concurrent visitors, as wrk -c64 in scripts/bench.sh
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil)
				req.Header.Set("User-Agent", "bench/1.0")
				for pb.Next() {
					w := &discardWriter{h: http.Header{}}
					h.ServeHTTP(w, req)
					if w.code != http.StatusFound {
						b.Fatalf("status %d", w.code)
					}
				}
			})
			if rec != nil && rec.Counters().Published.Load() < int64(b.N) {
				b.Fatalf("published %d of %d facts", rec.Counters().Published.Load(), b.N)
			}
		})
	}
}

// BenchmarkResolveLatency measures one redirect at a time: what recording the click
// adds to a single visitor's wait, with the bus fsyncing before each acknowledgement
// (sync=each) or acknowledging once the write reached the kernel (sync=interval).
func BenchmarkResolveLatency(b *testing.B) {
	for _, tc := range []struct {
		name string
		fact bool
		sync localbus.SyncMode
	}{{"lookup-only", false, localbus.SyncEach}, {"fact-sync-each", true, localbus.SyncEach}, {"fact-sync-interval", true, localbus.SyncInterval}} {
		b.Run(tc.name, func(b *testing.B) {
			st := newBenchStackSync(b, tc.sync)
			store := hotset.New(st.client, 1000)
			u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "http://127.0.0.1:8080/7BTadEDkJ8", Target: "https://example.com/"}
			if err := store.Save(context.Background(), u); err != nil {
				b.Fatal(err)
			}
			var rec *shorturl.Recorder
			if tc.fact {
				rec, _ = shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: st.bus, DeadLetters: st.dlq, EventIDs: eventid.New().Next})
			}
			res, _ := shorturl.NewResolver(store, rec, shorturl.Screening{})
			h := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res})
			req := httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil)
			for b.Loop() {
				w := &discardWriter{h: http.Header{}}
				h.ServeHTTP(w, req)
				if w.code != http.StatusFound {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}

// BenchmarkShorten measures durable issuance through the management handler:
// SigV4 verification, OpenAPI validation, the collision lookup and a synchronous
// ingest into local Persist over HTTP, from parallel producers.
func BenchmarkShorten(b *testing.B) {
	st := newBenchStack(b)
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st.client, ResolverBaseURL: "http://127.0.0.1:8080", Rand: rand.Reader})
	if err != nil {
		b.Fatal(err)
	}
	v, _ := sigv4.New(creds, "us-east-1", "execute-api")
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: st.client, Authenticator: v})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(32) // 64 producers on two cores: the group commit has company
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			body := []byte(fmt.Sprintf(`{"target_url":"https://example.com/item/%d"}`, i))
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/shorten", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if err := sigv4.SignRequest(context.Background(), req, body, creds, "us-east-1", "execute-api", time.Now()); err != nil {
				b.Fatal(err)
			}
			w := &discardWriter{h: http.Header{}}
			h.ServeHTTP(w, req)
			if w.code != http.StatusCreated {
				b.Fatalf("status %d", w.code)
			}
		}
	})
	b.StopTimer()
	if st := st.lp.Stats(); st.Transactions > 0 {
		b.ReportMetric(float64(st.Documents)/float64(st.Transactions), "docs/commit")
	}
}

type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(p), nil
}
func (w *discardWriter) WriteHeader(code int) { w.code = code }
