package localpersist

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/graphson"
)

// v5Schema is the layout version 5 wrote (schema.go before version 6), kept here
// so that the test builds a real version 5 file instead of committing one.
var v5Schema = []string{
	`CREATE TABLE vertices (
			id         TEXT NOT NULL PRIMARY KEY,
			label      TEXT NOT NULL,
			created_at TEXT NOT NULL,
			properties TEXT NOT NULL,
			token      TEXT
		) STRICT, WITHOUT ROWID`,
	`CREATE INDEX vertices_by_token ON vertices (token, label) WHERE token IS NOT NULL`,
	`CREATE INDEX vertices_by_created ON vertices (created_at, token) WHERE token IS NOT NULL`,
	`CREATE TABLE edges (
			seq          INTEGER PRIMARY KEY,
			id           TEXT NOT NULL,
			label        TEXT NOT NULL,
			out_v        TEXT NOT NULL,
			out_label    TEXT NOT NULL,
			in_v         TEXT NOT NULL,
			in_label     TEXT NOT NULL,
			created_at   TEXT NOT NULL,
			properties   TEXT NOT NULL,
			effective_at TEXT,
			user_agent   TEXT
		) STRICT`,
	`CREATE UNIQUE INDEX edges_out ON edges (out_v, label, effective_at, user_agent, id)`,
	`CREATE UNIQUE INDEX edges_id ON edges (id) WHERE effective_at IS NULL OR user_agent IS NULL`,
	`CREATE INDEX edges_in ON edges (in_v, label) WHERE in_v <> out_v`,
	`CREATE TABLE edge_counts (
			out_v TEXT NOT NULL,
			label TEXT NOT NULL,
			n     INTEGER NOT NULL CHECK (n >= 0),
			PRIMARY KEY (out_v, label)
		) STRICT, WITHOUT ROWID`,
	`PRAGMA user_version = 5`,
}

// v5Graph is the graph of the version 5 file: five short URLs and their clicks,
// with repeated addresses, IPv6 addresses (two spellings of one address are two
// strings, as they always were), an address JSON must escape, clicks without an
// address, a user agent or a time,
// and on the last link an address that is not a string.
func v5Graph(t *testing.T) graphson.Document {
	t.Helper()
	ips := []string{"192.0.2.1", "192.0.2.2", "2001:db8::1", "2001:db8::2", "2001:DB8::1", "::ffff:192.0.2.1", "198.51.100.7",
		"fe80::1%eth0", "\"odd\" \\ <a&b> \u2028 \U0001F600 \x01"} // what the JSON escapes, as the SQL fill must read it back
	uas := []string{"Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", "Slackbot 1.0", "curl/8.5.0"}
	var doc graphson.Document
	for l := range 5 {
		u := shortURL(t, fmt.Sprintf("V5link%04d", l))
		doc.Vertices = append(doc.Vertices, u)
		for i := range 30 + 9*l {
			p := graphson.Properties{"event_identifier": fmt.Sprintf("ev_%d_%d", l, i)}
			if i%7 != 3 {
				p["visitor_ip_address"] = ips[(i*(l+1))%len(ips)]
			}
			if i%11 != 5 {
				p["user_agent"] = uas[i%len(uas)]
			}
			if i%13 != 8 {
				p["effective_at"] = fmt.Sprintf("2026-11-%02dT%02d:%02d:00.000Z", 27+i%3, i%24, (i*7)%60)
			}
			if l == 4 && i == 10 {
				p["visitor_ip_address"] = int64(3221225985) // 192.0.2.1 as a number
			}
			e, err := graphson.NewEdge("short_url_visited", u, u, p)
			if err != nil {
				t.Fatal(err)
			}
			doc.Edges = append(doc.Edges, e)
		}
	}
	return doc
}

