// Package replay is the replay Lambda's handler: it consumes the click DLQ (an SQS
// event source with ReportBatchItemFailures) and republishes each dead-lettered fact
// unchanged, same detail and idempotency key. Records that fail — the bus refused
// again, or the body is not a Linoone dead letter — are returned as batch item
// failures and left to SQS redrive: after maxReceiveCount they move to the DLQ's own
// deadletter queue, which alarms. Nothing is dropped silently.
package replay

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// Defaults of a Handler.
const (
	DefaultPublishTimeout = 5 * time.Second
	DefaultConcurrency    = 10
)

// Counters count replay outcomes, one per record. metrics.Replays reads them.
type Counters struct {
	Replayed atomic.Int64
	Failed   atomic.Int64
}

// Option changes a Handler's defaults.
type Option func(*Handler)

// WithPublishTimeout bounds each record's publish (default DefaultPublishTimeout).
func WithPublishTimeout(d time.Duration) Option {
	return func(h *Handler) {
		if d > 0 {
			h.timeout = d
		}
	}
}

// WithConcurrency sets how many records are published at once (default
// DefaultConcurrency).
func WithConcurrency(n int) Option {
	return func(h *Handler) {
		if n > 0 {
			h.concurrency = n
		}
	}
}

// Handler republishes the facts of a batch of click DLQ messages. It is safe for
// concurrent use.
type Handler struct {
	pub         shorturl.Publisher
	log         *slog.Logger
	counters    *Counters
	timeout     time.Duration
	concurrency int
}

// New builds a Handler publishing with pub. A nil log discards; nil counters are
// replaced by fresh ones (see Counters).
func New(pub shorturl.Publisher, log *slog.Logger, counters *Counters, opts ...Option) (*Handler, error) {
	if pub == nil {
		return nil, errors.New("replay needs a publisher")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if counters == nil {
		counters = &Counters{}
	}
	h := &Handler{pub: pub, log: log, counters: counters, timeout: DefaultPublishTimeout, concurrency: DefaultConcurrency}
	for _, o := range opts {
		o(h)
	}
	return h, nil
}

// Counters returns the handler's counters.
func (h *Handler) Counters() *Counters { return h.counters }

// Handle republishes every record of ev, at most the configured number at once, each
// within the publish timeout. The response lists exactly the records that failed, in
// batch order; the error is always nil, since an error would fail (and redeliver) the
// whole batch, successes included.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	failed := make([]bool, len(ev.Records))
	sem := make(chan struct{}, h.concurrency)
	var wg sync.WaitGroup
	for i := range ev.Records {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			failed[i] = !h.replay(ctx, &ev.Records[i])
		})
	}
	wg.Wait()
	var resp events.SQSEventResponse
	for i, f := range failed {
		if f {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp, nil
}

// replay republishes one record and logs its outcome once; it reports success.
func (h *Handler) replay(ctx context.Context, r *events.SQSMessage) bool {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	receives, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
	d, f, err := shorturl.Replay(ctx, h.pub, []byte(r.Body))
	switch {
	case err == nil:
		h.counters.Replayed.Add(1)
		h.log.InfoContext(ctx, "click fact replayed", "short_url_token", f.Token, "message_id", r.MessageId, "idempotency_key", f.IdempotencyKey,
			"attempts", d.Attempts+1, "approximate_receive_count", receives, "failed_at", d.FailedAt)
	case errors.Is(err, clickfact.ErrInvalid):
		h.counters.Failed.Add(1)
		h.log.ErrorContext(ctx, "click dlq message is not a linoone dead letter: left to redrive",
			"message_id", r.MessageId, "approximate_receive_count", receives, "err", err, "body", truncate(r.Body, 4096))
	default:
		h.counters.Failed.Add(1)
		h.log.WarnContext(ctx, "click fact replay failed: left to redrive", "short_url_token", f.Token, "message_id", r.MessageId,
			"idempotency_key", f.IdempotencyKey, "attempts", d.Attempts+1, "approximate_receive_count", receives, "err", err)
	}
	return err == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
