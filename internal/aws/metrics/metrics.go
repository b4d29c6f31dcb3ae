// Package metrics writes Linoone's counters as CloudWatch Embedded Metric Format
// (EMF): one JSON line per flush, holding what changed since the previous flush.
// On Lambda the line goes to stdout and CloudWatch Logs turns it into metrics; call
// Flush at the end of every invocation (nothing runs after the handler returns).
// Locally Run flushes periodically and once more on shutdown.
package metrics

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// Namespace is the CloudWatch namespace of Linoone's metrics unless configured
// otherwise (LINOONE_METRICS_NAMESPACE).
const Namespace = "Linoone"

// DimensionEnvironment is the one dimension of every metric.
const DimensionEnvironment = "Environment"

// Metric names.
const (
	FactsPublished     = "FactsPublished"
	FactsDeadLettered  = "FactsDeadLettered"
	FactsBuffered      = "FactsBuffered"
	FactsLostToLog     = "FactsLostToLog"
	FactsDropped       = "FactsDropped"
	FactsReplayed      = "FactsReplayed"
	FactsReplayFailed  = "FactsReplayFailed"
	TargetsBlocked     = "TargetsBlocked"
	LinksBlockedServed = "LinksBlockedServed"
	DenyListUnreadable = "DenyListUnreadable"
	DenyListMissing    = "DenyListMissing"
	DenyListStale      = "DenyListStale"
	HotSetHits         = "HotSetHits"
	HotSetMisses       = "HotSetMisses"
)

// ErrInvalidMetrics reports an unusable EMF configuration.
var ErrInvalidMetrics = errors.New("invalid metrics configuration")

// Metric is one monotonically increasing counter emitted under Name (unit Count),
// read from Counter or, for a counter kept in parts, from Read.
type Metric struct {
	Name    string
	Counter *atomic.Int64
	Read    func() int64
}

func (m Metric) load() int64 {
	if m.Counter != nil {
		return m.Counter.Load()
	}
	return m.Read()
}

// ClickFacts is the resolver's metric set from the recorder's counters:
// FactsPublished, FactsDeadLettered, FactsBuffered (held in memory: bus and DLQ
// both failed), FactsLostToLog (logged whole) and FactsDropped (lost).
func ClickFacts(c *shorturl.Counters) []Metric {
	return []Metric{
		{Name: FactsPublished, Counter: &c.Published},
		{Name: FactsDeadLettered, Counter: &c.DeadLettered},
		{Name: FactsBuffered, Counter: &c.Buffered},
		{Name: FactsLostToLog, Counter: &c.LostToLog},
		{Name: FactsDropped, Counter: &c.Dropped},
	}
}

// Screening is the deny list's metric set: TargetsBlocked (issuance refused),
// LinksBlockedServed (resolutions answered 410) and DenyListUnreadable (reads of the
// list's source that failed; the previous list stayed in force), DenyListMissing
// (requests served before any list was loaded) and DenyListStale (requests served
// under a list that has not been refreshed for several intervals). Emit it on its own
// EMF writer: its line is written only in a minute that blocked something, and the
// click-fact line of every redirect stays as small as it was.
func Screening(c *shorturl.ScreenCounters) []Metric {
	return []Metric{
		{Name: TargetsBlocked, Counter: &c.TargetsBlocked},
		{Name: LinksBlockedServed, Counter: &c.LinksBlockedServed},
		{Name: DenyListUnreadable, Counter: &c.DenyListUnreadable},
		{Name: DenyListMissing, Counter: &c.DenyListMissing},
		{Name: DenyListStale, Counter: &c.DenyListStale},
	}
}

// HotSet is the hot set's metric set: HotSetHits (lookups answered from memory) and
// HotSetMisses (lookups that asked Persist). The hit rate is hits/(hits+misses).
// Emit it on the click-fact writer: a redirect writes that line anyway, so the hit
// rate costs no line of its own.
func HotSet(hits, misses func() int64) []Metric {
	return []Metric{
		{Name: HotSetHits, Read: hits},
		{Name: HotSetMisses, Read: misses},
	}
}

// Replays is the replay function's metric set: FactsReplayed and FactsReplayFailed.
func Replays(replayed, failed *atomic.Int64) []Metric {
	return []Metric{
		{Name: FactsReplayed, Counter: replayed},
		{Name: FactsReplayFailed, Counter: failed},
	}
}

// EMF writes one metric set as EMF lines. It is safe for concurrent use: each
// increment is emitted exactly once, whoever flushes.
type EMF struct {
	w       io.Writer
	env     string
	metrics []Metric
	aws     []byte // the constant part of the "_aws" object after Timestamp

	mu   sync.Mutex
	last []int64 // counter values at the last successful flush
}

