// Package hotset is the resolver's in-process cache of short URLs. A short_url vertex
// never changes — its properties are its identity — so a found short URL can be kept
// without invalidation; only positive answers are cached, so a token issued a moment
// ago elsewhere is found as soon as Persist has it.
//
// The store counts its lookups answered from memory (hits) and passed on (misses):
// the hit rate is what the capacity model predicts and the dashboard shows.
package hotset

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/linoone/linoone/internal/core/shorturl"
)

const shards = 64

// Store is a shorturl.Store that remembers up to a bounded number of found short URLs.
type Store struct {
	next     shorturl.Store
	seed     maphash.Seed
	used     uint64 // shards in use: fewer than 64 for a size under 64
	perShard int
	shards   [shards]shard
}

type shard struct {
	mu sync.RWMutex
	m  map[shorturl.Token]shorturl.ShortURL
	// Counted per shard, 64 bytes away from any lock so on a cache line of their
	// own: one global pair would be a line every core's redirect writes, and beside
	// a lock a third write to the line every lookup of the shard contends on.
	_            [64]byte
	hits, misses atomic.Int64
	_            [64]byte
}

var _ shorturl.Store = (*Store)(nil)

// New caches up to size short URLs in front of next. size must be positive.
func New(next shorturl.Store, size int) *Store {
	used := min(shards, max(size, 1))
	s := &Store{next: next, seed: maphash.MakeSeed(), used: uint64(used), perShard: max(1, size/used)}
	for i := range s.shards {
		s.shards[i].m = make(map[shorturl.Token]shorturl.ShortURL)
	}
	return s
}

func (s *Store) shard(tok shorturl.Token) *shard {
	return &s.shards[maphash.String(s.seed, string(tok))%s.used]
}

// Lookup answers from memory when it can and asks the next store otherwise, and
// counts which of the two it did: one atomic add on the shard, no allocation on the
// redirect path.
func (s *Store) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	sh := s.shard(tok)
	sh.mu.RLock() // the read of get, written out: get is past the inliner's budget
	u, ok := sh.m[tok]
	sh.mu.RUnlock()
	if ok {
		sh.hits.Add(1)
		return u, nil
	}
	sh.misses.Add(1)
	return s.fetch(ctx, sh, tok)
}

func (sh *shard) get(tok shorturl.Token) (shorturl.ShortURL, bool) {
	sh.mu.RLock()
	u, ok := sh.m[tok]
	sh.mu.RUnlock()
	return u, ok
}

// fetch asks the next store and remembers what it found.
func (s *Store) fetch(ctx context.Context, sh *shard, tok shorturl.Token) (shorturl.ShortURL, error) {
	u, err := s.next.Lookup(ctx, tok)
	if err != nil {
		return shorturl.ShortURL{}, err
	}
	s.put(sh, u)
	return u, nil
}

// Hits is the number of lookups answered from memory since the store was created.
func (s *Store) Hits() int64 {
	n := int64(0)
	for i := range s.shards {
		n += s.shards[i].hits.Load()
	}
	return n
}

// Misses is the number of lookups passed on to the next store since the store was
// created, failed ones included.
func (s *Store) Misses() int64 {
	n := int64(0)
	for i := range s.shards {
		n += s.shards[i].misses.Load()
	}
	return n
}

// Uncounted is the same cache for a caller whose lookups are not redirects (an
// issuer in the same process): its lookups of fresh tokens would count as misses and
// pull the hit rate below what visitors see. Its Save still fills the cache.
func (s *Store) Uncounted() shorturl.Store { return uncounted{s} }

type uncounted struct{ s *Store }

func (u uncounted) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	sh := u.s.shard(tok)
	if v, ok := sh.get(tok); ok {
		return v, nil
	}
	return u.s.fetch(ctx, sh, tok)
}

func (u uncounted) Save(ctx context.Context, su shorturl.ShortURL) error { return u.s.Save(ctx, su) }

// Save writes through to the next store and remembers what it acknowledged.
func (s *Store) Save(ctx context.Context, u shorturl.ShortURL) error {
	if err := s.next.Save(ctx, u); err != nil {
		return err
	}
	s.put(s.shard(u.Token), u)
	return nil
}

func (s *Store) put(sh *shard, u shorturl.ShortURL) {
	sh.mu.Lock()
	if len(sh.m) >= s.perShard {
		for k := range sh.m { // evict an arbitrary entry: map order is randomised
			delete(sh.m, k)
			break
		}
	}
	sh.m[u.Token] = u
	sh.mu.Unlock()
}

// Len is the number of cached short URLs.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		s.shards[i].mu.RLock()
		n += len(s.shards[i].m)
		s.shards[i].mu.RUnlock()
	}
	return n
}
