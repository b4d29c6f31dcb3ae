package localpersist

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linoone/linoone/internal/graphson"
)

// migrateV1 rewrites a version 1 file's edges, one edges row plus one
// edge_properties row per property, into version 2 rows carrying their properties
// as canonical JSON. Vertices are laid out alike in both versions. It runs inside
// migrate's transaction.
func migrateV1(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, edgesTable("edges_v2")); err != nil {
		return fmt.Errorf("create edges_v2: %w", err)
	}
	if err := copyV1Edges(ctx, tx); err != nil {
		return err
	}
	stmts := append([]string{
		`DROP TABLE edge_properties`,
		`DROP TABLE edges`,
		`ALTER TABLE edges_v2 RENAME TO edges`,
	}, edgeIndexes()...)
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("replace edges: %w", err)
	}
	return nil
}

// v1Edge is a version 1 edge row with its properties gathered.
type v1Edge struct {
	id, label, outV, outLabel, inV, inLabel, createdAt string
	props                                              graphson.Properties
}

// copyV1Edges copies every version 1 edge into edges_v2, oldest first.
func copyV1Edges(ctx context.Context, tx *sql.Tx) (err error) {
	rows, err := tx.QueryContext(ctx, `SELECT e.id, e.label, e.out_v, e.out_label, e.in_v, e.in_label, e.created_at, p.key, p.kind, p.value
		FROM edges e LEFT JOIN edge_properties p ON p.edge_id = e.id
		ORDER BY e.created_at, e.id`)
	if err != nil {
		return fmt.Errorf("read v1 edges: %w", err)
	}
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("read v1 edges: %w", cerr)
		}
	}()
	insert, err := tx.PrepareContext(ctx, `INSERT INTO edges_v2 (id, label, out_v, out_label, in_v, in_label, created_at, properties) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("prepare edges_v2 insert: %w", err)
	}
	defer insert.Close()
	var cur *v1Edge
	flush := func() error {
		if cur == nil {
			return nil
		}
		props, err := canonicalProperties(cur.label, cur.outV, cur.inV, cur.props)
		if err != nil {
			return fmt.Errorf("v1 edge %s: %w", cur.id, err)
		}
		if _, err := insert.ExecContext(ctx, cur.id, cur.label, cur.outV, cur.outLabel, cur.inV, cur.inLabel, cur.createdAt, props); err != nil {
			return fmt.Errorf("copy v1 edge %s: %w", cur.id, err)
		}
		return nil
	}
	for rows.Next() {
		var e v1Edge
		var key, kind sql.NullString
		var raw any
		if err := rows.Scan(&e.id, &e.label, &e.outV, &e.outLabel, &e.inV, &e.inLabel, &e.createdAt, &key, &kind, &raw); err != nil {
			return fmt.Errorf("read v1 edges: %w", err)
		}
		if cur == nil || cur.id != e.id {
			if err := flush(); err != nil {
				return err
			}
			e.props = graphson.Properties{}
			cur = &e
		}
		if !key.Valid {
			continue // an edge without properties
		}
		v, err := decodeValue(kind.String, raw)
		if err != nil {
			return fmt.Errorf("v1 edge %s property %s: %w", e.id, key.String, err)
		}
		cur.props[key.String] = v
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read v1 edges: %w", err)
	}
	return flush()
}
