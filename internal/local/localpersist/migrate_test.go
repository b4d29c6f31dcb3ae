package localpersist

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/linoone/linoone/internal/core/graphson"
)

// v1Answer is what an older store answered to a query (testdata/persist-v*).
type v1Answer struct {
	Script   string          `json:"script"`
	Bindings map[string]any  `json:"bindings"`
	Data     json.RawMessage `json:"data"`
}

// copyV1 copies the version 1 database made by the v1 store into a fresh directory.
func copyV1(t *testing.T) string {
	t.Helper()
	return copyFixture(t, "testdata/persist-v1")
}

// copyFixture copies the database of a fixture directory into a fresh directory.
func copyFixture(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.Open(filepath.Join(dir, "persist.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "persist.db")
	dst, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) // as Open creates it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkV1Answers asks the store every query of the v1 answers.json and compares.
func checkV1Answers(t *testing.T, e *testEnv) {
	t.Helper()
	checkAnswers(t, e, "testdata/persist-v1")
}

// checkAnswers asks the store every query of a fixture's answers.json and compares.
func checkAnswers(t *testing.T, e *testEnv, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answers []v1Answer
	if err := json.Unmarshal(b, &answers); err != nil {
		t.Fatal(err)
	}
	generic := func(raw []byte) any {
		t.Helper()
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return v
	}
	for _, a := range answers {
		status, r := e.gremlin(t, a.Script, a.Bindings)
		if status != http.StatusOK {
			t.Errorf("%s: HTTP %d: %s", a.Script, status, r.Status.Message)
			continue
		}
		if diff := cmp.Diff(generic(a.Data), generic(r.Result.Data)); diff != "" {
			t.Errorf("%s: answer differs from %s (-then +now):\n%s", a.Script, dir, diff)
		}
	}
}

func TestMigrateV1(t *testing.T) {
	e := openEnv(t, copyV1(t), Options{})
	checkV1Answers(t, e)
	var version int
	if err := e.store.rdb.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version %d (%v), want %d", version, err, schemaVersion)
	}
	checkGone(t, e, "edge_properties", "vertex_properties")
	checkStoredVertices(t, e)
	checkStoredEdges(t, e)
	// The migrated store takes new clicks on old short URLs.
	popular := shortURL(t, "7BTadEDkJ8")
	if r := e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{click(t, popular, "ev_new")}}); r.Edges.Created != 1 {
		t.Errorf("new click after migration: %+v", r)
	}
	if got := e.query(t, countQuery, map[string]any{"token": "7BTadEDkJ8"}); !cmp.Equal(got, []any{int64(4)}) {
		t.Errorf("clicks after migration and one more = %v, want 4", got)
	}
}

// TestMigrateV2 opens a data dir made by the version 2 store (testdata/persist-v2):
// every answer is the same as then, links, clicks and created_at included, and the
// store goes on taking clicks, idempotently.
func TestMigrateV2(t *testing.T) {
	path := copyFixture(t, "testdata/persist-v2")
	e := openEnv(t, path, Options{})
	checkAnswers(t, e, "testdata/persist-v2")
	var version int
	if err := e.store.rdb.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version %d (%v), want %d", version, err, schemaVersion)
	}
	checkGone(t, e, "vertex_properties")
	checkStoredVertices(t, e)
	checkStoredEdges(t, e)
	popular := shortURL(t, "7BTadEDkJ8")
	old := click(t, popular, "ev_1") // stored by the v2 store
	if r := e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{old, click(t, popular, "ev_new")}}); r.Edges.Created != 1 {
		t.Errorf("a replayed and a new click after migration: %+v, want 1 created", r)
	}
	if got := e.query(t, "g.V().has('short_url_token', token).inE('short_url_visited').count()", map[string]any{"token": "7BTadEDkJ8"}); !cmp.Equal(got, []any{int64(6)}) {
		t.Errorf("clicks after migration and one more = %v, want 6", got)
	}
	e.close()
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v after migration, want 0600", p, fi.Mode().Perm())
		}
	}
}

