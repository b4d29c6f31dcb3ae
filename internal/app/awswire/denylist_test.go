package awswire

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// gatedFetch answers each read with the next of its answers once release lets it.
type gatedFetch struct {
	mu      sync.Mutex
	text    string
	err     error
	calls   int
	gate    chan struct{} // nil: answer at once
	started chan struct{} // receives once per read, when gate is set
}

func (g *gatedFetch) set(text string, err error) {
	g.mu.Lock()
	g.text, g.err = text, err
	g.mu.Unlock()
}

func (g *gatedFetch) count() int { g.mu.Lock(); defer g.mu.Unlock(); return g.calls }

func (g *gatedFetch) fetch(ctx context.Context) (string, error) {
	g.mu.Lock()
	g.calls++
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		g.started <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.text, g.err
}

func newTestRefresher(g *gatedFetch, c *clock, logs *syncbuf.Buffer) (*denyRefresher, *shorturl.ScreenCounters) {
	counters := &shorturl.ScreenCounters{}
	return &denyRefresher{fetch: g.fetch, holder: &denylist.Holder{}, every: time.Minute, timeout: 5 * time.Second, source: "ssm:/p/deny",
		log: slog.New(slog.NewJSONHandler(logs, nil)), counters: counters, now: c.Now, jitter: func() float64 { return 0.5 }}, counters
}

func blocked(h *denylist.Holder, target string) bool {
	_, b := h.Screen(target)
	return b
}

// TestDenyListRefreshesInTheBackground: a due read never holds the request that
// found it due; the list in force serves until the read answers, and one read runs
// at a time.
func TestDenyListRefreshesInTheBackground(t *testing.T) {
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	g := &gatedFetch{text: "*.evil.example\n"}
	var logs syncbuf.Buffer
	r, counters := newTestRefresher(g, c, &logs)
	r.read(t.Context())
	if !blocked(r.holder, "https://login.evil.example/") {
		t.Fatal("the first read's list is not in force")
	}
	r.before(t.Context()) // not due
	c.add(44 * time.Second)
	r.before(t.Context()) // still not due: the next read is due 52.5 s after (a minute less an eighth, jitter 0.5)
	if n := g.count(); n != 1 {
		t.Fatalf("%d reads before the interval, want 1", n)
	}

	c.add(9 * time.Second)
	g.set("*.worse.example\n", nil)
	g.gate, g.started = make(chan struct{}), make(chan struct{}, 4)
	start := time.Now()
	r.before(t.Context()) // due: starts the read and returns
	<-g.started
	if d := time.Since(start); d > time.Second {
		t.Errorf("before waited %v for a read that had not answered", d)
	}
	r.before(t.Context()) // a read is running: no second one
	if !blocked(r.holder, "https://login.evil.example/") || blocked(r.holder, "https://a.worse.example/") {
		t.Error("the list in force changed before the read answered")
	}
	close(g.gate)
	r.wg.Wait()
	if n := g.count(); n != 2 {
		t.Errorf("%d reads, want 2: one at start, one due", n)
	}
	if blocked(r.holder, "https://login.evil.example/") || !blocked(r.holder, "https://a.worse.example/") {
		t.Error("the read's list is not in force")
	}
	if counters.DenyListMissing.Load() != 0 || counters.DenyListStale.Load() != 0 || counters.DenyListUnreadable.Load() != 0 {
		t.Errorf("counters missing %d stale %d unreadable %d, want 0", counters.DenyListMissing.Load(), counters.DenyListStale.Load(), counters.DenyListUnreadable.Load())
	}
}

