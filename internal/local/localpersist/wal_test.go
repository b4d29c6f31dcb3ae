package localpersist

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
)

// Once writes stop for IdleCheckpoint, the WAL is checkpointed and truncated to
// zero bytes: a burst does not leave it at its high-water mark.
func TestWALTruncatedWhenIdle(t *testing.T) {
	e := newEnv(t, Options{IdleCheckpoint: 300 * time.Millisecond})
	walSize := func() int64 {
		fi, err := os.Stat(e.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	v := shortURL(t, "7BTadEDkJ8")
	for i := range 50 {
		doc := graphson.Document{Vertices: []graphson.Vertex{v}}
		for j := range 20 {
			doc.Edges = append(doc.Edges, click(t, v, fmt.Sprintf("ev_%02d%02d", i, j)))
		}
		e.mustIngest(t, doc)
	}
	if n := walSize(); n < 64<<10 {
		t.Fatalf("WAL holds %d bytes after the burst, want the burst's pages", n)
	}
	waitFor(t, "WAL truncated", func() bool { return walSize() == 0 })
	// Every click is still there, in the database.
	got := e.query(t, "g.V().hasLabel('short_url').has('short_url_token', tok).limit(1).project('short_url_token').by('short_url_token')", map[string]any{"tok": "7BTadEDkJ8"})
	if len(got) != 1 {
		t.Fatalf("short URL not found after truncation: %v", got)
	}
}

// Once the writer is idle and the WAL truncated, a heap over freeAbove is returned
// to the OS, once per idle spell; under it, never (issue 47: a catch-up's ingests
// left local Persist's heap at its high-water mark).
func TestHeapFreedOncePerIdleSpell(t *testing.T) {
	for _, tc := range []struct {
		above uint64
		want  uint64
	}{{0, 1}, {1 << 62, 0}} {
		e := newEnv(t, Options{IdleCheckpoint: 50 * time.Millisecond})
		e.store.freeAbove = tc.above // before the first ingest, which the writer receives after
		v := shortURL(t, "7BTadEDkJ8")
		for i := range 5 {
			e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(t, v, fmt.Sprintf("ev_%02d", i))}})
		}
		waitFor(t, "WAL truncated", func() bool {
			fi, err := os.Stat(e.path + "-wal")
			return err == nil && fi.Size() == 0
		})
		time.Sleep(200 * time.Millisecond) // idle spells after the first free nothing more
		if got := e.store.heapFrees.Load(); got != tc.want {
			t.Errorf("heap over %d: returned to the OS %d times after one burst, want %d", tc.above, got, tc.want)
		}
	}
}
