package shorturl_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// graphStore is a fake Persist: identity-hashed, so a token may hold several
// vertices (one per distinct target), and it counts calls as Persist would see them.
type graphStore struct {
	mu            sync.Mutex
	v             map[shorturl.Token][]shorturl.ShortURL
	lookups       int
	ingests       int
	down          bool
	forceCollides int // LookupMany reports this many random tokens as taken
	// missWait holds a lookup that found nothing this long before it answers, as a
	// Persist round trip would: it opens the window in which two issuances of one
	// token, not serialised, would both find it free and both write.
	missWait time.Duration
	// lostAnswers makes this many ingests commit, then fail as an answer that timed
	// out or was lost would (the write is stored all the same).
	lostAnswers int
}

// missed waits missWait, outside the lock, when a lookup found nothing.
func (s *graphStore) missed(found int) {
	if found == 0 && s.missWait > 0 {
		time.Sleep(s.missWait)
	}
}

func newGraphStore() *graphStore { return &graphStore{v: map[shorturl.Token][]shorturl.ShortURL{}} }

var errDown = fmt.Errorf("dial tcp: connection refused: %w", shorturl.ErrUnavailable)

func (s *graphStore) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	s.mu.Lock()
	s.lookups++
	down, us := s.down, s.v[tok]
	s.mu.Unlock()
	if down {
		return shorturl.ShortURL{}, errDown
	}
	s.missed(len(us))
	switch {
	case len(us) == 0:
		return shorturl.ShortURL{}, shorturl.ErrNotFound
	case len(us) > 1:
		return shorturl.ShortURL{}, fmt.Errorf("%w: %w", shorturl.ErrNotFound, shorturl.ErrInvalidStored)
	}
	return us[0], nil
}

func (s *graphStore) Save(ctx context.Context, u shorturl.ShortURL) error {
	return s.SaveMany(ctx, []shorturl.ShortURL{u})
}

func (s *graphStore) LookupMany(_ context.Context, toks []shorturl.Token) ([]shorturl.ShortURL, error) {
	s.mu.Lock()
	s.lookups++
	if s.down {
		s.mu.Unlock()
		return nil, errDown
	}
	var out []shorturl.ShortURL
	for _, t := range toks {
		out = append(out, s.v[t]...)
		if s.forceCollides > 0 && len(s.v[t]) == 0 {
			s.forceCollides--
			out = append(out, shorturl.ShortURL{Token: t, Target: "https://taken.example/"})
		}
	}
	s.mu.Unlock()
	s.missed(len(out))
	return out, nil
}

func (s *graphStore) SaveMany(_ context.Context, us []shorturl.ShortURL) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errDown
	}
	s.ingests++
	for _, u := range us {
		dup := false
		for _, have := range s.v[u.Token] {
			dup = dup || have == u
		}
		if !dup {
			s.v[u.Token] = append(s.v[u.Token], u)
		}
	}
	if s.lostAnswers > 0 {
		s.lostAnswers--
		return fmt.Errorf("ingest: context deadline exceeded: %w", shorturl.ErrUnavailable)
	}
	return nil
}

