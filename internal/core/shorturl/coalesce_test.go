package shorturl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// gatedStore holds its first LookupMany until release is closed.
type gatedStore struct {
	*graphStore
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gatedStore) LookupMany(ctx context.Context, toks []shorturl.Token) ([]shorturl.ShortURL, error) {
	g.once.Do(func() { close(g.entered); <-g.release })
	return g.graphStore.LookupMany(ctx, toks)
}

func coalescingIssuer(t *testing.T, st interface {
	shorturl.Store
	shorturl.BatchStore
}) *shorturl.Issuer {
	return batchIssuer(t, st, func(c *shorturl.IssuerConfig) { c.Coalesce = true })
}

// The issuances that wait while a batch is in Persist go out together as the next
// one: one lookup and one ingest for all of them, each caller its own short URL.
func TestCoalescedIssuanceSharesOneLookupAndOneIngest(t *testing.T) {
	st := newGraphStore()
	g := &gatedStore{graphStore: st, entered: make(chan struct{}), release: make(chan struct{})}
	is := coalescingIssuer(t, g)
	const n = 50
	urls := make([]shorturl.ShortURL, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	issue := func(i int) {
		defer wg.Done()
		urls[i], errs[i] = is.ShortenFor(context.Background(), fmt.Sprintf("https://example.com/%d", i), "")
	}
	wg.Add(n)
	go issue(0)
	<-g.entered // the first batch is in its lookup
	for i := 1; i < n; i++ {
		go issue(i)
	}
	for deadline := time.Now().Add(10 * time.Second); shorturl.QueuedIssues(is) < n-1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d issuances queued", shorturl.QueuedIssues(is), n-1)
		}
	}
	close(g.release)
	wg.Wait()
	seen := map[shorturl.Token]bool{}
	for i, u := range urls {
		if errs[i] != nil {
			t.Fatalf("issuance %d: %v", i, errs[i])
		}
		if want := fmt.Sprintf("https://example.com/%d", i); u.Target != want || u.Path != "https://s.example.com/"+string(u.Token) || seen[u.Token] {
			t.Fatalf("issuance %d: %+v (target %q wanted, token unique: %v)", i, u, want, !seen[u.Token])
		}
		seen[u.Token] = true
		if got, err := st.Lookup(context.Background(), u.Token); err != nil || got != u {
			t.Fatalf("issuance %d: stored %+v, %v", i, got, err)
		}
	}
	if st.lookups != 2+n || st.ingests != 2 || st.vertices() != n { // 2 batch lookups, then the n checks above
		t.Fatalf("%d lookups, %d ingests, %d vertices: want 2 batches for %d issuances", st.lookups-n, st.ingests, st.vertices(), n)
	}
}

// Persist down: every caller of the batch gets the error, none a short URL.
func TestCoalescedIssuanceStoreDown(t *testing.T) {
	st := newGraphStore()
	st.down = true
	is := coalescingIssuer(t, st)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := is.ShortenFor(context.Background(), fmt.Sprintf("https://example.com/%d", i), "")
			if !errors.Is(err, shorturl.ErrUnavailable) || u != (shorturl.ShortURL{}) {
				t.Errorf("issuance %d: %+v, %v; want ErrUnavailable and nothing", i, u, err)
			}
		}()
	}
	wg.Wait()
	if st.vertices() != 0 {
		t.Fatalf("%d vertices written with Persist down", st.vertices())
	}
}

// A target the rules refuse is answered at once, without touching the store; a
// drawn token that collides is drawn again inside the batch.
func TestCoalescedIssuanceRulesAndCollisions(t *testing.T) {
	st := newGraphStore()
	is := coalescingIssuer(t, st)
	if _, err := is.ShortenFor(context.Background(), "javascript:alert(1)", ""); !errors.Is(err, shorturl.ErrInvalidTarget) {
		t.Fatalf("javascript: target: %v", err)
	}
	if st.lookups != 0 {
		t.Fatalf("a refused target cost %d lookups", st.lookups)
	}
	st.forceCollides = 2
	u, err := is.ShortenFor(context.Background(), "https://example.com/x", "")
	if err != nil || st.lookups != 3 || st.ingests != 1 || st.vertices() != 1 {
		t.Fatalf("%+v, %v after %d lookups and %d ingests; want 3 draws, 1 ingest", u, err, st.lookups, st.ingests)
	}
}

