package hotset

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linoone/linoone/internal/core/shorturl"
)

type countingStore struct {
	mu      sync.Mutex
	m       map[shorturl.Token]shorturl.ShortURL
	lookups int
	fail    error
}

func (c *countingStore) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookups++
	if c.fail != nil {
		return shorturl.ShortURL{}, c.fail
	}
	u, ok := c.m[tok]
	if !ok {
		return shorturl.ShortURL{}, shorturl.ErrNotFound
	}
	return u, nil
}

func (c *countingStore) Save(_ context.Context, u shorturl.ShortURL) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return c.fail
	}
	c.m[u.Token] = u
	return nil
}

func TestCachesFoundOnly(t *testing.T) {
	ctx := context.Background()
	back := &countingStore{m: map[shorturl.Token]shorturl.ShortURL{}}
	u := shorturl.ShortURL{Token: "AAAAAAAAAA", Path: "http://s/AAAAAAAAAA", Target: "https://example.com/"}
	back.m[u.Token] = u
	s := New(back, 1000)
	for range 3 {
		got, err := s.Lookup(ctx, u.Token)
		if err != nil || got != u {
			t.Fatalf("Lookup = %v, %v", got, err)
		}
	}
	if back.lookups != 1 {
		t.Errorf("backend lookups = %d, want 1", back.lookups)
	}
	for range 2 {
		if _, err := s.Lookup(ctx, "BBBBBBBBBB"); !errors.Is(err, shorturl.ErrNotFound) {
			t.Fatalf("unknown: err = %v", err)
		}
	}
	if back.lookups != 3 {
		t.Errorf("backend lookups = %d, want 3: a miss must not be cached", back.lookups)
	}
	back.m["BBBBBBBBBB"] = shorturl.ShortURL{Token: "BBBBBBBBBB", Target: "https://b.example/"}
	if got, err := s.Lookup(ctx, "BBBBBBBBBB"); err != nil || got.Target != "https://b.example/" {
		t.Errorf("token issued after a miss: %v, %v", got, err)
	}
}

func TestSaveWritesThrough(t *testing.T) {
	ctx := context.Background()
	back := &countingStore{m: map[shorturl.Token]shorturl.ShortURL{}}
	s := New(back, 10)
	u := shorturl.ShortURL{Token: "CCCCCCCCCC", Target: "https://c.example/"}
	if err := s.Save(ctx, u); err != nil {
		t.Fatal(err)
	}
	if back.m[u.Token] != u {
		t.Fatal("not written through")
	}
	back.fail = errors.New("down")
	if got, err := s.Lookup(ctx, u.Token); err != nil || got != u {
		t.Errorf("saved entry not served from memory: %v, %v", got, err)
	}
	if err := s.Save(ctx, shorturl.ShortURL{Token: "DDDDDDDDDD"}); err == nil {
		t.Error("a failed save was reported as success")
	}
	if _, err := s.Lookup(ctx, "DDDDDDDDDD"); err == nil {
		t.Error("a failed save was cached")
	}
}

func TestBounded(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int{1, 10, shards - 1, shards, shards*4 + 3} {
		back := &countingStore{m: map[shorturl.Token]shorturl.ShortURL{}}
		s := New(back, size)
		for i := range 10_000 {
			tok := shorturl.Token(fmt.Sprintf("%010d", i))
			if err := s.Save(ctx, shorturl.ShortURL{Token: tok}); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.Len(); n > size || n < size/2 {
			t.Errorf("size %d: Len = %d", size, n)
		}
	}
}

func BenchmarkLookupHit(b *testing.B) {
	back := &countingStore{m: map[shorturl.Token]shorturl.ShortURL{"AAAAAAAAAA": {Token: "AAAAAAAAAA"}}}
	s := New(back, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Lookup(ctx, "AAAAAAAAAA"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCountsHitsAndMisses: every counted lookup is a hit or a miss, failures and
// unknown tokens included; the uncounted view shares the cache and counts nothing.
func TestCountsHitsAndMisses(t *testing.T) {
	ctx := context.Background()
	u := shorturl.ShortURL{Token: "AAAAAAAAAA", Target: "https://example.com/"}
	back := &countingStore{m: map[shorturl.Token]shorturl.ShortURL{u.Token: u}}
	s := New(back, 1000)
	for range 3 { // a miss, then two hits
		if _, err := s.Lookup(ctx, u.Token); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Lookup(ctx, "BBBBBBBBBB"); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
	back.fail = errors.New("persist down")
	if _, err := s.Lookup(ctx, "CCCCCCCCCC"); err == nil {
		t.Fatal("a failing store answered")
	}
	if h, m := s.Hits(), s.Misses(); h != 2 || m != 3 {
		t.Errorf("hits %d misses %d, want 2 and 3", h, m)
	}

	back.fail = nil
	issuer := s.Uncounted()
	fresh := shorturl.ShortURL{Token: "DDDDDDDDDD", Target: "https://example.org/"}
	if err := issuer.Save(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := issuer.Lookup(ctx, "EEEEEEEEEE"); !errors.Is(err, shorturl.ErrNotFound) {
		t.Fatalf("uncounted lookup of an unknown token: %v", err)
	}
	before := back.lookups
	if got, err := s.Lookup(ctx, fresh.Token); err != nil || got != fresh || back.lookups != before {
		t.Errorf("a short URL saved through the uncounted view: Lookup = %v, %v after %d backend lookups, want a hit", got, err, back.lookups-before)
	}
	if h, m := s.Hits(), s.Misses(); h != 3 || m != 3 {
		t.Errorf("after uncounted calls: hits %d misses %d, want 3 and 3", h, m)
	}
}

// BenchmarkLookupHitSpread is BenchmarkLookupHit over 1,000 tokens, spread over the
// shards as visitors' clicks are.
func BenchmarkLookupHitSpread(b *testing.B) {
	back := &countingStore{m: map[shorturl.Token]shorturl.ShortURL{}}
	toks := make([]shorturl.Token, 1000)
	for i := range toks {
		toks[i] = shorturl.Token(fmt.Sprintf("A%09d", i))
		back.m[toks[i]] = shorturl.ShortURL{Token: toks[i]}
	}
	s := New(back, 10_000)
	ctx := context.Background()
	for _, tok := range toks {
		if _, err := s.Lookup(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(7919))
		for pb.Next() {
			i++
			if _, err := s.Lookup(ctx, toks[i%len(toks)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