func (s *graphStore) vertices() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, us := range s.v {
		n += len(us)
	}
	return n
}

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// batchIssuer is an Issuer over st as its store and batch store, configured further
// by with.
func batchIssuer(t *testing.T, st interface {
	shorturl.Store
	shorturl.BatchStore
}, with func(*shorturl.IssuerConfig)) *shorturl.Issuer {
	t.Helper()
	c := shorturl.IssuerConfig{Store: st, Batch: st, ResolverBaseURL: "https://s.example.com/", Rand: rand.Reader, MaxDraws: 3}
	with(&c)
	is, err := shorturl.NewIssuer(c)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func idemIssuer(t *testing.T, st *graphStore) *shorturl.Issuer {
	return batchIssuer(t, st, func(c *shorturl.IssuerConfig) { c.IdempotencySecret = testSecret })
}

// TestDeriveTokenVector pins the derivation docs/api.md's "Idempotent issuance" documents,
// so that another implementation can check itself against the same figures.
func TestDeriveTokenVector(t *testing.T) {
	for _, tc := range []struct{ caller, key, want string }{
		{"LNKEXAMPLEACCESSKEY1", "order-4711", "1T58zgGRVZ"},
		{"arn:aws:iam::123456789012:user/producer", "order-4711", "BzOalmY8pZ"},
		{"LNKEXAMPLEACCESSKEY1", "batch-7#0", "2I3c1eStTD"},
	} {
		if got := shorturl.DeriveToken(testSecret, tc.caller, tc.key); string(got) != tc.want {
			t.Errorf("DeriveToken(%q, %q) = %s, want %s", tc.caller, tc.key, got, tc.want)
		}
	}
}

// TestDeriveTokenStreamExtends: a secret whose first block rejects many bytes still
// yields 10 base62 characters, and the stream past 32 bytes is counter mode.
func TestDeriveTokenStreamExtends(t *testing.T) {
	seen := map[shorturl.Token]bool{}
	for i := range 2000 {
		tok := shorturl.DeriveToken(testSecret, "c", fmt.Sprint(i))
		if !shorturl.IsToken(string(tok)) || seen[tok] {
			t.Fatalf("key %d: token %q invalid or repeated", i, tok)
		}
		seen[tok] = true
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"a": true, "order 4711 ~!": true, strings.Repeat("k", 255): true,
		"": false, strings.Repeat("k", 256): false, "tab\there": false, "é": false, "nul\x00": false, "del\x7f": false,
		// API Gateway joins a repeated header's values with commas.
		"order,4711": false, ",": false,
		// SigV4 signs "a  b" as "a b": another key under the same signature.
		"order  4711": false, " order": false, "order ": false, " ": false,
	} {
		if err := shorturl.CheckIdempotencyKey(key); (err == nil) != ok || (err != nil && !errors.Is(err, shorturl.ErrIdempotencyKeyInvalid)) {
			t.Errorf("CheckIdempotencyKey(%q) = %v, want ok=%t", key, err, ok)
		}
	}
}

func TestShortenIdempotent(t *testing.T) {
	ctx := context.Background()
	st := newGraphStore()
	is := idemIssuer(t, st)
	id := shorturl.Idempotent{Caller: "LNKEXAMPLEACCESSKEY1", Key: "order-4711"}
	u, replayed, err := is.ShortenIdempotent(ctx, "https://example.com/a", "", id)
	if err != nil || replayed || u.Token != shorturl.DeriveToken(testSecret, id.Caller, id.Key) {
		t.Fatalf("first: %+v %t %v", u, replayed, err)
	}
	again, replayed, err := is.ShortenIdempotent(ctx, "https://example.com/a", "", id)
	if err != nil || !replayed || again != u {
		t.Fatalf("retry: %+v %t %v", again, replayed, err)
	}
	if _, _, err := is.ShortenIdempotent(ctx, "https://example.com/b", "", id); !errors.Is(err, shorturl.ErrIdempotencyKeyReused) {
		t.Fatalf("other target: %v", err)
	}
	other, _, err := is.ShortenIdempotent(ctx, "https://example.com/a", "", shorturl.Idempotent{Caller: "LNKOTHERACCESSKEY01", Key: id.Key})
	if err != nil || other.Token == u.Token {
		t.Fatalf("another caller with the same key: %+v %v", other, err)
	}
	if n := st.vertices(); n != 2 {
		t.Errorf("vertices = %d, want 2", n)
	}
	// Refused before the store is touched: a bad key, a bad target.
	before := st.lookups
	if _, _, err := is.ShortenIdempotent(ctx, "https://example.com/a", "", shorturl.Idempotent{Caller: "c", Key: ""}); !errors.Is(err, shorturl.ErrIdempotencyKeyInvalid) {
		t.Errorf("empty key: %v", err)
	}
	if _, _, err := is.ShortenIdempotent(ctx, "ftp://example.com/a", "", id); !errors.Is(err, shorturl.ErrInvalidTarget) {
		t.Errorf("bad target: %v", err)
	}
	if st.lookups != before {
		t.Errorf("refused requests touched the store")
	}
	noSecret := newIssuer(t, st)
	if _, _, err := noSecret.ShortenIdempotent(ctx, "https://example.com/a", "", id); !errors.Is(err, shorturl.ErrIdempotencyUnavailable) {
		t.Errorf("without a secret: %v", err)
	}
}

// TestShortenIdempotentRace: concurrent first requests with one key and different
// targets write one vertex; the others are replays or 422, never a second target.
// The store's lookups take a while to find nothing, as Persist's would, so that
// requests not serialised would all find the token free.
func TestShortenIdempotentRace(t *testing.T) {
	st := newGraphStore()
	st.missWait = 20 * time.Millisecond
	is := idemIssuer(t, st)
	id := shorturl.Idempotent{Caller: "LNKEXAMPLEACCESSKEY1", Key: "race"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, replayed, err := is.ShortenIdempotent(context.Background(), fmt.Sprintf("https://example.com/%d", i%2), "", id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && !replayed:
				created++
			case err != nil && !errors.Is(err, shorturl.ErrIdempotencyKeyReused):
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	if created != 1 || st.vertices() != 1 {
		t.Fatalf("created %d, vertices %d; want 1 and 1", created, st.vertices())
	}
}

// TestShortenBatchIdempotentRace: two batches with one key at once, their first
// item's target differing, write each derived token once.
func TestShortenBatchIdempotentRace(t *testing.T) {
	st := newGraphStore()
	st.missWait = 20 * time.Millisecond
	is := idemIssuer(t, st)
	id := &shorturl.Idempotent{Caller: "LNKEXAMPLEACCESSKEY1", Key: "batch-race"}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			items := []shorturl.BatchItem{{Target: fmt.Sprintf("https://example.com/first-%d", i)}, {Target: "https://example.com/same"}}
			res, err := is.ShortenBatch(context.Background(), items, "", id)
			if err != nil {
				t.Error(err)
				return
			}
			for j, r := range res {
				if r.Err != nil && !errors.Is(r.Err, shorturl.ErrIdempotencyKeyReused) {
					t.Errorf("batch %d item %d: %v", i, j, r.Err)
				}
			}
		})
	}
	wg.Wait()
	if n := st.vertices(); n != 2 {
		t.Fatalf("%d vertices for 2 derived tokens", n)
	}
}

