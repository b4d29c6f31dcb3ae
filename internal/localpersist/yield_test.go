package localpersist

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/graphson"
	"github.com/linoone/linoone/internal/yield"
)

// TestWriterYieldsInALargeDocument: with one P, as in `serve`, a goroutine waiting to
// run (a redirect) gets the P every yield.Interval of writing a large document, not
// only when the runtime preempts the writer every 10 ms. Both count wall time, so
// the test asks for a quarter of the yields the interval allows, whatever the
// machine's speed: five times what preemption alone gives.
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
	before, start := runs.Load(), time.Now()
	results, err := e.store.writeBatch(context.Background(), []*ingestRequest{req}, "2026-11-30T00:00:00.000Z")
	during, elapsed := runs.Load()-before, time.Since(start)
	close(stop)
	<-stopped
	if err != nil || results[0].edges.Created != clicks {
		t.Fatalf("writeBatch = %+v, %v; want %d edges created", results, err, clicks)
	}
	if want := int64(elapsed / (4 * yield.Interval)); during < want {
		t.Fatalf("another goroutine ran %d times while %d clicks were written in %v, want at least %d", during, clicks, elapsed, want)
	}
}
