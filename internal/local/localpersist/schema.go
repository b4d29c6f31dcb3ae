package localpersist

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaVersion is stored in PRAGMA user_version; a file written by a newer schema
// is refused rather than misread, an older one is migrated on open.
//
// Version 1 kept one edge_properties row per edge property. Version 2 keeps an
// edge's properties in one column of its row: a click is one row, not five. Version 3
// keeps the same rows with two properties also in columns of their own and indexes
// them so that a click pays one append-mostly index entry (see edgeIndexes). Version 5
// does for vertices what version 2 did for edges, and indexes the token alone (see
// tokenKey). (Version 4, which only narrowed the vertex indexes, never left
// development; a file of it migrates like one of version 3.) Version 6 keeps a third
// edge property, visitor_ip_address, in a column and in edges_out, so that a link's
// unique visitors are counted from the index (see edgeColumnProps).
const schemaVersion = 6

// tokenKey is the one vertex property with a column and an index of its own: what
// the service looks short URLs up by (SPEC: an index on short_url_token). Versions up
// to 3 kept a vertex_properties row per property and indexed every property's value
// and every vertex's label, lookups the service never makes: a new short URL took
// four statements and dirtied six random pages (its row, its label entry, its
// property rows, and the entries of its token, path and target), each written to the
// WAL at the commit that dirtied it. Now it takes one statement and two pages. A
// has() on any other key, or a hasLabel() alone, still answers the same, by reading
// the table.
const tokenKey = "short_url_token"

// schema returns the statements that create the storage layout. Elements are
// immutable (an id is the hash of what the element is), so the endpoint labels are
// copied into edges without any risk of the copies drifting.
//
// An element is one row, whose properties column holds the canonical JSON of its
// typed properties, exactly the "properties" member its identity was hashed from
// (schemas/IDENTITY.md), so "1", 1 and true never compare equal. A vertex's token
// column holds its tokenKey property when that is a string and NULL otherwise
// (absent, or of another type: the properties JSON stays the only truth).
//
// Edges are many (one per click) and are found through their endpoints. Edges are a
// rowid table, so a batch of new edges is appended rather than scattered over the
// pages of an id-ordered tree. Endpoints carry no REFERENCES clause: the writer
// checks them (parseIngest and checkStoredEndpoints), and a foreign key would cost two
// more lookups per click. created_at is server-managed and lives in a column, never
// among the properties the identity was hashed from.
func schema() []string {
	return []string{
		verticesTable("vertices"),
		tokenIndex,
		createdIndex,
		edgesTable("edges"),
	}
}

// verticesTable creates the version 5 vertex table under name.
func verticesTable(name string) string {
	return `CREATE TABLE IF NOT EXISTS ` + name + ` (
			id         TEXT NOT NULL PRIMARY KEY,
			label      TEXT NOT NULL,
			created_at TEXT NOT NULL,
			properties TEXT NOT NULL,
			token      TEXT
		) STRICT, WITHOUT ROWID`
}

// tokenIndex serves has(tokenKey, string…), with or without hasLabel: an equality
// search on (token[, label]) that yields the vertex ids in order. It is partial: a
// vertex without a string token pays no entry.
const tokenIndex = `CREATE INDEX IF NOT EXISTS vertices_by_token ON vertices (token, label) WHERE token IS NOT NULL`

// createdIndex answers a listing, newest first: order().by('created_at', desc)
// .by('short_url_token', desc) after hasLabel(), and its cursor, a range of
// (created_at, token). A database of an earlier build gains it when opened.
const createdIndex = `CREATE INDEX IF NOT EXISTS vertices_by_created ON vertices (created_at, token) WHERE token IS NOT NULL`

// edgeColumnProps are the edge properties that version 3 (the first two) and version
// 6 (the third) also keep in a column of the same name, holding the value when it is
// a string and NULL otherwise (absent, or of another type: the properties JSON stays
// the only truth). A click's time and user agent are what its stats select and group
// by, and its visitor's address what they count distinct values of; having them in
// the out index lets the stats read an index range instead of decoding every click's
// JSON. The columns are a storage detail of local Persist, copies of properties the
// edge already carries (SPEC §3, §4): no property is added to an edge or a vertex,
// an element's identity and its answers are those of its properties JSON alone.
var edgeColumnProps = [...]string{"effective_at", "user_agent", "visitor_ip_address"}

// edgesTable creates the version 6 edge table under name.
func edgesTable(name string) string {
	return `CREATE TABLE IF NOT EXISTS ` + name + ` (
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
			user_agent   TEXT,
			visitor_ip_address TEXT
		) STRICT`
}

