package metrics_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/shorturl"
)

func TestHotSetRidesOnTheClickFactsLine(t *testing.T) {
	var c shorturl.Counters
	hits, misses := int64(0), int64(0)
	var buf bytes.Buffer
	e, err := metrics.New(&buf, "", "prod", append(metrics.ClickFacts(&c),
		metrics.HotSet(func() int64 { return hits }, func() int64 { return misses })...)...)
	if err != nil {
		t.Fatal(err)
	}
	hits, misses = 9, 1
	c.Published.Add(10)
	if err := e.Flush(t0); err != nil {
		t.Fatal(err)
	}
	hits = 12
	if err := e.Flush(t0); err != nil {
		t.Fatal(err)
	}
	got := lines(t, buf.String())
	if len(got) != 2 {
		t.Fatalf("%d lines, want 2: %s", len(got), buf.String())
	}
	for i, want := range [][2]float64{{9, 1}, {3, 0}} {
		if got[i]["HotSetHits"] != want[0] || got[i]["HotSetMisses"] != want[1] {
			t.Errorf("line %d: hits %v misses %v, want %v", i, got[i]["HotSetHits"], got[i]["HotSetMisses"], want)
		}
	}
	names := got[0]["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Metrics"].([]any)
	if n := names[len(names)-1].(map[string]any); n["Name"] != "HotSetMisses" || n["Unit"] != "Count" {
		t.Errorf("last metric %v, want HotSetMisses in Count", n)
	}
}

func newPersistLatency(t *testing.T, w *failingWriter) *metrics.Latency {
	t.Helper()
	l, err := metrics.NewLatency(w, "", "prod", metrics.PersistLatency, metrics.DimensionOperation, "lookup", "ingest", "query")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLatencyLineIsExactEMF(t *testing.T) {
	w := &failingWriter{}
	l := newPersistLatency(t, w)
	l.Observe("lookup", 12*time.Millisecond+500*time.Microsecond)
	l.Observe("ingest", 40*time.Millisecond)
	l.Observe("lookup", 3*time.Millisecond)
	l.Observe("other", time.Second) // not a value it was built with
	if err := l.Flush(t0); err != nil {
		t.Fatal(err)
	}
	dir := func(op string) string {
		return `{"_aws":{"Timestamp":1795946400000,"CloudWatchMetrics":[{"Dimensions":[["Environment","Operation"]],` +
			`"Metrics":[{"Name":"PersistLatency","Unit":"Milliseconds"}],"Namespace":"Linoone"}]},"Environment":"prod","Operation":"` + op + `",`
	}
	want := dir("lookup") + `"PersistLatency":[12.5,3]}` + "\n" + dir("ingest") + `"PersistLatency":[40]}` + "\n"
	if diff := cmp.Diff(want, w.buf.String()); diff != "" {
		t.Errorf("EMF lines (-want +got):\n%s", diff)
	}
	lines(t, w.buf.String()) // each is JSON
	w.buf.Reset()
	if err := l.Flush(t0); err != nil || w.buf.Len() != 0 {
		t.Errorf("a flush without calls wrote %q, %v", w.buf.String(), err)
	}
}

func TestLatencyKeepsAUniformSampleOfManyCalls(t *testing.T) {
	w := &failingWriter{}
	l := newPersistLatency(t, w)
	const calls = 10_000
	for i := range calls { // 1 … 10,000 ms: the p50 is 5,000 ms
		l.Observe("query", time.Duration(i+1)*time.Millisecond)
	}
	if err := l.Flush(t0); err != nil {
		t.Fatal(err)
	}
	got := lines(t, w.buf.String())
	if len(got) != 1 {
		t.Fatalf("%d lines, want 1", len(got))
	}
	var vals []float64
	for _, v := range got[0]["PersistLatency"].([]any) {
		vals = append(vals, v.(float64))
	}
	if len(vals) != metrics.MaxSamples {
		t.Fatalf("%d values, want %d", len(vals), metrics.MaxSamples)
	}
	slices.Sort(vals)
	// The first 100 calls alone would give a median of 50 ms; a uniform sample of
	// 100 out of 10,000 has its median within 3,000–7,000 ms but for ~1e-4 odds.
	if med := vals[len(vals)/2]; med < 3000 || med > 7000 {
		t.Errorf("sample median %v ms, want near 5,000 ms: the sample is not uniform", med)
	}
}

func TestLatencyFailedWriteKeepsSamples(t *testing.T) {
	w := &failingWriter{fail: true}
	l := newPersistLatency(t, w)
	l.Observe("lookup", 7*time.Millisecond)
	if err := l.Flush(t0); err == nil {
		t.Fatal("Flush to a failing writer succeeded")
	}
	l.Observe("lookup", 8*time.Millisecond)
	w.fail = false
	if err := (metrics.Group{l}).Flush(t0); err != nil {
		t.Fatal(err)
	}
	got := lines(t, w.buf.String())
	if len(got) != 1 || !cmp.Equal(got[0]["PersistLatency"], any([]any{7.0, 8.0})) {
		t.Errorf("after a failed flush got %s, want one line with [7,8]", w.buf.String())
	}
}

func TestNewLatencyRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name, env, metric, dim string
		values                 []string
	}{
		{"no environment", "", "L", "Op", []string{"a"}},
		{"no values", "prod", "L", "Op", nil},
		{"duplicate value", "prod", "L", "Op", []string{"a", "a"}},
		{"empty value", "prod", "L", "Op", []string{""}},
		{"dimension is Environment", "prod", "L", "Environment", []string{"a"}},
		{"metric named _aws", "prod", "_aws", "Op", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := metrics.NewLatency(&bytes.Buffer{}, "", tt.env, tt.metric, tt.dim, tt.values...); !errors.Is(err, metrics.ErrInvalidMetrics) {
				t.Errorf("err %v, want ErrInvalidMetrics", err)
			}
		})
	}
}