// TestMigrateV3 opens a data dir made by the version 3 store, the one main wrote
// before version 5 (testdata/persist-v3): every answer is the same as then, the
// vertex_properties table and the old vertex indexes are gone and the token index is
// there, every vertex's stored properties hash to its id, and the store goes on
// taking short URLs and clicks and finding them by token.
func TestMigrateV3(t *testing.T) {
	e := openEnv(t, copyFixture(t, "testdata/persist-v3"), Options{})
	checkAnswers(t, e, "testdata/persist-v3")
	var version int
	if err := e.store.rdb.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version %d (%v), want %d", version, err, schemaVersion)
	}
	rows, err := e.store.rdb.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('vertices', 'vertex_properties') AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var indexes []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"vertices_by_created", "vertices_by_token"}; !cmp.Equal(indexes, want) {
		t.Errorf("vertex indexes after migration: %v, want %v", indexes, want)
	}
	checkGone(t, e, "vertex_properties")
	checkStoredVertices(t, e)
	checkStoredEdges(t, e)
	fresh := shortURL(t, "Zz9Yy8Xx7W")
	popular := shortURL(t, "7BTadEDkJ8")
	if r := e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{fresh}, Edges: []graphson.Edge{click(t, fresh, "ev_fresh"), click(t, popular, "ev_1"), click(t, popular, "ev_new")}}); r.Vertices.Created != 1 || r.Edges.Created != 2 {
		t.Errorf("a new short URL, its click, a replayed and a new click after migration: %+v, want 1 vertex and 2 edges created", r)
	}
	for tok, want := range map[string]int64{"Zz9Yy8Xx7W": 1, "7BTadEDkJ8": 6} {
		if got := e.query(t, countQuery, map[string]any{"token": tok}); !cmp.Equal(got, []any{want}) {
			t.Errorf("%s: clicks after migration = %v, want %d", tok, got, want)
		}
	}
}

// TestEdgeCountsAdded: a version 3 file written before edge_counts joined version 3
// (d07cea9 to eb7993f), and one that an earlier build then marked version 5 while it
// failed to open, open with the all-time counts of their clicks.
func TestEdgeCountsAdded(t *testing.T) {
	dropCounts := func(t *testing.T, path string) {
		t.Helper()
		db, err := sql.Open("sqlite", dsn(path, true))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`DROP TABLE edge_counts`); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name    string
		version int
	}{{"version 3 without it", 3}, {"marked version 5 without it", schemaVersion}} {
		t.Run(tt.name, func(t *testing.T) {
			path := copyFixture(t, "testdata/persist-v3")
			if tt.version == schemaVersion {
				s, err := Open(context.Background(), path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			dropCounts(t, path)
			e := openEnv(t, path, Options{})
			if got := e.query(t, countQuery, map[string]any{"token": "7BTadEDkJ8"}); !cmp.Equal(got, []any{int64(5)}) {
				t.Errorf("clicks = %v, want 5", got)
			}
			popular := shortURL(t, "7BTadEDkJ8")
			e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{click(t, popular, "ev_new")}})
			if got := e.query(t, countQuery, map[string]any{"token": "7BTadEDkJ8"}); !cmp.Equal(got, []any{int64(6)}) {
				t.Errorf("clicks after one more = %v, want 6", got)
			}
		})
	}
}

