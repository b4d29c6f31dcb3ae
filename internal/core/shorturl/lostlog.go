package shorturl

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// MsgLostToLog is the message of the ERROR lines that carry a whole click fact in
// their graph_fact attribute: what linoone recover --from-log republishes.
const MsgLostToLog = "click fact lost to log"

// lostLog writes the facts that nothing else could keep to the log, whole, and
// bounds the volume: within each second the first fact's line carries the errors,
// the others only the fact (compact), and a summary line counts them. With a limit
// (facts per second, 0: none) the facts past it are dropped, counted, and named
// as dropped in the summary: a fact neither buffered nor logged is lost.
type lostLog struct {
	log      *slog.Logger
	limit    int
	counters *Counters
	now      func() time.Time

	mu      sync.Mutex
	window  time.Time // start of the current second
	logged  int       // facts logged in the window
	dropped int       // facts dropped in the window
	last    time.Time // when a fact last reached the log (or was dropped)
}

// write logs f, or drops it past the limit.
func (l *lostLog) write(ctx context.Context, f clickfact.Fact, perr, derr error) {
	now := l.now()
	l.mu.Lock()
	l.last = now
	if now.Sub(l.window) >= time.Second {
		l.summarizeLocked(ctx)
		l.window = now
	}
	first := l.logged == 0
	drop := l.limit > 0 && l.logged >= l.limit
	if drop {
		l.dropped++
	} else {
		l.logged++
	}
	l.mu.Unlock()
	switch {
	case drop:
		l.counters.Dropped.Add(1)
	case first:
		l.emit(ctx, slog.String("short_url_token", f.Token), slog.String("idempotency_key", f.IdempotencyKey),
			slog.Any("publish_err", perr), slog.Any("dlq_err", derr), slog.Any("graph_fact", json.RawMessage(f.Detail)))
	default:
		l.emit(ctx, slog.String("short_url_token", f.Token), slog.Any("graph_fact", json.RawMessage(f.Detail)))
	}
}

// emit writes a fact's line and counts it logged whole, or dropped if the log could
// not take it (a full disk under the log file): slog's own calls drop a handler's
// write error, and a line that was never written is no copy of the fact.
func (l *lostLog) emit(ctx context.Context, attrs ...slog.Attr) {
	r := slog.NewRecord(time.Now(), slog.LevelError, MsgLostToLog, 0)
	r.AddAttrs(attrs...)
	h := l.log.Handler()
	if !h.Enabled(ctx, slog.LevelError) || h.Handle(ctx, r) != nil {
		l.counters.Dropped.Add(1)
		return
	}
	l.counters.LostToLog.Add(1)
}

// summarize writes the summary of a window that is over (or, with final, of the
// current one), if any.
func (l *lostLog) summarize(ctx context.Context, final bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.window.IsZero() || (!final && l.now().Sub(l.window) < time.Second) {
		return
	}
	l.summarizeLocked(ctx)
	l.window = time.Time{}
}

func (l *lostLog) summarizeLocked(ctx context.Context) {
	switch {
	case l.dropped > 0:
		l.log.ErrorContext(ctx, "click facts LOST: past the log limit, neither buffered nor logged",
			"since", l.window.UTC().Format(time.RFC3339Nano), "logged_whole", l.logged, "dropped", l.dropped)
	case l.logged > 1:
		l.log.ErrorContext(ctx, "click facts lost to log: summary",
			"since", l.window.UTC().Format(time.RFC3339Nano), "logged_whole", l.logged)
	}
	l.logged, l.dropped = 0, 0
}

// since is when a fact last reached the log, or the zero time.
func (l *lostLog) since() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// whole logs f whole with no limit: a buffered fact at shutdown.
func (l *lostLog) whole(ctx context.Context, f clickfact.Fact, err error) {
	l.mu.Lock()
	l.last = l.now()
	l.mu.Unlock()
	l.emit(ctx, slog.String("idempotency_key", f.IdempotencyKey), slog.Any("err", err), slog.Any("graph_fact", json.RawMessage(f.Detail)))
}
