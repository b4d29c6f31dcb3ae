package localpersist

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/graphson"
)

func TestKnownVerticesKeepOnlyWhatCommitted(t *testing.T) {
	k := newKnownVertices()
	k.add("a", "short_url")
	if l, ok := k.label("a"); !ok || l != "short_url" {
		t.Fatalf("the open transaction's own vertex: %q %v", l, ok)
	}
	k.rollback()
	if _, ok := k.label("a"); ok {
		t.Fatal("a vertex of a rolled back transaction is still known")
	}
	k.add("b", "short_url")
	k.commit()
	k.rollback() // a later transaction rolled back
	if _, ok := k.label("b"); !ok {
		t.Fatal("a committed vertex was forgotten by a later rollback")
	}
	for i := range knownVerticesLimit + 1 {
		k.add(fmt.Sprint(i), "short_url")
	}
	k.commit()
	if len(k.committed) > knownVerticesLimit+1 || len(k.pending) != 0 {
		t.Fatalf("committed %d, pending %d after overflowing the limit", len(k.committed), len(k.pending))
	}
}

// TestKnownVerticesHoldNoBody: the ids and labels the writer remembers are decoded
// from ingest bodies as substrings; kept as they are, each would keep its whole
// body (up to megabytes) in memory for as long as the vertex stays known.
func TestKnownVerticesHoldNoBody(t *testing.T) {
	e := newEnv(t, Options{})
	const bodies, size = 24, 1 << 20
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range bodies {
		v, err := graphson.NewVertex("note", graphson.Properties{"n": fmt.Sprint(i), "text": strings.Repeat("x", size)})
		if err != nil {
			t.Fatal(err)
		}
		e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v}})
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(e.store.known.committed) != bodies {
		t.Fatalf("%d vertices known, want %d", len(e.store.known.committed), bodies)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > bodies*size/3 {
		t.Errorf("the heap kept %d MiB after %d ingests of %d MiB each", grew>>20, bodies, size>>20)
	}
}

// TestKnownVerticesStayBounded: a transaction that wrote more vertices than the
// writer remembers leaves it within its limit, and the memory of those vertices
// goes once they are forgotten (a cleared map keeps its tables at their largest).
func TestKnownVerticesStayBounded(t *testing.T) {
	k := newKnownVertices()
	k.add("a", "short_url")
	k.commit()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, end := range []func(){k.commit, k.rollback} {
		for i := range 4 * knownVerticesLimit {
			k.add(fmt.Sprintf("%064d", i), "short_url")
		}
		end()
	}
	for i := range 3 { // small transactions after
		k.add(fmt.Sprint("small", i), "short_url")
		k.commit()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := len(k.committed); n > knownVerticesLimit || n < 4 {
		t.Errorf("%d vertices remembered, want the first and the small transactions' within %d", n, knownVerticesLimit)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap kept %d MiB after the large transactions were forgotten", grew>>20)
	}
}

// TestRolledBackVertexIsWrittenAgain: a transaction that fails after inserting a
// vertex rolls the vertex back, and the writer must forget it too: remembered as
// stored, the vertex would be skipped by the next ingest of it and never written.
func TestRolledBackVertexIsWrittenAgain(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := t.Context()
	// A failure after the vertex's insert, inside its transaction.
	if _, err := e.store.wdb.ExecContext(ctx, `CREATE TRIGGER boom BEFORE INSERT ON edges WHEN NEW.label = 'boom'
		BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	v := shortURL(t, "rolledBack")
	boom, err := graphson.NewEdge("boom", v, v, graphson.Properties{"n": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := e.ingest(t, docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{boom}})); status == 200 {
		t.Fatal("the failing transaction was acknowledged")
	}
	if _, err := e.store.wdb.ExecContext(ctx, `DROP TRIGGER boom`); err != nil {
		t.Fatal(err)
	}
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v}})
	status, r := e.gremlin(t, lookupQuery, map[string]any{"token": "rolledBack"})
	if status != 200 || !strings.Contains(string(r.Result.Data), "rolledBack") {
		t.Fatalf("the vertex ingested again is not stored: %d %s", status, r.Result.Data)
	}
}
