package localpersist

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linoone/linoone/internal/core/graphson"
)

// migrateFrom brings a version 1 to 5 file to schemaVersion, one version after the
// other, inside migrate's transaction. Edges go from version 2 straight to the
// current table, and from versions 3 to 5 (whose edge tables are alike) gain the
// visitor_ip_address column; vertices were last changed by version 5.
func migrateFrom(ctx context.Context, tx *sql.Tx, version int) error {
	if version == 1 {
		if err := migrateV1(ctx, tx); err != nil {
			return fmt.Errorf("migrate schema 1 to 2: %w", err)
		}
	}
	if version <= 2 {
		if err := migrateV2(ctx, tx); err != nil {
			return fmt.Errorf("migrate schema 2 to 3: %w", err)
		}
	} else if err := migrateV5Edges(ctx, tx); err != nil {
		return fmt.Errorf("migrate schema %d edges to %d: %w", version, schemaVersion, err)
	}
	if version <= 4 {
		if err := migrateVertices(ctx, tx); err != nil {
			return fmt.Errorf("migrate schema %d vertices to %d: %w", max(version, 3), schemaVersion, err)
		}
	}
	return nil
}

// migrateV5Edges gives the edge table of versions 3 to 5 the visitor_ip_address
// column and rebuilds the two indexes whose definitions changed. The indexes go
// first, so that filling the column does not maintain them row by row; edges_in
// and edge_counts are kept. The column is filled in SQL, which reads a stored
// properties JSON as the writer's rule (edgeColumnValues) does: the JSON is
// canonical, so a property is a string exactly when it is stored as a JSON string,
// and ->> unescapes it to the same text (the rule version 5 counted unique
// visitors by). One statement spares the decoding and an UPDATE per row in Go.
func migrateV5Edges(ctx context.Context, tx *sql.Tx) error {
	stmts := []string{
		`DROP INDEX IF EXISTS edges_out`,
		`DROP INDEX IF EXISTS edges_id`,
		`ALTER TABLE edges ADD COLUMN visitor_ip_address TEXT`,
		`UPDATE edges SET visitor_ip_address = properties ->> '$.visitor_ip_address' WHERE json_type(properties, '$.visitor_ip_address') = 'text'`,
		edgesOutIndex,
		edgesIDIndex,
	}
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("add visitor_ip_address: %w", err)
	}
	return nil
}

// migrateVertices rewrites the vertices of versions 1 to 4, a vertices row plus a
// vertex_properties row per property, into version 5 rows that carry their
// properties as canonical JSON and their token in a column, then builds the token
// index. The old vertex indexes go with their tables.
func migrateVertices(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, verticesTable("vertices_v5")); err != nil {
		return fmt.Errorf("create vertices_v5: %w", err)
	}
	if err := copyVertices(ctx, tx); err != nil {
		return err
	}
	return execAll(ctx, tx, []string{
		`DROP TABLE vertex_properties`,
		`DROP TABLE vertices`,
		`ALTER TABLE vertices_v5 RENAME TO vertices`,
		tokenIndex,
	})
}

// copyVertices copies every vertex with its properties into vertices_v5.
func copyVertices(ctx context.Context, tx *sql.Tx) (err error) {
	rows, err := tx.QueryContext(ctx, `SELECT v.id, v.label, v.created_at, p.key, p.kind, p.value
		FROM vertices v LEFT JOIN vertex_properties p ON p.vertex_id = v.id
		ORDER BY v.id`)
	if err != nil {
		return fmt.Errorf("read vertices: %w", err)
	}
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("read vertices: %w", cerr)
		}
	}()
	insert, err := tx.PrepareContext(ctx, insertVertexSQL("vertices_v5"))
	if err != nil {
		return fmt.Errorf("prepare vertices_v5 insert: %w", err)
	}
	defer insert.Close()
	type oldVertex struct{ id, label, createdAt string }
	scan := func(key, kind *sql.NullString, raw *any) (v oldVertex, id string, err error) {
		if err := rows.Scan(&v.id, &v.label, &v.createdAt, key, kind, raw); err != nil {
			return v, "", fmt.Errorf("read vertices: %w", err)
		}
		return v, "vertex " + v.id, nil
	}
	return regroup(rows, scan, func(v oldVertex, p graphson.Properties) error {
		props, err := canonicalVertexProperties(v.label, p)
		if err != nil {
			return fmt.Errorf("vertex %s: %w", v.id, err)
		}
		if _, err := insert.ExecContext(ctx, v.id, v.label, v.createdAt, props, tokenColumn(p)); err != nil {
			return fmt.Errorf("copy vertex %s: %w", v.id, err)
		}
		return nil
	})
}

