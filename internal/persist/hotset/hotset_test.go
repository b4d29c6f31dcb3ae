package hotset

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
