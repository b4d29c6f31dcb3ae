package capacity

import (
	"fmt"
	"math/rand/v2"
)

// Policy is how a simulated hot set evicts.
type Policy string

const (
	// LRU evicts the least recently used entry.
	LRU Policy = "lru"
	// Random evicts an arbitrary entry, as internal/persist/hotset does (per shard, by Go's
	// randomised map order).
	Random Policy = "random"
)

// SimConfig is one hot-set simulation: Requests requests whose tokens are Zipf(S) over
// Links links (S = 0: uniform), each sent to one of Instances warm instances at random
// (as Lambda routes to any idle environment), each with its own cache of CacheSize.
type SimConfig struct {
	Links     int64
	S         float64
	CacheSize int
	Instances int
	Requests  int
	Policy    Policy
	Seed      uint64
}

// SimResult is what a simulation saw. Hit rate is counted over the second half of the
// requests, after the caches warmed up in the first half.
type SimResult struct {
	Instances int     `json:"simulated_instances"`
	Requests  int     `json:"simulated_requests"`
	HitRate   float64 `json:"hit_rate"`
}

// Simulate runs cfg. It is deterministic for a given cfg.
func Simulate(cfg SimConfig) (SimResult, error) {
	if cfg.Links < 1 || cfg.CacheSize < 1 || cfg.Instances < 1 || cfg.Requests < 2 || cfg.S < 0 {
		return SimResult{}, fmt.Errorf("simulate: need links, cache size, instances ≥ 1, requests ≥ 2 and s ≥ 0: %+v", cfg)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6c696e6f6f6e65))
	draw := func() int64 { return 1 + rng.Int64N(cfg.Links) }
	if cfg.S > 0 {
		z, err := NewZipf(rng, cfg.S, cfg.Links)
		if err != nil {
			return SimResult{}, err
		}
		draw = z.Rank
	}
	size := int(min(int64(cfg.CacheSize), cfg.Links))
	caches := make([]cache, cfg.Instances)
	for i := range caches {
		caches[i] = newCache(cfg.Policy, size, rng)
	}
	hits, counted := 0, 0
	for i := range cfg.Requests {
		c := caches[rng.IntN(cfg.Instances)]
		hit := c.access(draw())
		if i >= cfg.Requests/2 {
			counted++
			if hit {
				hits++
			}
		}
	}
	return SimResult{Instances: cfg.Instances, Requests: cfg.Requests, HitRate: float64(hits) / float64(counted)}, nil
}

// cache is one instance's hot set; access reports a hit and inserts on a miss.
type cache interface{ access(key int64) bool }

func newCache(p Policy, size int, rng *rand.Rand) cache {
	if p == Random {
		return &randomCache{size: size, idx: map[int64]int{}, rng: rng}
	}
	return &lruCache{size: size, idx: map[int64]int32{}, head: -1, tail: -1}
}

// lruCache is an LRU over a slice-backed doubly linked list (no allocation per access).
type lruCache struct {
	size       int
	idx        map[int64]int32
	keys       []int64
	prev, next []int32
	head, tail int32 // most and least recently used
}

func (c *lruCache) access(key int64) bool {
	if i, ok := c.idx[key]; ok {
		c.unlink(i)
		c.pushFront(i)
		return true
	}
	var i int32
	if len(c.keys) < c.size {
		i = int32(len(c.keys))
		c.keys, c.prev, c.next = append(c.keys, key), append(c.prev, -1), append(c.next, -1)
	} else {
		i = c.tail
		c.unlink(i)
		delete(c.idx, c.keys[i])
		c.keys[i] = key
	}
	c.idx[key] = i
	c.pushFront(i)
	return false
}

func (c *lruCache) unlink(i int32) {
	p, n := c.prev[i], c.next[i]
	if p >= 0 {
		c.next[p] = n
	} else {
		c.head = n
	}
	if n >= 0 {
		c.prev[n] = p
	} else {
		c.tail = p
	}
}

func (c *lruCache) pushFront(i int32) {
	c.prev[i], c.next[i] = -1, c.head
	if c.head >= 0 {
		c.prev[c.head] = i
	}
	c.head = i
	if c.tail < 0 {
		c.tail = i
	}
}

// randomCache evicts a uniformly chosen entry.
type randomCache struct {
	size int
	idx  map[int64]int
	keys []int64
	rng  *rand.Rand
}

func (c *randomCache) access(key int64) bool {
	if _, ok := c.idx[key]; ok {
		return true
	}
	if len(c.keys) < c.size {
		c.idx[key] = len(c.keys)
		c.keys = append(c.keys, key)
		return false
	}
	i := c.rng.IntN(len(c.keys))
	delete(c.idx, c.keys[i])
	c.keys[i] = key
	c.idx[key] = i
	return false
}
