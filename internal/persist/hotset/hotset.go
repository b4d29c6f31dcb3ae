// Package hotset is the resolver's in-process cache of short URLs. A short_url vertex
// never changes — its properties are its identity — so a found short URL can be kept
// without invalidation; only positive answers are cached, so a token issued a moment
// ago elsewhere is found as soon as Persist has it.
package hotset

import (
	"context"
	"hash/maphash"
	"sync"

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

// Lookup answers from memory when it can and asks the next store otherwise.
func (s *Store) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	sh := s.shard(tok)
	sh.mu.RLock()
	u, ok := sh.m[tok]
	sh.mu.RUnlock()
	if ok {
		return u, nil
	}
	u, err := s.next.Lookup(ctx, tok)
	if err != nil {
		return shorturl.ShortURL{}, err
	}
	s.put(sh, u)
	return u, nil
}

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
