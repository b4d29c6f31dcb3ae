package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"
)

// PersistLatency is the duration of one Persist call in milliseconds, by
// DimensionOperation (the Persist client's kinds of call: persist.Calls).
const PersistLatency = "PersistLatency"

// DimensionOperation is PersistLatency's second dimension: the kind of Persist call.
const DimensionOperation = "Operation"

// MaxSamples is how many durations of one dimension value a Latency keeps between
// two flushes: the most values one EMF metric value array may hold.
const MaxSamples = 100

// Latency collects call durations and writes them as EMF: per flush, one line for
// each dimension value that saw calls, its durations in milliseconds as a value
// array, from which CloudWatch computes percentiles. Past MaxSamples calls of a
// value between two flushes it keeps a uniform sample of them (reservoir sampling):
// the percentiles stay representative, and the line's sample count is then below
// the number of calls. Safe for concurrent use; Observe allocates nothing.
type Latency struct {
	w io.Writer

	mu     sync.Mutex
	series []series
}

type series struct {
	value   string
	tail    []byte // the line after the timestamp, up to the value array
	samples [MaxSamples]float64
	n       int   // samples held
	seen    int64 // calls observed since the last flush
}

// NewLatency builds a Latency of metric name to w, in namespace (Namespace when
// empty), with dimensions Environment=environment and dimension=one of values.
func NewLatency(w io.Writer, namespace, environment, name, dimension string, values ...string) (*Latency, error) {
	namespace, errs := checkWriter(w, namespace, environment)
	reserved := []string{"", "_aws", DimensionEnvironment}
	if slices.Contains(reserved, name) || slices.Contains(reserved, dimension) || name == dimension {
		errs = append(errs, fmt.Errorf("metric %q by dimension %q", name, dimension))
	}
	if len(values) == 0 {
		errs = append(errs, errors.New("no dimension values"))
	}
	for i, v := range values {
		if v == "" || slices.Contains(values[:i], v) {
			errs = append(errs, fmt.Errorf("dimension value %q empty or used twice", v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMetrics, err)
	}
	l := &Latency{w: w, series: make([]series, len(values))}
	for i, v := range values {
		doc := map[string]any{
			DimensionEnvironment: environment,
			dimension:            v,
			"_aws": map[string]any{"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  namespace,
				"Dimensions": [][]string{{DimensionEnvironment, dimension}},
				"Metrics":    []any{map[string]string{"Name": name, "Unit": "Milliseconds"}},
			}}},
		}
		tail, err := latencyTail(doc, name)
		if err != nil {
			return nil, err
		}
		l.series[i] = series{value: v, tail: tail}
	}
	return l, nil
}

// latencyTail encodes doc as the part of a line after `{"_aws":{"Timestamp":T`:
// the rest of the _aws object, the dimensions, and `"name":` before the array.
func latencyTail(doc map[string]any, name string) ([]byte, error) {
	aws, err := json.Marshal(doc["_aws"])
	if err != nil {
		return nil, fmt.Errorf("encode emf directive: %w", err)
	}
	delete(doc, "_aws")
	rest, err := json.Marshal(doc) // keys sorted: the line is the same every time
	if err != nil {
		return nil, fmt.Errorf("encode emf dimensions: %w", err)
	}
	n, err := json.Marshal(name)
	if err != nil {
		return nil, fmt.Errorf("encode metric name: %w", err)
	}
	b := append([]byte{','}, aws[1:]...) // `,"CloudWatchMetrics":[…]}`
	b = append(b, ',')
	b = append(b, rest[1:len(rest)-1]...)
	b = append(append(append(b, ','), n...), ':')
	return b, nil
}

// Observe notes one call of dimension value value that took took. A value the
// Latency was not built with is ignored.
func (l *Latency) Observe(value string, took time.Duration) {
	ms := float64(took.Microseconds()) / 1000
	l.mu.Lock()
	for i := range l.series {
		if l.series[i].value == value {
			l.series[i].add(ms)
			break
		}
	}
	l.mu.Unlock()
}

// add keeps ms, or past MaxSamples replaces a kept sample with probability
// MaxSamples/seen, which keeps every call equally likely to be in the sample.
func (s *series) add(ms float64) {
	s.seen++
	if s.n < MaxSamples {
		s.samples[s.n] = ms
		s.n++
		return
	}
	if j := rand.Int64N(s.seen); j < MaxSamples {
		s.samples[j] = ms
	}
}

// Flush writes one line per dimension value with calls since the last flush,
// stamped now, and nothing when there were none. The durations of a line that
// could not be written are kept for the next flush.
func (l *Latency) Flush(now time.Time) error {
	type pending struct {
		i       int
		samples []float64
	}
	var todo []pending
	l.mu.Lock()
	for i := range l.series {
		s := &l.series[i]
		if s.n > 0 {
			todo = append(todo, pending{i, slices.Clone(s.samples[:s.n])})
			s.n, s.seen = 0, 0
		}
	}
	l.mu.Unlock()
	var errs []error
	for _, p := range todo {
		b := make([]byte, 0, 256+len(p.samples)*8)
		b = append(b, `{"_aws":{"Timestamp":`...)
		b = strconv.AppendInt(b, now.UnixMilli(), 10)
		b = append(b, l.series[p.i].tail...)
		b = append(b, '[')
		for k, ms := range p.samples {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, ms, 'f', -1, 64)
		}
		b = append(b, "]}\n"...)
		if _, err := l.w.Write(b); err != nil {
			errs = append(errs, fmt.Errorf("write emf line: %w", err))
			l.mu.Lock()
			for _, ms := range p.samples {
				l.series[p.i].add(ms)
			}
			l.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}
