package awswire

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/linoone/linoone/internal/aws/retrypolicy"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// ParamReadTimeout bounds one read of a parameter a function makes again between
// its start and its end (the deny list, the idempotency secret while unset).
const ParamReadTimeout = time.Second

// StaleAfter is how many refresh intervals a deny list may go unrefreshed before
// each request served under it counts in DenyListStale.
const StaleAfter = 3

// Retry backoff of a deny list read that failed: doubling from DenyRetryMin, never
// past the refresh interval, so a throttled SSM is not called harder.
const DenyRetryMin = time.Second

// DenyList is the deny list kept in the SSM parameter param ("": none, nothing is
// blocked), read once at start (within ParamReadTimeout) and then refreshed in the
// background every interval (less up to a quarter, at random, so that instances
// started together do not read together). The returned before runs at the start of
// each invocation and never waits: it starts a read when one is due and counts the
// request in counters.DenyListMissing while no list was ever loaded, or in
// DenyListStale while the list in force is older than StaleAfter intervals.
//
// A first read that fails does not stop the function (docs/aws.md says why): it
// serves with nothing blocked, logs at ERROR, and reads again after DenyRetryMin,
// doubling to the interval. A later failed read keeps the list in force. Every failed
// read is logged and counted in counters.DenyListUnreadable.
//
// The read runs on a goroutine, the one thing a function starts that may outlive
// its invocation: Lambda freezes it with the environment, and a read interrupted
// that way fails (its deadline passes while frozen) and is tried again; nothing is
// lost, since the list in force stays. A click fact is never handled that way.
func DenyList(ctx context.Context, api GetParameterAPI, param string, interval time.Duration, log *slog.Logger, counters *shorturl.ScreenCounters) (*denylist.Holder, func(context.Context)) {
	h := &denylist.Holder{}
	if param == "" {
		return h, func(context.Context) {}
	}
	r := &denyRefresher{holder: h, every: interval, timeout: ParamReadTimeout, source: "ssm:" + param, log: log,
		counters: counters, now: time.Now, jitter: rand.Float64,
		fetch: func(ctx context.Context) (string, error) {
			out, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(param)})
			if err != nil {
				return "", fmt.Errorf("ssm parameter %s: %w", param, err)
			}
			if out.Parameter == nil {
				return "", fmt.Errorf("ssm parameter %s: no value", param)
			}
			return aws.ToString(out.Parameter.Value), nil
		}}
	r.read(ctx)
	return h, r.before
}

// denyRefresher keeps holder in step with fetch, off the request path.
type denyRefresher struct {
	fetch    func(ctx context.Context) (string, error)
	holder   *denylist.Holder
	every    time.Duration
	timeout  time.Duration
	source   string
	log      *slog.Logger
	counters *shorturl.ScreenCounters
	now      func() time.Time
	jitter   func() float64 // in [0, 1)

	wg       sync.WaitGroup // the read in flight, for tests
	mu       sync.Mutex
	running  bool
	next     time.Time // when the next read is due
	loadedAt time.Time // when the list in force was last read; zero: never
	backoff  time.Duration
	text     *string // the text in force, once one was read
}

// before counts the request against the list's state and starts a read when one is
// due and none is running.
func (r *denyRefresher) before(ctx context.Context) {
	now := r.now()
	r.mu.Lock()
	due := !r.running && !now.Before(r.next)
	r.running = r.running || due
	loaded := r.loadedAt
	r.mu.Unlock()
	switch {
	case loaded.IsZero():
		r.counters.DenyListMissing.Add(1)
	case now.Sub(loaded) > StaleAfter*r.every:
		r.counters.DenyListStale.Add(1)
	}
	if due {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.read(context.WithoutCancel(ctx))
		}()
	}
}

// read fetches the text, puts its list in force when it changed, and schedules the
// next read: an interval later, or after the backoff when it failed.
func (r *denyRefresher) read(ctx context.Context) {
	fctx, cancel := context.WithTimeout(ctx, r.timeout)
	text, err := r.fetch(fctx)
	cancel()
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = false
	if err != nil {
		r.backoff = min(max(2*r.backoff, DenyRetryMin), r.every)
		r.next = now.Add(r.backoff)
		r.counters.DenyListUnreadable.Add(1)
		msg := "deny list unreadable: the previous list stays in force"
		if r.loadedAt.IsZero() {
			msg = "deny list unreadable: none loaded yet, nothing is blocked until a read succeeds"
		}
		r.log.ErrorContext(ctx, msg, "source", r.source, "err", err, "retry_in", r.backoff.String())
		return
	}
	// Less up to a quarter of the interval: an edit is in force within it.
	r.backoff, r.loadedAt = 0, now
	r.next = now.Add(r.every - time.Duration(r.jitter()*float64(r.every)/4))
	if r.text != nil && *r.text == text {
		return
	}
	l, bad := denylist.ParseString(text)
	r.holder.Set(l)
	r.text = &text
	for _, e := range bad {
		r.log.WarnContext(ctx, "deny list: malformed rule ignored", "source", r.source, "line", e.Line, "err", e.Err)
	}
	r.log.InfoContext(ctx, "deny list loaded", "source", r.source, "rules", l.Len(), "malformed", len(bad))
}

// RefreshClient is the SSM client of the reads a function makes again after its
// start (DenyList): no SDK retry of throttling, whose retries would spend the
// account's GetParameter quota that every instance shares; the refresher's own
// backoff retries instead.
func RefreshClient(cfg aws.Config) *ssm.Client {
	return ssm.NewFromConfig(cfg, func(o *ssm.Options) {
		o.Retryer = retrypolicy.InRequest()
		o.RetryMaxAttempts = 0
	})
}
