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
