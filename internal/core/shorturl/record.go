package shorturl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// Publisher puts a fact on the bus. It returns nil only when the bus accepted it
// (for EventBridge: the call succeeded and FailedEntryCount == 0). It must not keep
// f.Detail after it returns: the Recorder reuses the buffer for the next click.
type Publisher interface {
	Publish(ctx context.Context, f clickfact.Fact) error
}

// DeadLetters keeps facts whose publication failed, for replay. Like a Publisher, it
// must not keep the dead letter's GraphFact bytes after it returns.
type DeadLetters interface {
	DeadLetter(ctx context.Context, d clickfact.DeadLetter) error
}

// clickOf is the click fact's view of a resolved short URL and its visitor.
func clickOf(u ShortURL, v Visit) clickfact.Click {
	return clickfact.Click{Token: string(u.Token), Path: u.Path, Target: u.Target, IP: v.IP, UserAgent: v.UserAgent, At: v.At}
}

// Counters count what happened to click facts. They are read by the metrics emitter.
type Counters struct {
	Published    atomic.Int64 // published on the bus (at once or from the buffer)
	DeadLettered atomic.Int64 // sent to the dead letters (at once or from the buffer)
	Buffered     atomic.Int64 // put in the in-memory buffer: bus and dead letters both failed
	LostToLog    atomic.Int64 // logged whole at ERROR: nothing else could keep them
	Dropped      atomic.Int64 // LOST: past the buffer and the log limit, neither kept nor logged
}

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	Publisher      Publisher
	DeadLetters    DeadLetters
	EventIDs       func() (string, error) // "ev_" + ULID
	PublishTimeout time.Duration          // default 500ms
	DLQTimeout     time.Duration          // default 2s
	Logger         *slog.Logger
	Now            func() time.Time
	Counters       *Counters
	// BufferBytes bounds the memory that holds facts neither the bus nor the dead
	// letters took, until Flush or Run hands them on; 0: no buffer, such facts go
	// to the log at once. Only where the process outlives the request (serve): an
	// in-memory buffer dies with a frozen Lambda.
	BufferBytes int
	// LogFactsPerSecond bounds the facts logged whole per second past the buffer;
	// 0: no bound (the default: every such fact is logged, compactly). A fact past a
	// bound is dropped and counted in Dropped.
	LogFactsPerSecond int
}

// Recorder turns clicks into published facts, dead-lettering what cannot be published.
type Recorder struct {
	c         RecorderConfig
	bufs      sync.Pool // *[]byte fact buffers, reused across clicks
	deadlines deadlines
	backlog   *backlog // nil without BufferBytes
	lost      *lostLog
	flushing  sync.Mutex // one Flush at a time: each buffered fact goes out once
}

// deadlines hands out the contexts publishes wait under: each ends PublishTimeout
// after it was made, and one is shared by every click of a window of PublishTimeout/50
// (so a click waits at least 98% of PublishTimeout), instead of a context and a timer
// made and stopped on every redirect.
type deadlines struct {
	timeout time.Duration
	cur     atomic.Pointer[deadline]
}

type deadline struct {
	ctx    context.Context
	cancel context.CancelFunc // never called: the context ends by its deadline
	until  time.Time          // when the next click takes a new one
}

func (d *deadlines) get() context.Context {
	now := time.Now()
	if c := d.cur.Load(); c != nil && now.Before(c.until) {
		return c.ctx
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(d.timeout))
	d.cur.Store(&deadline{ctx: ctx, cancel: cancel, until: now.Add(d.timeout / 50)})
	return ctx
}

// deadlineOf is ctx's deadline; every context deadlines.get hands out has one.
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// maxPooledFact bounds the fact buffers kept for reuse.
const maxPooledFact = 16 << 10