// writeV5 creates a version 5 database at path holding doc, its rows as the
// version 5 writer made them.
func writeV5(t *testing.T, path string, doc graphson.Document) {
	t.Helper()
	createPrivate(path)
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range v5Schema {
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	const at = "2026-11-26T12:00:00.000Z"
	for _, v := range doc.Vertices {
		props, err := canonicalVertexProperties(v.Label, v.Properties)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO vertices (id, label, created_at, properties, token) VALUES (?, ?, ?, ?, ?)`,
			v.ID, v.Label, at, props, tokenColumn(v.Properties)); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range doc.Edges {
		props, err := canonicalProperties(e.Label, e.OutV, e.InV, e.Properties)
		if err != nil {
			t.Fatal(err)
		}
		cols := edgeColumnValues(e.Properties)
		if _, err := tx.Exec(`INSERT INTO edges (id, label, out_v, out_label, in_v, in_label, created_at, properties, effective_at, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.Label, e.OutV, e.OutVLabel, e.InV, e.InVLabel, at, props, cols[0], cols[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`INSERT INTO edge_counts (out_v, label, n) SELECT out_v, label, count(*) FROM edges GROUP BY out_v, label`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// statsQuery asks what a link's stats ask for three days from 2026-11-27: all its
// clicks, and for the window and each day its distinct visitor addresses and its
// clicks by user agent. generic inserts a filter that matches every click and is
// never answered in SQL, so that the steps after it are evaluated in Go, as they
// would be without the property columns.
func statsQuery(generic bool) string {
	bounds := []string{"'2026-11-27'", "'2026-11-28'", "'2026-11-29'", "'2026-11-30'"}
	clicks := "__.outE('short_url_visited')"
	if generic {
		clicks += ".has('event_identifier', neq('none'))"
	}
	window := func(from, to string) string {
		return clicks + ".has('effective_at', gte(" + from + ")).has('effective_at', lt(" + to + "))"
	}
	keys := []string{"'clicks'", "'w'"}
	bys := []string{".by(" + clicks + ".count())", ".by(" + window(bounds[0], bounds[3]) + ".values('visitor_ip_address').dedup().count())"}
	for i := range 3 {
		keys = append(keys, fmt.Sprintf("'u%d'", i), fmt.Sprintf("'d%d'", i))
		bys = append(bys, ".by("+window(bounds[i], bounds[i+1])+".values('visitor_ip_address').dedup().count())",
			".by("+window(bounds[i], bounds[i+1])+".groupCount().by('user_agent'))")
	}
	return "g.V().hasLabel('short_url').has('short_url_token', tok).project(" + strings.Join(keys, ",") + ")" + strings.Join(bys, "")
}

// TestMigrateV5 opens a version 5 file: it becomes version 6 in one go, every click's
// visitor_ip_address column holds what the writer would put there, and every link's
// clicks and unique visitors answer as the generic evaluation answers them, as a
// store that ingested the same graph answers them, and as counted here.
func TestMigrateV5(t *testing.T) {
	doc := v5Graph(t)
	path := filepath.Join(t.TempDir(), "persist.db")
	writeV5(t, path, doc)
	e := openEnv(t, path, Options{})
	var version int
	if err := e.store.rdb.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 6 {
		t.Errorf("user_version %d (%v), want 6", version, err)
	}
	var def string
	if err := e.store.rdb.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'edges_out'`).Scan(&def); err != nil || !strings.Contains(def, "visitor_ip_address") {
		t.Errorf("edges_out after migration: %q (%v), want visitor_ip_address in it", def, err)
	}
	checkStoredEdges(t, e)
	checkStoredVertices(t, e)

	fresh := newEnv(t, Options{})
	fresh.mustIngest(t, doc)
	want := countVisitors(doc)
	for l := range 5 {
		tok := map[string]any{"tok": fmt.Sprintf("V5link%04d", l)}
		migrated := e.query(t, statsQuery(false), tok)
		if d := cmp.Diff(e.query(t, statsQuery(true), tok), migrated); d != "" {
			t.Errorf("%s: answered from the columns and in Go differ (-go +columns):\n%s", tok["tok"], d)
		}
		if d := cmp.Diff(fresh.query(t, statsQuery(false), tok), migrated); d != "" {
			t.Errorf("%s: migrated and ingested stores differ (-ingested +migrated):\n%s", tok["tok"], d)
		}
		if len(migrated) != 1 {
			t.Fatalf("%s: %v", tok["tok"], migrated)
		}
		m := migrated[0].(map[string]any)
		for _, k := range []string{"clicks", "w", "u0", "u1", "u2"} {
			if m[k] != want[l][k] {
				t.Errorf("%s %s = %v, want %d", tok["tok"], k, m[k], want[l][k])
			}
		}
	}

	// The migrated indexes keep a replayed click, with or without an address, from
	// being stored twice.
	if r := e.mustIngest(t, graphson.Document{Edges: doc.Edges[:8]}); r.Edges.Created != 0 {
		t.Errorf("replayed clicks after migration: %+v, want none created", r)
	}
	if got := e.query(t, countQuery, map[string]any{"token": "V5link0000"}); !cmp.Equal(got, []any{want[0]["clicks"]}) {
		t.Errorf("clicks after a replay = %v, want %v", got, want[0]["clicks"])
	}
}

// countVisitors counts, per link of v5Graph, its clicks and the distinct visitor
// addresses of the window ("w") and of each of its days ("u<i>"), of any type.
func countVisitors(doc graphson.Document) []map[string]any {
	var out []map[string]any
	for _, v := range doc.Vertices {
		clicks := int64(0)
		sets := map[string]map[any]bool{"w": {}, "u0": {}, "u1": {}, "u2": {}}
		for _, e := range doc.Edges {
			if e.OutV != v.ID {
				continue
			}
			clicks++
			at, _ := e.Properties["effective_at"].(string)
			ip, ok := e.Properties["visitor_ip_address"]
			if !ok || len(at) < 10 || at[:10] < "2026-11-27" || at[:10] > "2026-11-29" {
				continue
			}
			sets["w"][ip] = true
			sets[fmt.Sprintf("u%d", at[9]-'7')][ip] = true
		}
		m := map[string]any{"clicks": clicks}
		for k, s := range sets {
			m[k] = int64(len(s))
		}
		out = append(out, m)
	}
	return out
}

// TestMigrateV5FailsWhole: a version 5 file whose migration fails part-way (a
// click's stored properties do not decode, after the column was added and other
// clicks filled) is left as it was, and migrates once repaired.
func TestMigrateV5FailsWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "persist.db")
	writeV5(t, path, v5Graph(t))
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	var good string
	if err := db.QueryRow(`SELECT properties FROM edges WHERE seq = 20`).Scan(&good); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE edges SET properties = '{"event_identifier":' WHERE seq = 20`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if st, err := Open(context.Background(), path, Options{}); err == nil {
		st.Close()
		t.Fatal("migration succeeded despite the broken click")
	} else if !strings.Contains(err.Error(), "migrate schema 5 edges to 6") {
		t.Fatalf("open: %v", err)
	}
	db, err = sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	var version, cols int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 5 {
		t.Errorf("user_version after a failed migration: %d (%v), want 5", version, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('edges') WHERE name = 'visitor_ip_address'`).Scan(&cols); err != nil || cols != 0 {
		t.Errorf("visitor_ip_address column after a failed migration: %d (%v), want none", cols, err)
	}
	db.Close()
	db, err = sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE edges SET properties = ? WHERE seq = 20`, good); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e := openEnv(t, path, Options{})
	checkStoredEdges(t, e)
}

// TestMigrateV5WithoutEdgeCounts: a file an earlier build marked version 5 without
// edge_counts (see addEdgeCounts) migrates with its links' all-time counts.
func TestMigrateV5WithoutEdgeCounts(t *testing.T) {
	doc := v5Graph(t)
	path := filepath.Join(t.TempDir(), "persist.db")
	writeV5(t, path, doc)
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE edge_counts`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e := openEnv(t, path, Options{})
	for l, want := range countVisitors(doc) {
		tok := map[string]any{"token": fmt.Sprintf("V5link%04d", l)}
		if got := e.query(t, countQuery, tok); !cmp.Equal(got, []any{want["clicks"]}) {
			t.Errorf("%s: clicks = %v, want %v", tok["token"], got, want["clicks"])
		}
	}
}
