package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func lines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestClickFactsLineIsExactEMF(t *testing.T) {
	var c shorturl.Counters
	var buf bytes.Buffer
	e, err := metrics.New(&buf, "", "prod", metrics.ClickFacts(&c)...)
	if err != nil {
		t.Fatal(err)
	}
	c.Published.Add(5)
	c.DeadLettered.Add(2)
	c.Buffered.Add(4)
	c.LostToLog.Add(1)
	c.Dropped.Add(3)
	if err := e.Flush(t0); err != nil {
		t.Fatal(err)
	}
	want := `{"_aws":{"Timestamp":1795946400000,"CloudWatchMetrics":[{"Namespace":"Linoone","Dimensions":[["Environment"]],` +
		`"Metrics":[{"Name":"FactsPublished","Unit":"Count"},{"Name":"FactsDeadLettered","Unit":"Count"},{"Name":"FactsBuffered","Unit":"Count"},` +
		`{"Name":"FactsLostToLog","Unit":"Count"},{"Name":"FactsDropped","Unit":"Count"}]}]},` +
		`"Environment":"prod","FactsPublished":5,"FactsDeadLettered":2,"FactsBuffered":4,"FactsLostToLog":1,"FactsDropped":3}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("EMF line (-want +got):\n%s", diff)
	}
	got := lines(t, buf.String())
	wantParsed := []map[string]any{{
		"_aws": map[string]any{
			"Timestamp": float64(t0.UnixMilli()),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  "Linoone",
				"Dimensions": []any{[]any{"Environment"}},
				"Metrics": []any{
					map[string]any{"Name": "FactsPublished", "Unit": "Count"},
					map[string]any{"Name": "FactsDeadLettered", "Unit": "Count"},
					map[string]any{"Name": "FactsBuffered", "Unit": "Count"},
					map[string]any{"Name": "FactsLostToLog", "Unit": "Count"},
					map[string]any{"Name": "FactsDropped", "Unit": "Count"},
				},
			}},
		},
		"Environment":       "prod",
		"FactsPublished":    float64(5),
		"FactsDeadLettered": float64(2),
		"FactsBuffered":     float64(4),
		"FactsLostToLog":    float64(1),
		"FactsDropped":      float64(3),
	}}
	if diff := cmp.Diff(wantParsed, got); diff != "" {
		t.Errorf("parsed EMF (-want +got):\n%s", diff)
	}
}

func TestReplaysMetricSet(t *testing.T) {
	var replayed, failed atomic.Int64
	var buf bytes.Buffer
	e, err := metrics.New(&buf, "Acme/Links", "staging", metrics.Replays(&replayed, &failed)...)
	if err != nil {
		t.Fatal(err)
	}
	replayed.Add(3)
	if err := e.Flush(t0); err != nil {
		t.Fatal(err)
	}
	// The configured namespace, where the alarms on LINOONE_METRICS_NAMESPACE look.
	want := `{"_aws":{"Timestamp":1795946400000,"CloudWatchMetrics":[{"Namespace":"Acme/Links","Dimensions":[["Environment"]],` +
		`"Metrics":[{"Name":"FactsReplayed","Unit":"Count"},{"Name":"FactsReplayFailed","Unit":"Count"}]}]},` +
		`"Environment":"staging","FactsReplayed":3,"FactsReplayFailed":0}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("EMF line (-want +got):\n%s", diff)
	}
}

func TestFlushEmitsDeltas(t *testing.T) {
	var c shorturl.Counters
	var buf bytes.Buffer
	e, err := metrics.New(&buf, "", "prod", metrics.ClickFacts(&c)...)
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ Published, DeadLettered, LostToLog int64 }
	steps := []struct {
		name  string
		add   counts
		want  *counts // nil: no line
		wantT int64
	}{
		{name: "nothing yet", want: nil},
		{name: "first", add: counts{3, 1, 0}, want: &counts{3, 1, 0}},
		{name: "unchanged", want: nil},
		{name: "more", add: counts{2, 0, 4}, want: &counts{2, 0, 4}},
		{name: "one more", add: counts{0, 1, 0}, want: &counts{0, 1, 0}},
		{name: "unchanged again", want: nil},
	}
	for i, s := range steps {
		c.Published.Add(s.add.Published)
		c.DeadLettered.Add(s.add.DeadLettered)
		c.LostToLog.Add(s.add.LostToLog)
		buf.Reset()
		now := t0.Add(time.Duration(i) * time.Minute)
		if err := e.Flush(now); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := lines(t, buf.String())
		if s.want == nil {
			if len(got) != 0 {
				t.Errorf("%s: wrote %s, want nothing", s.name, buf.String())
			}
			continue
		}
		if len(got) != 1 {
			t.Fatalf("%s: wrote %d lines, want 1", s.name, len(got))
		}
		gotCounts := counts{int64(got[0]["FactsPublished"].(float64)), int64(got[0]["FactsDeadLettered"].(float64)), int64(got[0]["FactsLostToLog"].(float64))}
		if diff := cmp.Diff(*s.want, gotCounts); diff != "" {
			t.Errorf("%s: deltas (-want +got):\n%s", s.name, diff)
		}
		if ts := int64(got[0]["_aws"].(map[string]any)["Timestamp"].(float64)); ts != now.UnixMilli() {
			t.Errorf("%s: timestamp %d, want %d", s.name, ts, now.UnixMilli())
		}
	}
}