// A caller that gives up gets its context's error; the coalescer goes on.
func TestCoalescedIssuanceCallerGivesUp(t *testing.T) {
	st := newGraphStore()
	g := &gatedStore{graphStore: st, entered: make(chan struct{}), release: make(chan struct{})}
	is := coalescingIssuer(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := is.ShortenFor(ctx, "https://example.com/gone", "")
		done <- err
	}()
	<-g.entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	close(g.release)
	if _, err := is.ShortenFor(context.Background(), "https://example.com/next", ""); err != nil {
		t.Fatalf("the next issuance: %v", err)
	}
}

// panickyStore panics in its first LookupMany.
type panickyStore struct {
	*graphStore
	once sync.Once
}

func (p *panickyStore) LookupMany(ctx context.Context, toks []shorturl.Token) ([]shorturl.ShortURL, error) {
	p.once.Do(func() { panic("store bug") })
	return p.graphStore.LookupMany(ctx, toks)
}

// A panic inside a batch answers that batch with an error and leaves the coalescer
// serving the next ones.
func TestCoalescedIssuanceSurvivesAPanic(t *testing.T) {
	is := coalescingIssuer(t, &panickyStore{graphStore: newGraphStore()})
	if _, err := is.ShortenFor(context.Background(), "https://example.com/a", ""); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("the batch that panicked: %v", err)
	}
	if _, err := is.ShortenFor(context.Background(), "https://example.com/b", ""); err != nil {
		t.Fatalf("the next batch: %v", err)
	}
}

// A caller that gives up while its target waits for a batch, or while its batch's
// lookup runs, has nothing written: it was answered with a failure, and its retry
// (without an idempotency key) would get a second short URL for the same target.
func TestCoalescedCallerThatGaveUpHasNothingWritten(t *testing.T) {
	for _, during := range []string{"queued behind a batch", "its batch's lookup"} {
		t.Run(during, func(t *testing.T) {
			st := newGraphStore()
			g := &gatedStore{graphStore: st, entered: make(chan struct{}), release: make(chan struct{})}
			is := coalescingIssuer(t, g)
			ctx, cancel := context.WithCancel(context.Background())
			gaveUp := make(chan error, 1)
			first := make(chan error, 1)
			if during == "queued behind a batch" {
				go func() { _, err := is.ShortenFor(context.Background(), "https://example.com/first", ""); first <- err }()
				<-g.entered
				go func() { _, err := is.ShortenFor(ctx, "https://example.com/gave-up", ""); gaveUp <- err }()
				for shorturl.QueuedIssues(is) == 0 {
					time.Sleep(time.Millisecond)
				}
			} else {
				first <- nil
				go func() { _, err := is.ShortenFor(ctx, "https://example.com/gave-up", ""); gaveUp <- err }()
				<-g.entered
			}
			cancel()
			if err := <-gaveUp; !errors.Is(err, context.Canceled) {
				t.Fatalf("the caller that gave up: %v", err)
			}
			close(g.release)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			// The coalescer takes batches in order: once a later caller is answered,
			// the one that gave up was dealt with.
			if _, err := is.ShortenFor(context.Background(), "https://example.com/later", ""); err != nil {
				t.Fatal(err)
			}
			want := 2
			if during != "queued behind a batch" {
				want = 1
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			for _, us := range st.v {
				for _, u := range us {
					if u.Target == "https://example.com/gave-up" {
						t.Errorf("the short URL of a caller that gave up was written: %s", u.Token)
					}
				}
			}
			if len(st.v) != want {
				t.Errorf("%d short URLs stored, want %d", len(st.v), want)
			}
		})
	}
}
