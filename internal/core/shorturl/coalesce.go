package shorturl

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// coalescer turns the single issuances that wait at the same moment into one batch:
// one LookupMany for all their tokens and one SaveMany for all their short URLs,
// where each alone would pay a Persist lookup and an ingest (two signed HTTP round
// trips and a commit). Each caller still gets its own answer, and only after the
// ingest that holds its short URL was acknowledged: a 201 still means the link is
// in Persist. One batch is in flight at a time; what arrives meanwhile forms the
// next, as the local Persist's writer groups its commits.
type coalescer struct {
	is   *Issuer
	mu   sync.Mutex
	wait []*pendingIssue
	kick chan struct{}
}

// pendingIssue is one ShortenFor whose target passed the rules, waiting for a token.
type pendingIssue struct {
	ctx    context.Context // the caller's: once it is done, nothing is written for it
	target string
	done   chan BatchResult // buffered: the coalescer never blocks on a caller gone
}

func newCoalescer(is *Issuer) *coalescer {
	c := &coalescer{is: is, kick: make(chan struct{}, 1)}
	go c.run()
	return c
}

// issue queues target and waits for its short URL, or for ctx. A caller that gives
// up while its target waits for a batch, or for its batch's lookup, has nothing
// written; once its batch's ingest is sent, the short URL may still be written, as a
// caller of an ingest cut short may find.
func (c *coalescer) issue(ctx context.Context, target string) (ShortURL, error) {
	p := &pendingIssue{ctx: ctx, target: target, done: make(chan BatchResult, 1)}
	c.mu.Lock()
	c.wait = append(c.wait, p)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	select {
	case r := <-p.done:
		return r.URL, r.Err
	case <-ctx.Done():
		return ShortURL{}, fmt.Errorf("issue a short url: %w", ctx.Err())
	}
}

// run issues what waits, a batch at a time. It lives as long as the process: an
// Issuer has no Close, and an idle coalescer is one parked goroutine.
func (c *coalescer) run() {
	for range c.kick {
		// The first caller's kick made this goroutine runnable; yield once so that,
		// on one P, the requests already runnable queue their targets too.
		runtime.Gosched()
		for {
			c.mu.Lock()
			n := min(len(c.wait), MaxBatchItems)
			batch := c.wait[:n:n]
			c.wait = c.wait[n:]
			if len(c.wait) == 0 {
				c.wait = nil
			}
			c.mu.Unlock()
			if n == 0 {
				break
			}
			c.issueBatch(batch)
		}
	}
}

// issueBatch draws the batch's tokens, checks them in one lookup, writes the short
// URLs in one ingest and answers every caller. A store error fails them all, with
// nothing reported as created.
func (c *coalescer) issueBatch(batch []*pendingIssue) {
	answered := 0
	defer func() {
		// A panic here would otherwise kill the one goroutine every later issuance
		// waits on; its batch is answered with the failure instead.
		if r := recover(); r != nil {
			for _, p := range batch[answered:] {
				p.done <- BatchResult{Err: fmt.Errorf("issue a short url: internal error: %v", r)}
			}
		}
	}()
	ctx := context.Background() // the store's own timeouts bound each call
	todo := make([]batchEntry, 0, len(batch))
	results := make([]BatchResult, len(batch))
	for i, p := range batch {
		if gone(p, &results[i]) {
			continue
		}
		todo = append(todo, batchEntry{i: i, target: p.target})
	}
	write, err := c.is.assignTokens(ctx, todo, results)
	if err == nil {
		// The lookup may have taken seconds (Persist slow, a batch before queued):
		// a retry without an idempotency key would get another short URL for a link
		// written for a caller already answered with a failure.
		write = slices.DeleteFunc(write, func(e batchEntry) bool { return gone(batch[e.i], &results[e.i]) })
		err = c.is.saveBatch(ctx, write, results)
	}
	for i, p := range batch {
		if err != nil && results[i].Err == nil {
			results[i] = BatchResult{Err: err}
		}
		p.done <- results[i]
		answered++
	}
}

// gone reports whether p's caller gave up, and sets its result to why.
func gone(p *pendingIssue, r *BatchResult) bool {
	if err := p.ctx.Err(); err != nil {
		*r = BatchResult{Err: fmt.Errorf("issue a short url: %w", err)}
		return true
	}
	return false
}
