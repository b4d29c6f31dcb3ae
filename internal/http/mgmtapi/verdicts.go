package mgmtapi

import "sync"

// verdictCacheSize bounds a verdictCache: when full it forgets everything and refills.
const verdictCacheSize = 10_000

// verdictCache remembers a read-time classifier's verdicts on User-Agents
// (crawlerdetect's preview list, the browser/OS/device parser): the same few
// User-Agents come back in every stats answer, and each verdict costs a match of a
// long list. Bounded by verdictCacheSize.
type verdictCache[V any] struct {
	mu    sync.Mutex
	seen  map[string]V
	judge func(userAgent string) V
}

func newVerdictCache[V any](judge func(string) V) *verdictCache[V] {
	return &verdictCache[V]{seen: map[string]V{}, judge: judge}
}

func (c *verdictCache[V]) of(userAgent string) V {
	c.mu.Lock()
	v, ok := c.seen[userAgent]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = c.judge(userAgent)
	c.mu.Lock()
	if len(c.seen) >= verdictCacheSize {
		clear(c.seen)
	}
	c.seen[userAgent] = v
	c.mu.Unlock()
	return v
}