// TestDenyListFirstReadFails: an instance whose first read fails serves with nothing
// blocked, counts every request in DenyListMissing, reads again with a doubling
// backoff, and blocks once a read succeeds.
func TestDenyListFirstReadFails(t *testing.T) {
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	g := &gatedFetch{err: errors.New("ThrottlingException: Rate exceeded")}
	var logs syncbuf.Buffer
	r, counters := newTestRefresher(g, c, &logs)
	r.read(t.Context())
	if blocked(r.holder, "https://login.evil.example/") || counters.DenyListUnreadable.Load() != 1 {
		t.Fatalf("after a failed first read: unreadable %d", counters.DenyListUnreadable.Load())
	}
	if !strings.Contains(logs.String(), `"level":"ERROR","msg":"deny list unreadable: none loaded yet`) {
		t.Errorf("no ERROR saying nothing is blocked: %s", logs.String())
	}
	for i, wait := range []time.Duration{DenyRetryMin, 2 * DenyRetryMin, 4 * DenyRetryMin} {
		r.before(t.Context()) // not due: the backoff has not passed
		r.wg.Wait()
		if n := g.count(); n != i+1 {
			t.Fatalf("retry %d: %d reads before the backoff passed, want %d", i, n, i+1)
		}
		c.add(wait)
		r.before(t.Context())
		r.wg.Wait()
		if n := g.count(); n != i+2 {
			t.Fatalf("retry %d: %d reads after %v, want %d", i, n, wait, i+2)
		}
	}
	if got := counters.DenyListMissing.Load(); got != 6 {
		t.Errorf("DenyListMissing %d, want 6: every request served without a list", got)
	}
	g.set("*.evil.example\n", nil)
	c.add(8 * DenyRetryMin)
	r.before(t.Context())
	r.wg.Wait()
	if !blocked(r.holder, "https://login.evil.example/") {
		t.Fatal("the list read after the failures is not in force")
	}
	r.before(t.Context())
	if got := counters.DenyListMissing.Load(); got != 7 {
		t.Errorf("DenyListMissing %d after the list loaded, want 7 (no more)", got)
	}
}

// TestDenyListStale: a list no read could refresh for StaleAfter intervals stays in
// force, and each request under it counts in DenyListStale; the backoff never
// waits past the interval.
func TestDenyListStale(t *testing.T) {
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	g := &gatedFetch{text: "*.evil.example\n"}
	var logs syncbuf.Buffer
	r, counters := newTestRefresher(g, c, &logs)
	r.read(t.Context())
	g.set("", errors.New("AccessDeniedException"))
	for range 12 {
		c.add(r.every / 3)
		r.before(t.Context())
		r.wg.Wait()
	}
	if r.backoff != r.every {
		t.Errorf("backoff %v, want capped at the interval %v", r.backoff, r.every)
	}
	if !blocked(r.holder, "https://login.evil.example/") {
		t.Error("the last list read is no longer in force")
	}
	// A request every 20 s for 4 minutes: those at 200, 220 and 240 s are past 3 minutes.
	if got := counters.DenyListStale.Load(); got != 3 {
		t.Errorf("DenyListStale %d, want 3: the requests past %d intervals", got, StaleAfter)
	}
	if counters.DenyListMissing.Load() != 0 {
		t.Error("a loaded list counted as missing")
	}
}

// TestDenyListThroughSSM: DenyList reads the parameter through the SSM API at once;
// no parameter blocks nothing and reads nothing.
func TestDenyListThroughSSM(t *testing.T) {
	api := &fakeSSM{values: map[string]string{"/p/deny": "# deny list: one rule per line\n*.evil.example\n"}}
	counters := &shorturl.ScreenCounters{}
	h, before := DenyList(t.Context(), api, "/p/deny", time.Minute, slog.New(slog.DiscardHandler), counters)
	if !blocked(h, "https://login.evil.example/") || strings.Join(api.asked, ",") != "/p/deny" {
		t.Errorf("blocked %v, asked %v", blocked(h, "https://login.evil.example/"), api.asked)
	}
	before(t.Context())
	missing := &fakeSSM{}
	h, before = DenyList(t.Context(), missing, "/p/deny", time.Minute, slog.New(slog.DiscardHandler), counters)
	before(t.Context())
	if h == nil || blocked(h, "https://login.evil.example/") || counters.DenyListMissing.Load() != 1 || counters.DenyListUnreadable.Load() != 1 {
		t.Errorf("unreadable at start: missing %d unreadable %d", counters.DenyListMissing.Load(), counters.DenyListUnreadable.Load())
	}
	none := &fakeSSM{}
	h, before = DenyList(t.Context(), none, "", time.Minute, slog.New(slog.DiscardHandler), counters)
	before(t.Context())
	if h.List().Len() != 0 || len(none.asked) != 0 {
		t.Errorf("no parameter: %d rules, %d reads", h.List().Len(), len(none.asked))
	}
}
