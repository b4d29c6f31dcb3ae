package localpersist

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaVersion is stored in PRAGMA user_version; a file written by a newer schema
// is refused rather than misread.
const schemaVersion = 1

// schema returns the statements that create the storage layout. Elements are
// immutable (an id is the hash of what the element is), so the vertex label is copied
// into vertex_properties and the endpoint labels into edges without any risk of the
// copies drifting.
//
// Property values keep their type: kind is 's' (TEXT value), 'i' (INTEGER) or 'b'
// (INTEGER 0/1), and value is an ANY column, so "1", 1 and true never compare equal.
// created_at is server-managed and lives in a column, never among the properties the
// identity was hashed from.
func schema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS vertices (
			id         TEXT NOT NULL PRIMARY KEY,
			label      TEXT NOT NULL,
			created_at TEXT NOT NULL
		) STRICT, WITHOUT ROWID`,
		`CREATE INDEX IF NOT EXISTS vertices_by_label ON vertices (label)`,
		`CREATE TABLE IF NOT EXISTS vertex_properties (
			vertex_id TEXT NOT NULL REFERENCES vertices (id),
			key       TEXT NOT NULL,
			label     TEXT NOT NULL,
			kind      TEXT NOT NULL CHECK (kind IN ('s', 'i', 'b')),
			value     ANY NOT NULL,
			PRIMARY KEY (vertex_id, key)
		) STRICT, WITHOUT ROWID`,
		// has(key, value), with or without hasLabel: an equality search on
		// (key, kind, value[, label]) that also covers the vertex id.
		`CREATE INDEX IF NOT EXISTS vertex_properties_by_value ON vertex_properties (key, kind, value, label)`,
		`CREATE TABLE IF NOT EXISTS edges (
			id         TEXT NOT NULL PRIMARY KEY,
			label      TEXT NOT NULL,
			out_v      TEXT NOT NULL REFERENCES vertices (id),
			out_label  TEXT NOT NULL,
			in_v       TEXT NOT NULL REFERENCES vertices (id),
			in_label   TEXT NOT NULL,
			created_at TEXT NOT NULL
		) STRICT, WITHOUT ROWID`,
		`CREATE INDEX IF NOT EXISTS edges_by_out ON edges (out_v, label)`,
		`CREATE INDEX IF NOT EXISTS edges_by_in ON edges (in_v, label)`,
		`CREATE TABLE IF NOT EXISTS edge_properties (
			edge_id TEXT NOT NULL REFERENCES edges (id),
			key     TEXT NOT NULL,
			kind    TEXT NOT NULL CHECK (kind IN ('s', 'i', 'b')),
			value   ANY NOT NULL,
			PRIMARY KEY (edge_id, key)
		) STRICT, WITHOUT ROWID`,
	}
}

// migrate creates the schema if it is missing, in one immediate transaction so that
// processes opening a new file at the same time do not race.
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
	if version > schemaVersion {
		return fmt.Errorf("database schema version %d is newer than this program's %d", version, schemaVersion)
	}
	for _, stmt := range schema() {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	if version < schemaVersion {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
			return fmt.Errorf("set user_version: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