func TestConcurrentFlushCountsEachIncrementOnce(t *testing.T) {
	var c shorturl.Counters
	buf := &syncbuf.Buffer{}
	e, err := metrics.New(buf, "", "prod", metrics.ClickFacts(&c)...)
	if err != nil {
		t.Fatal(err)
	}
	const writers, perWriter, flushers = 8, 2000, 4
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var flushErr atomic.Pointer[error]
	for range flushers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := e.Flush(time.Now()); err != nil {
					flushErr.Store(&err)
				}
			}
		})
	}
	var inc sync.WaitGroup
	for w := range writers {
		inc.Go(func() {
			for i := range perWriter {
				c.Published.Add(1)
				if (w+i)%3 == 0 {
					c.DeadLettered.Add(1)
				}
			}
		})
	}
	inc.Wait()
	close(stop)
	wg.Wait()
	if err := e.Flush(time.Now()); err != nil {
		t.Fatal(err)
	}
	if p := flushErr.Load(); p != nil {
		t.Fatal(*p)
	}
	var published, deadLettered float64
	ls := lines(t, buf.String())
	for _, l := range ls {
		published += l["FactsPublished"].(float64)
		deadLettered += l["FactsDeadLettered"].(float64)
	}
	if int64(published) != c.Published.Load() || int64(deadLettered) != c.DeadLettered.Load() {
		t.Errorf("emitted published=%v dead_lettered=%v over %d lines, counters say %d and %d",
			published, deadLettered, len(ls), c.Published.Load(), c.DeadLettered.Load())
	}
}

type failingWriter struct {
	fail bool
	buf  bytes.Buffer
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.fail {
		return 0, errors.New("stdout closed")
	}
	return f.buf.Write(p)
}

func TestFailedWriteKeepsDeltas(t *testing.T) {
	var c shorturl.Counters
	w := &failingWriter{fail: true}
	e, err := metrics.New(w, "", "prod", metrics.ClickFacts(&c)...)
	if err != nil {
		t.Fatal(err)
	}
	c.Published.Add(2)
	if err := e.Flush(t0); err == nil {
		t.Fatal("Flush to a failing writer succeeded")
	}
	c.Published.Add(1)
	w.fail = false
	if err := e.Flush(t0); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(t0); err != nil { // nothing new: no line
		t.Fatal(err)
	}
	got := lines(t, w.buf.String())
	if len(got) != 1 || got[0]["FactsPublished"] != float64(3) {
		t.Errorf("after a failed flush got %s, want one line with FactsPublished 3", w.buf.String())
	}
}

func TestRunFlushesPeriodicallyAndOnShutdown(t *testing.T) {
	var c shorturl.Counters
	buf := &syncbuf.Buffer{}
	e, err := metrics.New(buf, "", "local", metrics.ClickFacts(&c)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, 10*time.Millisecond) }()

	c.Published.Add(1)
	deadline := time.Now().Add(2 * time.Second)
	for buf.String() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if buf.String() == "" {
		t.Fatal("Run did not flush periodically")
	}
	c.LostToLog.Add(7)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	var published, lost float64
	for _, l := range lines(t, buf.String()) {
		published += l["FactsPublished"].(float64)
		lost += l["FactsLostToLog"].(float64)
	}
	if published != 1 || lost != 7 {
		t.Errorf("emitted published=%v lost=%v, want 1 and 7 (the last on shutdown)", published, lost)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	var a atomic.Int64
	tests := []struct {
		name string
		env  string
		ms   []metrics.Metric
	}{
		{name: "no environment", env: "", ms: []metrics.Metric{{Name: "X", Counter: &a}}},
		{name: "no metrics", env: "prod"},
		{name: "nil counter", env: "prod", ms: []metrics.Metric{{Name: "X"}}},
		{name: "counter and read", env: "prod", ms: []metrics.Metric{{Name: "X", Counter: &a, Read: a.Load}}},
		{name: "duplicate", env: "prod", ms: []metrics.Metric{{Name: "X", Counter: &a}, {Name: "X", Counter: &a}}},
		{name: "dimension name", env: "prod", ms: []metrics.Metric{{Name: "Environment", Counter: &a}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := metrics.New(&bytes.Buffer{}, "", tt.env, tt.ms...); !errors.Is(err, metrics.ErrInvalidMetrics) {
				t.Errorf("err %v, want ErrInvalidMetrics", err)
			}
		})
	}
	e, err := metrics.New(&bytes.Buffer{}, "", "prod", metrics.Metric{Name: "X", Counter: &a})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(t.Context(), 0); !errors.Is(err, metrics.ErrInvalidMetrics) {
		t.Errorf("Run with interval 0: err %v", err)
	}
}