// regroup reads rows of elements in id order, each row an element's columns and then
// one of its properties as versions 1 to 4 kept them (key, kind and value, all NULL
// for an element without properties), and calls write once per element with its
// properties gathered. scan reads a row and names its element (for errors; equal
// names are one element).
func regroup[E any](rows *sql.Rows, scan func(key, kind *sql.NullString, raw *any) (E, string, error), write func(E, graphson.Properties) error) error {
	var cur E
	var curName string
	var props graphson.Properties
	for rows.Next() {
		var key, kind sql.NullString
		var raw any
		el, name, err := scan(&key, &kind, &raw)
		if err != nil {
			return err
		}
		if props == nil || name != curName {
			if props != nil {
				if err := write(cur, props); err != nil {
					return err
				}
			}
			cur, curName, props = el, name, graphson.Properties{}
		}
		if !key.Valid {
			continue // an element without properties
		}
		v, err := decodeValue(kind.String, raw)
		if err != nil {
			return fmt.Errorf("%s property %s: %w", name, key.String, err)
		}
		props[key.String] = v
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read rows: %w", err)
	}
	if props == nil {
		return nil
	}
	return write(cur, props)
}

// edgesTableV2 is the version 2 edge table, the step between versions 1 and 3.
const edgesTableV2 = `CREATE TABLE edges_v2 (
			seq        INTEGER PRIMARY KEY,
			id         TEXT NOT NULL,
			label      TEXT NOT NULL,
			out_v      TEXT NOT NULL,
			out_label  TEXT NOT NULL,
			in_v       TEXT NOT NULL,
			in_label   TEXT NOT NULL,
			created_at TEXT NOT NULL,
			properties TEXT NOT NULL
		) STRICT`

// migrateV1 rewrites a version 1 file's edges, one edges row plus one
// edge_properties row per property, into version 2 rows carrying their properties
// as canonical JSON. Vertices are laid out alike in all versions. The version 2
// table gets no indexes: migrateV2 replaces it next.
func migrateV1(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, edgesTableV2); err != nil {
		return fmt.Errorf("create edges_v2: %w", err)
	}
	if err := copyV1Edges(ctx, tx); err != nil {
		return err
	}
	stmts := []string{
		`DROP TABLE edge_properties`,
		`DROP TABLE edges`,
		`ALTER TABLE edges_v2 RENAME TO edges`,
	}
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("replace edges: %w", err)
	}
	return nil
}

// migrateV2 copies the version 2 edges, in their order, into the version 3 table,
// fills the property columns from each edge's properties JSON (by the writer's rule,
// edgeColumnValues), and only then builds the version 3 indexes.
func migrateV2(ctx context.Context, tx *sql.Tx) error {
	stmts := []string{
		edgesTable("edges_v3"),
		`INSERT INTO edges_v3 (seq, id, label, out_v, out_label, in_v, in_label, created_at, properties)
			SELECT seq, id, label, out_v, out_label, in_v, in_label, created_at, properties FROM edges ORDER BY seq`,
	}
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("copy edges: %w", err)
	}
	if err := fillEdgeColumns(ctx, tx, "edges_v3"); err != nil {
		return err
	}
	stmts = append([]string{
		`DROP TABLE edges`,
		`ALTER TABLE edges_v3 RENAME TO edges`,
	}, edgeIndexes()...)
	stmts = append(stmts, `INSERT INTO edge_counts (out_v, label, n) SELECT out_v, label, count(*) FROM edges GROUP BY out_v, label`)
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("replace edges: %w", err)
	}
	return nil
}