// TestShortenIdempotentOnATokenWithTwoTargets: two Lambda instances racing on one
// key can leave its token with two targets; every later request with the key is
// refused, and nothing more is written.
func TestShortenIdempotentOnATokenWithTwoTargets(t *testing.T) {
	st := newGraphStore()
	is := idemIssuer(t, st)
	id := shorturl.Idempotent{Caller: "LNKEXAMPLEACCESSKEY1", Key: "raced"}
	tok := shorturl.DeriveToken(testSecret, id.Caller, id.Key)
	st.v[tok] = []shorturl.ShortURL{{Token: tok, Target: "https://example.com/a"}, {Token: tok, Target: "https://example.com/b"}}
	for _, target := range []string{"https://example.com/a", "https://example.com/c"} {
		if _, _, err := is.ShortenIdempotent(context.Background(), target, "", id); !errors.Is(err, shorturl.ErrIdempotencyKeyReused) {
			t.Errorf("%s: %v, want ErrIdempotencyKeyReused", target, err)
		}
	}
	if n := st.vertices(); n != 2 || st.ingests != 0 {
		t.Fatalf("%d vertices, %d ingests; want the 2 there were and none", n, st.ingests)
	}
}

func TestShortenBatch(t *testing.T) {
	ctx := context.Background()
	st := newGraphStore()
	is := idemIssuer(t, st)
	items := []shorturl.BatchItem{
		{Target: "https://example.com/0"},
		{Target: "ftp://example.com/1"},
		{Err: errors.New("unknown member")},
		{Target: "https://s.example.com/loop"},
		{Target: "https://example.com/4"},
	}
	res, err := is.ShortenBatch(ctx, items, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.lookups != 1 || st.ingests != 1 || st.vertices() != 2 {
		t.Fatalf("lookups %d ingests %d vertices %d; want 1 1 2", st.lookups, st.ingests, st.vertices())
	}
	for i, r := range res {
		failed := i == 1 || i == 2 || i == 3
		if (r.Err != nil) != failed || (!failed && (r.URL.Target != items[i].Target || r.Replayed)) {
			t.Errorf("item %d: %+v", i, r)
		}
	}
	if !errors.Is(res[1].Err, shorturl.ErrInvalidTarget) || !errors.Is(res[3].Err, shorturl.ErrInvalidTarget) {
		t.Errorf("rule errors: %v, %v", res[1].Err, res[3].Err)
	}
}

func TestShortenBatchRedrawsCollisions(t *testing.T) {
	st := newGraphStore()
	st.forceCollides = 2
	is := idemIssuer(t, st)
	res, err := is.ShortenBatch(context.Background(), []shorturl.BatchItem{{Target: "https://example.com/0"}, {Target: "https://example.com/1"}, {Target: "https://example.com/2"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Errorf("item %d: %v", i, r.Err)
		}
	}
	if st.lookups != 2 || st.ingests != 1 || st.vertices() != 3 {
		t.Fatalf("lookups %d ingests %d vertices %d; want 2 1 3", st.lookups, st.ingests, st.vertices())
	}
}

func TestShortenBatchIdempotent(t *testing.T) {
	ctx := context.Background()
	st := newGraphStore()
	is := idemIssuer(t, st)
	id := &shorturl.Idempotent{Caller: "LNKEXAMPLEACCESSKEY1", Key: "batch-7"}
	items := []shorturl.BatchItem{{Target: "https://example.com/0"}, {Target: "https://example.com/1"}}
	first, err := is.ShortenBatch(ctx, items, "", id)
	if err != nil {
		t.Fatal(err)
	}
	if first[0].URL.Token != shorturl.DeriveToken(testSecret, id.Caller, "batch-7#0") {
		t.Errorf("item 0 token %s is not derived from key batch-7#0", first[0].URL.Token)
	}
	ingests := st.ingests
	again, err := is.ShortenBatch(ctx, items, "", id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if !again[i].Replayed || again[i].URL != first[i].URL {
			t.Errorf("item %d: retry %+v, first %+v", i, again[i], first[i])
		}
	}
	if st.ingests != ingests {
		t.Errorf("a retried batch ingested again")
	}
	// Same key, item 1 now has another target: it alone is refused.
	items[1].Target = "https://example.com/other"
	third, err := is.ShortenBatch(ctx, items, "", id)
	if err != nil || !third[0].Replayed || !errors.Is(third[1].Err, shorturl.ErrIdempotencyKeyReused) {
		t.Fatalf("reused key: %+v %v", third, err)
	}
	if st.vertices() != 2 {
		t.Errorf("vertices = %d, want 2", st.vertices())
	}
}

func TestShortenBatchStoreDown(t *testing.T) {
	st := newGraphStore()
	st.down = true
	is := idemIssuer(t, st)
	res, err := is.ShortenBatch(context.Background(), []shorturl.BatchItem{{Target: "https://example.com/0"}}, "", nil)
	if !errors.Is(err, shorturl.ErrUnavailable) || res != nil {
		t.Fatalf("res %+v err %v; want no results and ErrUnavailable", res, err)
	}
}
