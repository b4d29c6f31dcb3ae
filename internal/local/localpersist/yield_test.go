package localpersist

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/foundation/yield"
	"github.com/linoone/linoone/internal/testutil/cputime"
)

// TestWriterYieldsInALargeDocument: with one P, as in `serve`, the writer yields
// (yield.Now, which lets what the network woke run first) every yield.Interval of
// writing a large document, not only when the runtime preempts it every 10 ms. The
// yields are counted, not inferred from how often another goroutine ran: that
// goroutine also runs whenever the writer is in a system call. The test asks for a
// quarter of the yields the interval allows over the time the process could run:
// its wall time, or its CPU time where other processes took the core (the writer
// cannot yield while it is not running), so that a busy machine does not fail it.
func TestWriterYieldsInALargeDocument(t *testing.T) {
	const clicks = 2000
	e := newEnv(t, Options{})
	urls := make([]graphson.Vertex, 20)
	for i := range urls {
		urls[i] = shortURL(t, fmt.Sprintf("tok%07d", i))
	}
	e.mustIngest(t, graphson.Document{Vertices: urls})
	req, err := parseIngest(clickBody(t, urls, 1, clicks))
	if err != nil {
		t.Fatal(err)
	}
	yield.When(func() bool { return true }) // as `serve` while it redirects
	defer yield.When(nil)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var runs atomic.Int64
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				runs.Add(1)
				runtime.Gosched()
			}
		}
	}()
	runtime.Gosched()
	before, yieldsBefore, start, cpuBefore := runs.Load(), yield.Yields(), time.Now(), cputime.Process(t)
	results, err := e.store.writeBatch(context.Background(), []*ingestRequest{req}, "2026-11-30T00:00:00.000Z")
	during, yields, elapsed, cpu := runs.Load()-before, yield.Yields()-yieldsBefore, time.Since(start), cputime.Process(t)-cpuBefore
	close(stop)
	<-stopped
	if err != nil || results[0].edges.Created != clicks {
		t.Fatalf("writeBatch = %+v, %v; want %d edges created", results, err, clicks)
	}
	ran := elapsed
	if cpu > 0 && cpu < ran {
		ran = cpu
	}
	if want := int64(ran / (4 * yield.Interval)); yields < want || during < want {
		t.Fatalf("the writer yielded %d times and another goroutine ran %d while %d clicks were written in %v (%v of CPU), want at least %d each",
			yields, during, clicks, elapsed, cpu, want)
	}
}