// TestMigrationRecountsEdges: a version 3 binary from before eb7993f adds click edges
// without counting them, also to a file whose edge_counts a later binary made; the
// migration must not keep those counts.
func TestMigrationRecountsEdges(t *testing.T) {
	path := copyFixture(t, "testdata/persist-v3")
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE edge_counts SET n = 2`); err != nil { // clicks added uncounted
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	e := openEnv(t, path, Options{})
	if got := e.query(t, countQuery, map[string]any{"token": "7BTadEDkJ8"}); !cmp.Equal(got, []any{int64(5)}) {
		t.Errorf("all-time clicks = %v after the migration, want the 5 stored", got)
	}
}

// checkGone checks that the migration dropped the named tables of older versions.
func checkGone(t *testing.T, e *testEnv, tables ...string) {
	t.Helper()
	for _, name := range tables {
		var n int
		if err := e.store.rdb.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, name).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s still there (%d, %v)", name, n, err)
		}
	}
}

// checkStoredVertices checks every stored vertex: its properties still hash to its
// id, and its token column holds what the writer would have put there.
func checkStoredVertices(t *testing.T, e *testEnv) {
	t.Helper()
	rows, err := e.store.rdb.Query(`SELECT id, label, properties, token FROM vertices`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, label, raw string
		var token any
		if err := rows.Scan(&id, &label, &raw, &token); err != nil {
			t.Fatal(err)
		}
		props, err := decodeProperties(raw)
		if err != nil {
			t.Fatalf("vertex %s: %v", id, err)
		}
		if want := tokenColumn(props); token != want {
			t.Errorf("vertex %s: token column %v, want %v", id, token, want)
		}
		if got, err := graphson.VertexID(label, props); err != nil || got != id {
			t.Errorf("vertex %s: stored properties %s hash to %s (%v)", id, raw, got, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no vertex rows")
	}
}

// checkStoredEdges checks every stored edge: its properties still hash to its id,
// and its property columns hold what the writer would have put there.
func checkStoredEdges(t *testing.T, e *testEnv) {
	t.Helper()
	edges := e.query(t, "g.V().outE().count()", nil)
	rows, err := e.store.rdb.Query(`SELECT id, label, out_v, in_v, properties, effective_at, user_agent, visitor_ip_address FROM edges`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, label, out, in, raw string
		var cols [len(edgeColumnProps)]any
		if err := rows.Scan(&id, &label, &out, &in, &raw, &cols[0], &cols[1], &cols[2]); err != nil {
			t.Fatal(err)
		}
		props, err := decodeProperties(raw)
		if err != nil {
			t.Fatalf("edge %s: %v", id, err)
		}
		if want := edgeColumnValues(props); cols != want {
			t.Errorf("edge %s: columns %v, want %v", id, cols, want)
		}
		if got, err := graphson.EdgeID(label, out, in, props); err != nil || got != id {
			t.Errorf("edge %s: stored properties %s hash to %s (%v)", id, raw, got, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 || !cmp.Equal(edges, []any{int64(n)}) {
		t.Errorf("%d edge rows, %v edges answered", n, edges)
	}
}

// TestMigrateV1FailsWhole makes the migration fail after it has dropped the v1
// tables (an object already holds a name it creates last): the transaction rolls
// back and the file is the v1 file still, which migrates once the obstacle is gone.
func TestMigrateV1FailsWhole(t *testing.T) {
	path := copyV1(t)
	raw := func(stmt string) {
		t.Helper()
		db, err := sql.Open("sqlite", dsn(path, true))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw(`CREATE TABLE edges_in (x ANY) STRICT`)
	if st, err := Open(context.Background(), path, Options{}); err == nil {
		st.Close()
		t.Fatal("migration succeeded despite the obstacle")
	} else if !strings.Contains(err.Error(), "migrate schema 2 to 3") {
		t.Fatalf("open: %v", err)
	}

	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	var version, props int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 1 {
		t.Errorf("user_version after a failed migration: %d (%v), want 1", version, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM edge_properties`).Scan(&props); err != nil || props == 0 {
		t.Errorf("v1 edge_properties after a failed migration: %d rows (%v)", props, err)
	}
	db.Close()

	raw(`DROP TABLE edges_in`)
	checkV1Answers(t, openEnv(t, path, Options{}))
}