// fillEdgeColumns sets the property columns of every edge of table (edges_v3 or
// edges, in the current layout) that has a string in one of them.
func fillEdgeColumns(ctx context.Context, tx *sql.Tx, table string) (err error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, id, properties FROM `+table)
	if err != nil {
		return fmt.Errorf("read edges: %w", err)
	}
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("read edges: %w", cerr)
		}
	}()
	update, err := tx.PrepareContext(ctx, `UPDATE `+table+` SET effective_at = ?, user_agent = ?, visitor_ip_address = ? WHERE seq = ?`)
	if err != nil {
		return fmt.Errorf("prepare %s update: %w", table, err)
	}
	defer update.Close()
	for rows.Next() {
		var seq int64
		var id, raw string
		if err := rows.Scan(&seq, &id, &raw); err != nil {
			return fmt.Errorf("read edges: %w", err)
		}
		props, err := decodeProperties(raw)
		if err != nil {
			return fmt.Errorf("edge %s: %w", id, err)
		}
		cols := edgeColumnValues(props)
		if cols == [len(edgeColumnProps)]any{} {
			continue
		}
		if _, err := update.ExecContext(ctx, cols[0], cols[1], cols[2], seq); err != nil {
			return fmt.Errorf("edge %s: %w", id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read edges: %w", err)
	}
	return nil
}

// edgeColumnValues are the values of an edge's property columns, in the order of
// edgeColumnProps: each property when it is a string, else nil (NULL).
func edgeColumnValues(props map[string]any) (cols [len(edgeColumnProps)]any) {
	for i, key := range edgeColumnProps {
		if s, ok := props[key].(string); ok {
			cols[i] = s
		}
	}
	return cols
}

// v1Edge is a version 1 edge row.
type v1Edge struct{ id, label, outV, outLabel, inV, inLabel, createdAt string }

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
	scan := func(key, kind *sql.NullString, raw *any) (e v1Edge, name string, err error) {
		if err := rows.Scan(&e.id, &e.label, &e.outV, &e.outLabel, &e.inV, &e.inLabel, &e.createdAt, key, kind, raw); err != nil {
			return e, "", fmt.Errorf("read v1 edges: %w", err)
		}
		return e, "v1 edge " + e.id, nil
	}
	return regroup(rows, scan, func(e v1Edge, p graphson.Properties) error {
		props, err := canonicalProperties(e.label, e.outV, e.inV, p)
		if err != nil {
			return fmt.Errorf("v1 edge %s: %w", e.id, err)
		}
		if _, err := insert.ExecContext(ctx, e.id, e.label, e.outV, e.outLabel, e.inV, e.inLabel, e.createdAt, props); err != nil {
			return fmt.Errorf("copy v1 edge %s: %w", e.id, err)
		}
		return nil
	})
}

// decodeValue reads a property value of versions 1 to 4, which kept each as a kind
// ('s' TEXT, 'i' INTEGER, 'b' INTEGER 0/1) and a value.
func decodeValue(kind string, v any) (any, error) {
	switch kind {
	case "s":
		switch v := v.(type) {
		case string:
			return v, nil
		case []byte:
			return string(v), nil
		}
	case "i":
		if n, ok := v.(int64); ok {
			return n, nil
		}
	case "b":
		if n, ok := v.(int64); ok {
			return n != 0, nil
		}
	}
	return nil, fmt.Errorf("stored value of kind %q has type %T", kind, v)
}
