package localpersist

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// edgeScan is an outE() or inE() step together with the has() steps right after it
// that compare a property column (edgeColumnProps) with a string. Those filters are
// answered by the SQL that reads the edges, through edges_out, instead of by decoding
// every edge's properties; has() steps commute, so folding them changes nothing but
// the cost.
type edgeScan struct {
	st    *step
	conds []string // over the property columns, ANDed
	args  []any
}

// foldEdgeScan returns the scan of steps[i] (outE or inE) and the index of the last
// step it answers.
func foldEdgeScan(steps []step, i int) (edgeScan, int) {
	sc := edgeScan{st: &steps[i]}
	for i+1 < len(steps) {
		cond, arg, ok := columnCondition(&steps[i+1])
		if !ok {
			break
		}
		sc.conds = append(sc.conds, cond)
		sc.args = append(sc.args, arg)
		i++
	}
	return sc, i
}

// columnSQLOps are the comparisons a property column answers exactly as
// predicate.test does for strings. neq is not among them: a property of another
// type is neq any string, and its column is NULL.
var columnSQLOps = map[string]string{"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

// columnCondition is st as a condition on a property column, if it is a has() on
// one compared with a string: the column holds exactly the string-valued properties,
// and SQLite compares TEXT by its bytes, as compareValues does.
func columnCondition(st *step) (string, any, bool) {
	if st.kind != stepHas || !isEdgeColumn(st.key) {
		return "", nil, false
	}
	if st.pred == nil {
		s, ok := st.value.(string)
		return st.key + " = ?", s, ok
	}
	op, ok := columnSQLOps[st.pred.op]
	if s, isString := st.pred.value.(string); ok && isString {
		return st.key + " " + op + " ?", s, true
	}
	return "", nil, false
}

func isEdgeColumn(key string) bool { return slices.Contains(edgeColumnProps[:], key) }

// query is the SELECT of cols over the edges of vertex id that sc selects. An inE()
// reads edges between two vertices through the partial edges_in and the self-loops,
// which edges_in leaves out, through edges_out.
func (sc *edgeScan) query(cols, id string) (string, []any) {
	var b strings.Builder
	var args []any
	branch := func(where string) {
		b.WriteString("SELECT " + cols + " FROM edges WHERE " + where)
		args = append(args, id)
		if labels := sc.st.labels; len(labels) > 0 {
			b.WriteString(" AND label IN (" + placeholders(len(labels)) + ")")
			for _, l := range labels {
				args = append(args, l)
			}
		}
		for _, c := range sc.conds {
			b.WriteString(" AND " + c)
		}
		args = append(args, sc.args...)
	}
	if sc.st.kind == stepOutE {
		branch("out_v = ?")
		return b.String(), args
	}
	branch("in_v = ? AND in_v <> out_v")
	b.WriteString(" UNION ALL ")
	branch("out_v = ? AND in_v = out_v")
	return b.String(), args
}

// edgeSteps answers the outE() or inE() at steps[i] with the filters it folds, and
// a count() or groupCount().by(column) right after them in SQL. It returns the
// results and the index of the last step it answered.
func (s *Store) edgeSteps(ctx context.Context, src string, steps []step, i int, in []any) ([]any, int, error) {
	sc, i := foldEdgeScan(steps, i)
	if i+1 < len(steps) {
		switch next := &steps[i+1]; {
		case next.kind == stepCount:
			n, err := s.countEdges(ctx, src, &sc, in)
			return []any{n}, i + 1, err
		case next.kind == stepGroupCount && isEdgeColumn(next.key):
			counts, err := s.groupCountEdges(ctx, src, &sc, next, in)
			return []any{counts}, i + 1, err
		case distinctCountFollows(steps[i+1:]):
			n, ok, err := s.countDistinctStrings(ctx, src, &sc, steps[i+1].key, in)
			if err != nil || ok {
				return []any{n}, i + 3, err
			}
		}
	}
	out, err := s.edges(ctx, src, &sc, in)
	return out, i, err
}

// distinctCountFollows reports whether steps start with values(key).dedup().count()
// for a key that can be written in a JSON path without quoting.
func distinctCountFollows(steps []step) bool {
	return len(steps) >= 3 && steps[0].kind == stepValues && steps[1].kind == stepDedup &&
		steps[2].kind == stepCount && plainKey.MatchString(steps[0].key)
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// countDistinctStrings answers values(key).dedup().count() over the edges sc
// selects in SQL: how a unique visitor is counted. Only string values are counted
// there, where SQL and Go equality agree; ok is false when some edge holds key with
// another type, and the caller evaluates the steps in Go instead.
func (s *Store) countDistinctStrings(ctx context.Context, src string, sc *edgeScan, key string, in []any) (n int64, ok bool, err error) {
	if len(in) != 1 { // distinct over several vertices' edges: one set, left to Go
		return 0, false, nil
	}
	v, err := asVertex(src, sc.st, in[0])
	if err != nil {
		return 0, false, err
	}
	var others int64
	if isEdgeColumn(key) {
		n, others, err = s.countDistinctColumn(ctx, sc, key, v.id)
	} else {
		q, args := sc.query("properties", v.id)
		path := "$." + key
		err = s.queryRow(ctx, "SELECT count(DISTINCT CASE WHEN t = 'text' THEN x END), count(CASE WHEN t <> 'text' THEN 1 END) "+
			"FROM (SELECT json_type(properties, ?) AS t, properties ->> ? AS x FROM ("+q+"))", append([]any{path, path}, args...), &n, &others)
	}
	if err != nil {
		return 0, false, fmt.Errorf("count distinct %s of the edges of %s: %w", key, v.id, err)
	}
	return n, others == 0, nil
}

// countDistinctColumn counts the distinct values of a property column (a unique
// visitor's address has one) over the edges sc selects from vertex id, and the
// edges that hold key with a type other than string. The count reads edges_out
// alone. An edge whose column is NULL lacks the key or holds another type, which
// only its JSON tells: those edges, rare, are read again from the table.
func (s *Store) countDistinctColumn(ctx context.Context, sc *edgeScan, key, id string) (n, others int64, err error) {
	q, args := distinctColumnQuery(sc, key, id)
	var nulls int64
	if err := s.queryRow(ctx, q, args, &n, &nulls); err != nil || nulls == 0 {
		return n, 0, err
	}
	rest := *sc
	rest.conds = append(slices.Clip(rest.conds), key+" IS NULL")
	q, args = rest.query("properties", id)
	err = s.queryRow(ctx, "SELECT count(*) FROM ("+q+") WHERE json_type(properties, ?) IS NOT NULL", append(args, "$."+key), &others)
	return n, others, err
}

// distinctColumnQuery is the SELECT of the distinct values of column key, and of
// the edges where it is NULL, over the edges sc selects from vertex id.
func distinctColumnQuery(sc *edgeScan, key, id string) (string, []any) {
	q, args := sc.query(key, id)
	return "SELECT count(DISTINCT " + key + "), count(*) - count(" + key + ") FROM (" + q + ")", args
}

func (s *Store) countEdges(ctx context.Context, src string, sc *edgeScan, in []any) (int64, error) {
	var total int64
	for _, t := range in {
		v, err := asVertex(src, sc.st, t)
		if err != nil {
			return 0, err
		}
		q, args := sc.query("1", v.id)
		q = "SELECT count(*) FROM (" + q + ")"
		if sc.st.kind == stepOutE && len(sc.conds) == 0 { // kept by the writer: no scan
			q, args = "SELECT coalesce(sum(n), 0) FROM edge_counts WHERE out_v = ?", []any{v.id}
			if labels := sc.st.labels; len(labels) > 0 {
				q += " AND label IN (" + placeholders(len(labels)) + ")"
				for _, l := range labels {
					args = append(args, l)
				}
			}
		}
		var n int64
		if err := s.queryRow(ctx, q, args, &n); err != nil {
			return 0, fmt.Errorf("count edges of %s: %w", v.id, err)
		}
		total += n
	}
	return total, nil
}

// groupCountEdges counts the selected edges by a property column in SQL. Edges
// whose column is NULL (no such property, or one that is not a string) are loaded
// and counted as groupCountInto counts any traverser, so they are left out or
// refused exactly as there.
func (s *Store) groupCountEdges(ctx context.Context, src string, sc *edgeScan, gc *step, in []any) (map[string]any, error) {
	counts := make(map[string]any)
	for _, t := range in {
		v, err := asVertex(src, sc.st, t)
		if err != nil {
			return nil, err
		}
		nulls, err := s.groupCountColumn(ctx, sc, gc.key, v.id, counts)
		if err != nil {
			return nil, fmt.Errorf("count edges of %s: %w", v.id, err)
		}
		if !nulls {
			continue
		}
		rest := *sc
		rest.conds = append(slices.Clip(rest.conds), gc.key+" IS NULL")
		odd, err := s.edges(ctx, src, &rest, []any{v})
		if err != nil {
			return nil, err
		}
		if err := s.groupCountInto(ctx, src, gc, odd, counts); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

// groupCountColumn adds to counts how many of the edges sc selects from vertex id
// hold each value of column key, in one pass (countByFunc), or in a GROUP BY where
// the pass gives way, and reports whether some edge's column is NULL.
func (s *Store) groupCountColumn(ctx context.Context, sc *edgeScan, key, id string, counts map[string]any) (nulls bool, err error) {
	q, args := sc.query(key, id)
	var text sql.NullString
	if err := s.queryRow(ctx, "SELECT "+countByFunc+"("+key+") FROM ("+q+")", args, &text); err != nil {
		return false, err
	}
	if text.Valid {
		n, err := decodeCountBy(text.String, counts)
		return n > 0, err
	}
	rows, err := s.stmts.query(ctx, "SELECT "+key+", count(*) FROM ("+q+") GROUP BY 1", args...)
	if err != nil {
		return false, err
	}
	return addCounts(rows, counts)
}

// addCounts adds rows of (key, count) to counts and reports whether a NULL key
// had a count.
func addCounts(rows *sql.Rows, counts map[string]any) (nulls bool, err error) {
	defer rows.Close()
	for rows.Next() {
		var key sql.NullString
		var n int64
		if err := rows.Scan(&key, &n); err != nil {
			return false, err
		}
		if !key.Valid {
			nulls = nulls || n > 0
			continue
		}
		prev, _ := counts[key.String].(int64)
		counts[key.String] = prev + n
	}
	return nulls, rows.Err()
}

func (s *Store) queryRow(ctx context.Context, query string, args []any, dst ...any) error {
	rows, err := s.stmts.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dst...); err != nil {
		return err
	}
	return rows.Close()
}

func (s *Store) edges(ctx context.Context, src string, sc *edgeScan, in []any) ([]any, error) {
	var out []any
	for _, t := range in {
		v, err := asVertex(src, sc.st, t)
		if err != nil {
			return nil, err
		}
		q, args := sc.query(edgeColumns, v.id)
		if err := s.loadEdges(ctx, q+" ORDER BY id", args, &out); err != nil {
			return nil, fmt.Errorf("edges of %s: %w", v.id, err)
		}
	}
	return out, nil
}

// edgeColumns are the columns an edge is read from.
const edgeColumns = "id, label, out_v, out_label, in_v, in_label, created_at, properties"

func (s *Store) loadEdges(ctx context.Context, query string, args []any, out *[]any) error {
	rows, err := s.stmts.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		e := &edge{}
		if err := rows.Scan(&e.id, &e.label, &e.outV, &e.outLabel, &e.inV, &e.inLabel, &e.createdAt, &e.rawProps); err != nil {
			return err
		}
		*out = append(*out, e)
	}
	return rows.Err()
}

// groupCountInto adds to counts, for each value of the key property of the
// traversers in, how many have it. As in groupBy, a traverser without the key is
// left out (TinkerPop 3.6+ by() semantics) and keys must be strings.
func (s *Store) groupCountInto(ctx context.Context, src string, st *step, in []any, counts map[string]any) error {
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return err
		}
		props, err := s.propertiesOf(src, st, t)
		if err != nil {
			return err
		}
		k, ok := props[st.key]
		if !ok {
			continue
		}
		key, ok := k.(string)
		if !ok {
			return errAt(src, st.pos, "groupCount() by %s: only string keys are supported, found %s", st.key, typeName(k))
		}
		prev, _ := counts[key].(int64)
		counts[key] = prev + 1
	}
	return nil
}