// New builds an EMF writer of metrics to w, in CloudWatch namespace namespace
// (Namespace when empty), with dimension Environment=environment. The first flush
// emits everything counted since the counters were created.
func New(w io.Writer, namespace, environment string, metrics ...Metric) (*EMF, error) {
	namespace, errs := checkWriter(w, namespace, environment)
	if len(metrics) == 0 {
		errs = append(errs, errors.New("no metrics"))
	}
	seen := map[string]bool{DimensionEnvironment: true}
	for _, m := range metrics {
		switch {
		case m.Name == "" || m.Name == "_aws":
			errs = append(errs, fmt.Errorf("metric name %q", m.Name))
		case seen[m.Name]:
			errs = append(errs, fmt.Errorf("metric name %q used twice", m.Name))
		case (m.Counter == nil) == (m.Read == nil):
			errs = append(errs, fmt.Errorf("metric %s needs a counter or a read function, one of them", m.Name))
		}
		seen[m.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMetrics, err)
	}

	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type directive struct {
		Namespace  string      `json:"Namespace"`
		Dimensions [][]string  `json:"Dimensions"`
		Metrics    []metricDef `json:"Metrics"`
	}
	d := directive{Namespace: namespace, Dimensions: [][]string{{DimensionEnvironment}}}
	for _, m := range metrics {
		d.Metrics = append(d.Metrics, metricDef{Name: m.Name, Unit: "Count"})
	}
	dj, err := json.Marshal([]directive{d})
	if err != nil {
		return nil, fmt.Errorf("encode emf directive: %w", err)
	}
	return &EMF{
		w:       w,
		env:     environment,
		metrics: append([]Metric(nil), metrics...),
		aws:     append(append([]byte(`,"CloudWatchMetrics":`), dj...), '}'),
		last:    make([]int64, len(metrics)),
	}, nil
}

// Flush writes one line with each metric's increase since the last flush, stamped
// now, and writes nothing when no counter changed. When the write fails the
// increases are kept for the next flush.
func (e *EMF) Flush(now time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := make([]int64, len(e.metrics))
	changed := false
	for i, m := range e.metrics {
		cur[i] = m.load()
		changed = changed || cur[i] != e.last[i]
	}
	if !changed {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(`{"_aws":{"Timestamp":`)
	b.WriteString(strconv.FormatInt(now.UnixMilli(), 10))
	b.Write(e.aws)
	b.WriteString(`,"` + DimensionEnvironment + `":`)
	env, err := json.Marshal(e.env)
	if err != nil {
		return fmt.Errorf("encode environment: %w", err)
	}
	b.Write(env)
	for i, m := range e.metrics {
		name, err := json.Marshal(m.Name)
		if err != nil {
			return fmt.Errorf("encode metric name: %w", err)
		}
		b.WriteByte(',')
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(cur[i]-e.last[i], 10))
	}
	b.WriteString("}\n")
	if _, err := e.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write emf line: %w", err)
	}
	e.last = cur
	return nil
}

// Run flushes every interval until ctx is done, then flushes once more and returns
// that last flush's error. A failed periodic flush keeps its increases for the next.
func (e *EMF) Run(ctx context.Context, every time.Duration) error {
	return Group{e}.Run(ctx, every)
}

// Flusher is one EMF writer of a Group: an *EMF or a *Latency.
type Flusher interface {
	Flush(now time.Time) error
}

var (
	_ Flusher = (*EMF)(nil)
	_ Flusher = (*Latency)(nil)
)

// Group is several EMF writers flushed together, each writing its own lines when
// something changed.
type Group []Flusher

// Flush flushes every writer and returns their errors joined.
func (g Group) Flush(now time.Time) error {
	var errs []error
	for _, e := range g {
		errs = append(errs, e.Flush(now))
	}
	return errors.Join(errs...)
}

// Run flushes every writer every interval until ctx is done, then once more, and
// returns that last flush's errors.
func (g Group) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("%w: flush interval %v", ErrInvalidMetrics, every)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return g.Flush(time.Now())
		case now := <-t.C:
			_ = g.Flush(now) // kept for the next flush; the final one reports
		}
	}
}

// checkWriter is what every EMF writer requires of its writer and environment; it
// returns the namespace, Namespace when empty.
func checkWriter(w io.Writer, namespace, environment string) (string, []error) {
	var errs []error
	if w == nil {
		errs = append(errs, errors.New("no writer"))
	}
	if environment == "" {
		errs = append(errs, errors.New("empty environment"))
	}
	return cmp.Or(namespace, Namespace), errs
}