// NewRecorder checks the configuration and builds a Recorder.
func NewRecorder(c RecorderConfig) (*Recorder, error) {
	if c.Publisher == nil || c.DeadLetters == nil || c.EventIDs == nil {
		return nil, errors.New("recorder needs a publisher, dead letters and event ids")
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = 500 * time.Millisecond
	}
	if c.DLQTimeout <= 0 {
		c.DLQTimeout = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = discardLogger()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Counters == nil {
		c.Counters = &Counters{}
	}
	if c.BufferBytes < 0 || c.LogFactsPerSecond < 0 {
		return nil, errors.New("recorder buffer bytes and log facts per second must not be negative")
	}
	r := &Recorder{c: c, deadlines: deadlines{timeout: c.PublishTimeout},
		lost: &lostLog{log: c.Logger, limit: c.LogFactsPerSecond, counters: c.Counters, now: c.Now}}
	if c.BufferBytes > 0 {
		r.backlog = newBacklog(c.BufferBytes)
	}
	return r, nil
}

// Counters returns the recorder's counters.
func (r *Recorder) Counters() *Counters { return r.c.Counters }

// Record publishes the click's fact within the publish timeout; on failure it sends
// the fact to the dead letters; if that fails too it logs the whole fact at ERROR.
// It runs inside the request (on Lambda nothing runs after the handler returns) and
// is detached from the visitor's cancellation: a click that happened is recorded.
func (r *Recorder) Record(ctx context.Context, u ShortURL, v Visit) {
	if v.At.IsZero() {
		v.At = r.c.Now()
	}
	id, err := r.c.EventIDs()
	if err == nil {
		bp, _ := r.bufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		var f clickfact.Fact
		if f, err = clickfact.Append(*bp, clickOf(u, v), id); err == nil {
			r.deliver(ctx, f)
			if cap(f.Detail) <= maxPooledFact { // Publisher and DeadLetters keep no reference
				*bp = f.Detail[:0]
				r.bufs.Put(bp)
			}
			return
		}
	}
	r.c.Counters.LostToLog.Add(1)
	r.c.Logger.ErrorContext(ctx, "click fact could not be built", "err", err, "short_url_token", string(u.Token),
		"visitor_ip_address", v.IP, "user_agent", v.UserAgent, "effective_at", clickfact.FormatTime(v.At))
}

// deliver publishes f, else dead-letters it, else logs it. Neither waits on the
// visitor's cancellation (only ctx's values reach the logs): a click that happened is
// recorded. A deadline on ctx (a Lambda invocation's, less the time to answer) bounds
// both: the publish takes at most half of the time left, so that the dead letter
// has its turn, and the log after it, before the function is stopped.
func (r *Recorder) deliver(ctx context.Context, f clickfact.Fact) {
	pctx := r.deadlines.get()
	end, bounded := ctx.Deadline()
	if bounded {
		now := time.Now()
		if half := now.Add(end.Sub(now) / 2); half.Before(deadlineOf(pctx)) {
			var cancel context.CancelFunc
			pctx, cancel = context.WithDeadline(context.Background(), half)
			defer cancel()
		}
	}
	perr := r.c.Publisher.Publish(pctx, f)
	if perr == nil {
		r.c.Counters.Published.Add(1)
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.c.DLQTimeout)
	defer cancel()
	if bounded {
		var cancelEnd context.CancelFunc
		dctx, cancelEnd = context.WithDeadline(dctx, end)
		defer cancelEnd()
	}
	derr := r.c.DeadLetters.DeadLetter(dctx, clickfact.NewDeadLetter(f, r.c.Now(), 1, perr))
	if derr == nil {
		r.c.Counters.DeadLettered.Add(1)
		r.c.Logger.WarnContext(ctx, "click fact dead-lettered", "short_url_token", f.Token, "idempotency_key", f.IdempotencyKey, "err", perr)
		return
	}
	r.hold(ctx, f, perr, derr)
}

// hold keeps a fact that neither the bus nor the dead letters took: in the buffer
// while it has room, else in the log.
func (r *Recorder) hold(ctx context.Context, f clickfact.Fact, perr, derr error) {
	if r.backlog != nil && r.backlog.push(f) {
		if r.c.Counters.Buffered.Add(1); r.backlog.len() == 1 { // once per outage, not per fact
			r.c.Logger.ErrorContext(ctx, "click facts buffered in memory: publish and dead-letter both failed",
				"short_url_token", f.Token, "idempotency_key", f.IdempotencyKey, "publish_err", perr, "dlq_err", derr, "buffer_bytes", r.c.BufferBytes)
		}
		return
	}
	r.lost.write(ctx, f, perr, derr)
}

// Replay publishes the fact in a DLQ message body again, unchanged (same idempotency
// key). It returns the parsed dead letter (attempts as stored) and the publish error.
// A body that is not a Linoone dead letter is clickfact.ErrInvalid: replaying cannot
// fix it.
func Replay(ctx context.Context, pub Publisher, body []byte) (clickfact.DeadLetter, clickfact.Fact, error) {
	d, f, err := clickfact.ParseDeadLetter(body)
	if err != nil {
		return clickfact.DeadLetter{}, clickfact.Fact{}, err
	}
	if err := pub.Publish(ctx, f); err != nil {
		return d, f, fmt.Errorf("republish %s (attempt %d): %w", f.IdempotencyKey, d.Attempts+1, err)
	}
	return d, f, nil
}