// edgeIndexes index the version 6 edge table (version 3's, with visitor_ip_address
// in edges_out and in the condition of edges_id). Version 2 had edges_out UNIQUE (out_v,
// label, id) and edges_in (in_v, label): the random id inside edges_out dirtied about
// one page per click and edges_in doubled the index work of a click, whose in-vertex
// is its out-vertex. Measured on 500-click batches (BenchmarkIngestClickFacts, one
// core) and a 100,000-click stats read (BenchmarkStats100k), see the commit message.
//
//   - edges_out orders a vertex's edges of a label by (effective_at, user_agent,
//     visitor_ip_address) and serves outE, the loops of inE, counting, and a stats
//     window, its clicks by user agent and its distinct visitors, as a covering range
//     scan. Clicks arrive roughly in time order, so new entries land on the last
//     pages of their short URL's range instead of anywhere. It ends with the id and
//     is unique: an id is the hash of the label, the endpoints and the properties, so
//     the other columns are functions of it and the tuple is unique exactly when the
//     id is, which makes it the idempotency check of a click, at no extra entry.
//   - A UNIQUE index treats NULLs as distinct, so edges_id checks the id of the edges
//     edges_out cannot (no string effective_at, user_agent or visitor_ip_address). It is partial: clicks
//     pay no entry in it, and a replayed edge lands in the same index as the first
//     copy, since the condition is a function of the id too.
//   - edges_in is partial: a self-loop (every click) is found through edges_out,
//     so only edges between two vertices pay an entry; inE reads both (inEdges).
func edgeIndexes() []string {
	return []string{
		edgesOutIndex,
		edgesIDIndex,
		`CREATE INDEX IF NOT EXISTS edges_in ON edges (in_v, label) WHERE in_v <> out_v`,
		edgeCountsTable,
	}
}

const (
	edgesOutIndex = `CREATE UNIQUE INDEX IF NOT EXISTS edges_out ON edges (out_v, label, effective_at, user_agent, visitor_ip_address, id)`
	edgesIDIndex  = `CREATE UNIQUE INDEX IF NOT EXISTS edges_id ON edges (id) WHERE effective_at IS NULL OR user_agent IS NULL OR visitor_ip_address IS NULL`
)

// edgeCountsTable keeps, for each vertex and label, how many edges leave it: what
// outE(label).count() answers without a filter (a short URL's all-time clicks),
// without stepping through its whole range of edges_out. The writer adds what each
// transaction created, in that transaction (countEdges trusts it); the migration to
// version 3 counts what the file held.
const edgeCountsTable = `CREATE TABLE IF NOT EXISTS edge_counts (
			out_v TEXT NOT NULL,
			label TEXT NOT NULL,
			n     INTEGER NOT NULL CHECK (n >= 0),
			PRIMARY KEY (out_v, label)
		) STRICT, WITHOUT ROWID`

// migrate brings the file to schemaVersion in one immediate transaction, so that
// processes opening a file at the same time do not race and a failure (or a crash)
// part-way leaves the file as it was.
func migrate(ctx context.Context, db *sql.DB) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var version int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("read user_version: %w", err)
	}
	switch {
	case version > schemaVersion:
		return fmt.Errorf("database schema version %d is newer than this program's %d", version, schemaVersion)
	case version == schemaVersion:
		if _, err := tx.ExecContext(ctx, createdIndex); err != nil {
			return fmt.Errorf("create index: %w", err)
		}
		if _, err := addEdgeCounts(ctx, tx); err != nil {
			return err
		}
		return tx.Commit()
	case version >= 1 && version <= 5:
		if err := migrateFrom(ctx, tx, version); err != nil {
			return err
		}
		if version <= 4 {
			err = recountEdges(ctx, tx)
		} else {
			_, err = addEdgeCounts(ctx, tx)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, createdIndex); err != nil {
			return fmt.Errorf("create index: %w", err)
		}
	default:
		if err := execAll(ctx, tx, append(schema(), edgeIndexes()...)); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return fmt.Errorf("set user_version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// addEdgeCounts creates edge_counts, counting the stored edges, in a file that lacks
// it. Version 3 gained the table a few commits after it was first written (at
// eb7993f, without a version of its own), so a file written in between is version 3
// without it; before this check, migrating such a file set version 5 and then
// failed to open, for good.
func addEdgeCounts(ctx context.Context, tx *sql.Tx) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'edge_counts'`).Scan(&n); err != nil {
		return false, fmt.Errorf("look for edge_counts: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	err := execAll(ctx, tx, []string{
		edgeCountsTable,
		`INSERT INTO edge_counts (out_v, label, n) SELECT out_v, label, count(*) FROM edges GROUP BY out_v, label`,
	})
	if err != nil {
		return false, fmt.Errorf("add edge_counts: %w", err)
	}
	return true, nil
}

// recountEdges makes edge_counts hold the counts of the stored edges, creating it
// where it is missing, whatever it held: a version 3 binary from before eb7993f adds
// edges without counting them, also to a file whose table a later binary made, so a
// file migrated from version 4 or lower cannot trust the counts it has.
func recountEdges(ctx context.Context, tx *sql.Tx) error {
	err := execAll(ctx, tx, []string{
		edgeCountsTable,
		`DELETE FROM edge_counts`,
		`INSERT INTO edge_counts (out_v, label, n) SELECT out_v, label, count(*) FROM edges GROUP BY out_v, label`,
	})
	if err != nil {
		return fmt.Errorf("count edges: %w", err)
	}
	return nil
}

func execAll(ctx context.Context, tx *sql.Tx, stmts []string) error {
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}
