package localpersist

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/linoone/linoone/internal/core/graphson"
)

// vertex and edge are the elements a traversal walks.
type vertex struct {
	id, label string
	stored
}

type edge struct {
	id, label      string
	outV, outLabel string
	inV, inLabel   string
	stored
}

// stored is what an element's row holds besides its identity: its properties,
// decoded on first use and kept for the rest of the request, and created_at.
type stored struct {
	createdAt string
	rawProps  string // canonical JSON, decoded into props on first use
	props     map[string]any
}

// properties decodes the properties of element id, server-managed created_at
// included, once.
func (st *stored) properties(id string) (map[string]any, error) {
	if st.props == nil {
		props, err := decodeProperties(st.rawProps)
		if err != nil {
			return nil, fmt.Errorf("load properties of %s: %w", id, err)
		}
		props[serverProperty] = st.createdAt
		st.props = props
	}
	return st.props, nil
}

// evaluate runs a compiled traversal against the store and returns its results:
// strings, int64s, bools, maps (project), *vertex and *edge values. A traversal that
// reads edges runs more than one statement, and they share one read transaction so
// that they all see the same commits: a link's stats count its clicks of all time
// and of each day in one query, and a commit between the two made the days add up
// to more than the whole. A traversal of vertices alone is one statement, and pays
// no transaction (a third of a token lookup's cost).
func (s *Store) evaluate(ctx context.Context, p *plan) (_ []any, err error) {
	if readsEdges(p.steps) {
		rt := &readTx{db: s.rdb}
		defer func() { err = errors.Join(err, rt.end()) }()
		ctx = context.WithValue(ctx, readTxKey{}, rt)
	}
	in, rest, err := s.start(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.apply(ctx, p.src, rest, in)
}

// readsEdges reports whether steps, or the traversals of their by() modulators, read
// edges: the only steps that run statements after start's.
func readsEdges(steps []step) bool {
	for _, st := range steps {
		if st.kind == stepOutE || st.kind == stepInE {
			return true
		}
		for _, pr := range st.proj {
			if readsEdges(pr.byTrav) {
				return true
			}
		}
	}
	return false
}

// readTx is the read transaction of one evaluation, begun at its first statement
// (stmtCache.query finds it in the context). An evaluation runs its statements one
// after another, on one goroutine.
type readTx struct {
	db *sql.DB
	tx *sql.Tx
}

type readTxKey struct{}

func (rt *readTx) begin(ctx context.Context) (*sql.Tx, error) {
	if rt.tx == nil {
		tx, err := rt.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("begin read: %w", err)
		}
		rt.tx = tx
	}
	return rt.tx, nil
}

// end ends the transaction; it read only, so a rollback ends it.
func (rt *readTx) end() error {
	if rt.tx == nil {
		return nil
	}
	if err := rt.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("end read: %w", err)
	}
	return nil
}

// start answers g.V() together with the hasLabel()/has() filters that directly follow
// it, an order() by columns and an optional limit() after them, as one indexed SQL
// query (filters commute, so folding them changes nothing but the cost). A count() right after them is counted in
// SQL too. It returns the traversers and the remaining steps.
func (s *Store) start(ctx context.Context, p *plan) ([]any, []step, error) {
	query, args, rest, ok := startQuery(p)
	counting := len(rest) > 0 && rest[0].kind == stepCount
	switch {
	case !ok && counting:
		return []any{int64(0)}, rest[1:], nil
	case !ok:
		return nil, rest, nil
	case counting:
		query = "SELECT count(*) FROM (" + query + ")"
	}
	rows, err := s.stmts.query(ctx, query, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("find vertices: %w", err)
	}
	defer rows.Close()
	var out []any
	for rows.Next() {
		if counting {
			var n int64
			if err := rows.Scan(&n); err != nil {
				return nil, nil, fmt.Errorf("count vertices: %w", err)
			}
			out = append(out, n)
			continue
		}
		v := &vertex{}
		if err := rows.Scan(&v.id, &v.label, &v.createdAt, &v.rawProps); err != nil {
			return nil, nil, fmt.Errorf("find vertices: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("find vertices: %w", err)
	}
	if counting {
		if len(out) != 1 {
			return nil, nil, fmt.Errorf("count vertices: %d rows", len(out))
		}
		rest = rest[1:]
	}
	return out, rest, nil
}

// startQuery builds the SQL for start. A has() on the token with string values is
// answered by the vertices_by_token index, an equality search on (token[, label])
// that yields the vertex ids in order; created_at is a column. Any other has() is
// left to apply, which compares in Go what the query found: with no token, that is
// the whole table, or the vertices of the hasLabel() labels. sqlFilter folds
// comparisons of the created_at and token columns, regex() on a string property and
// or() of those; an order() by those columns after them is folded too (a listing
// walks the vertices_by_created index newest first and stops at its limit). A
// limit() is folded in only when every filter was. Vertices come back ordered by id
// otherwise, so results are deterministic. ok is false when nothing can match.
func startQuery(p *plan) (query string, args []any, rest []step, ok bool) {
	var labelSets [][]string
	var tokens, createdAt, later []step
	var extra []string // conditions sqlFilter wrote, with their extraArgs
	var extraArgs []any
	i := 0
filters:
	for ; i < len(p.steps); i++ {
		switch st := p.steps[i]; {
		case st.kind == stepHasLabel:
			labelSets = append(labelSets, st.labels)
		case st.kind != stepHas && st.kind != stepOr:
			break filters
		case st.kind == stepHas && st.pred == nil && st.key == tokenKey && allStrings(st):
			tokens = append(tokens, st)
		case st.kind == stepHas && st.pred == nil && st.key == serverProperty && st.within == nil:
			createdAt = append(createdAt, st)
		default:
			if c, a, ok := sqlFilter(st); ok {
				extra = append(extra, c)
				extraArgs = append(extraArgs, a...)
				continue
			}
			later = append(later, st) // compared in Go, by apply
		}
	}
	orderBy := "id"
	if len(later) == 0 && i < len(p.steps) && p.steps[i].kind == stepOrder {
		if ob, conds, ok := sqlOrder(p.steps[i]); ok {
			orderBy = ob
			extra = append(extra, conds...)
			i++
		}
	}
	limit := int64(-1)
	if len(later) == 0 && i < len(p.steps) && p.steps[i].kind == stepLimit {
		limit = p.steps[i].n
		i++
	}
	rest = append(later, p.steps[i:]...)
	for _, st := range createdAt {
		if _, isString := st.value.(string); !isString {
			return "", nil, rest, false // created_at is always a string
		}
	}

	var conds []string
	for _, st := range tokens {
		values := st.matches()
		if len(values) == 0 {
			return "", nil, rest, false // an empty within()
		}
		if len(values) == 1 {
			conds = append(conds, "token = ?")
		} else {
			conds = append(conds, "token IN ("+placeholders(len(values))+")")
		}
		args = append(args, values...)
	}
	for _, st := range createdAt {
		conds = append(conds, "created_at = ?")
		args = append(args, st.value)
	}
	for _, labels := range labelSets {
		conds = append(conds, "label IN ("+placeholders(len(labels))+")")
		for _, l := range labels {
			args = append(args, l)
		}
	}
	conds = append(conds, extra...)
	args = append(args, extraArgs...)
	var q strings.Builder
	q.WriteString("SELECT id, label, created_at, properties FROM vertices")
	if len(conds) > 0 {
		q.WriteString(" WHERE ")
		q.WriteString(strings.Join(conds, " AND "))
	}
	q.WriteString(" ORDER BY " + orderBy + " LIMIT ?")
	args = append(args, limit)
	return q.String(), args, rest, true
}

// allStrings reports whether every value a has() step compares with is a string:
// only those can match the token column (another type stays in the JSON).
func allStrings(st step) bool {
	for _, v := range st.matches() {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// apply runs steps over the traversers in.
func (s *Store) apply(ctx context.Context, src string, steps []step, in []any) ([]any, error) {
	for i := 0; i < len(steps); i++ {
		st := &steps[i]
		var err error
		switch st.kind {
		case stepHasLabel:
			in, err = filter(ctx, in, func(t any) (bool, error) {
				el, err := asElement(src, st, t)
				if err != nil {
					return false, err
				}
				_, label := el.identity()
				return slices.Contains(st.labels, label), nil
			})
		case stepHas:
			in, err = filter(ctx, in, func(t any) (bool, error) {
				props, err := s.propertiesOf(src, st, t)
				if err != nil {
					return false, err
				}
				v, ok := props[st.key]
				if st.pred != nil {
					return ok && st.pred.test(v), nil
				}
				if st.within != nil {
					return ok && slices.Contains(st.within, v), nil
				}
				return ok && v == st.value, nil
			})
		case stepLimit:
			if int64(len(in)) > st.n {
				in = in[:st.n]
			}
		case stepCount:
			in = []any{int64(len(in))}
		case stepDedup:
			in, err = dedup(ctx, src, st, in)
		case stepValues:
			in, err = s.values(ctx, src, st, in)
		case stepID, stepLabel:
			for j, t := range in {
				el, err := asElement(src, st, t)
				if err != nil {
					return nil, err
				}
				id, label := el.identity()
				if st.kind == stepID {
					in[j] = id
				} else {
					in[j] = label
				}
			}
		case stepOutE, stepInE:
			in, i, err = s.edgeSteps(ctx, src, steps, i, in)
		case stepProject:
			in, err = s.project(ctx, src, st, in)
		case stepOrder:
			in, err = s.orderIn(ctx, src, st, in)
		case stepOr:
			in, err = s.anyOf(ctx, src, st, in)
		case stepGroup:
			in, err = s.groupBy(ctx, src, st, in)
		case stepGroupCount:
			counts := make(map[string]any)
			err = s.groupCountInto(ctx, src, st, in, counts)
			in = []any{counts}
		default:
			return nil, fmt.Errorf("internal error: step %s has no evaluator", st.name)
		}
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// element is a vertex or an edge. Both have properties through their stored part.
type element interface {
	identity() (id, label string)
	properties(id string) (map[string]any, error)
}

func (v *vertex) identity() (string, string) { return v.id, v.label }
func (e *edge) identity() (string, string)   { return e.id, e.label }

func asElement(src string, st *step, t any) (element, error) {
	switch t := t.(type) {
	case *vertex:
		return t, nil
	case *edge:
		return t, nil
	}
	return nil, errAt(src, st.pos, "%s() applies to vertices and edges, found %s", st.name, typeName(t))
}

func asVertex(src string, st *step, t any) (*vertex, error) {
	if v, ok := t.(*vertex); ok {
		return v, nil
	}
	return nil, errAt(src, st.pos, "%s() applies to vertices, found %s", st.name, typeName(t))
}

func typeName(t any) string {
	switch t.(type) {
	case *vertex:
		return "a vertex"
	case *edge:
		return "an edge"
	case string:
		return "a string"
	case int64:
		return "an integer"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a map"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", t)
}

// filter keeps the traversers of in that keep keeps. It, and every other loop over
// traversers that runs no statement (values, project, groupBy, groupCountInto),
// stops when ctx is done: a client that hung up would otherwise wait on nothing
// while a large traversal is evaluated to the end.
func filter(ctx context.Context, in []any, keep func(any) (bool, error)) ([]any, error) {
	out := in[:0]
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ok, err := keep(t)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// propertiesOf is the properties of traverser t, which step st needs to be an
// element, server-managed created_at included.
func (s *Store) propertiesOf(src string, st *step, t any) (map[string]any, error) {
	el, err := asElement(src, st, t)
	if err != nil {
		return nil, err
	}
	id, _ := el.identity()
	return el.properties(id)
}

func (s *Store) values(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	var out []any
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		props, err := s.propertiesOf(src, st, t)
		if err != nil {
			return nil, err
		}
		if v, ok := props[st.key]; ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// dedup keeps the first of each run of equal traversers, in order: elements are
// equal when their ids are, values when they are the same scalar. A map (the answer
// of a group) cannot be compared and is refused.
func dedup(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	seen := make(map[any]bool, len(in))
	out := in[:0:0]
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key := t
		switch t := t.(type) {
		case *vertex:
			key = [2]string{"v", t.id}
		case *edge:
			key = [2]string{"e", t.id}
		case nil, string, int64, bool, float64:
		default:
			return nil, errAt(src, st.pos, "dedup() compares vertices, edges and scalar values, found %s", typeName(t))
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// project builds one map per traverser. A by(key) whose property is missing, or a
// by(traversal) that yields nothing, leaves its key out of the map (TinkerPop 3.5+
// semantics, rather than a null value or an error).
func (s *Store) project(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	out := make([]any, 0, len(in))
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(st.proj))
		var counted map[int]any // by()s answered together (windowRanges, distinctRanges)
		if v, ok := t.(*vertex); ok {
			var err error
			if counted, err = s.windowRanges(ctx, st, v); err == nil && counted == nil {
				counted, err = s.distinctRanges(ctx, st, v)
			}
			if err != nil {
				return nil, err
			}
		}
		for i, pr := range st.proj {
			if n, ok := counted[i]; ok {
				m[pr.key] = n
				continue
			}
			if pr.isTrav {
				res, err := s.apply(ctx, src, pr.byTrav, []any{t})
				if err != nil {
					return nil, err
				}
				if len(res) > 0 {
					m[pr.key] = res[0]
				}
				continue
			}
			props, err := s.propertiesOf(src, st, t)
			if err != nil {
				return nil, err
			}
			if v, ok := props[pr.byKey]; ok {
				m[pr.key] = v
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// groupBy reduces the traversers to one map: each value of the key property to the
// list of the value property's values of the traversers that have that key, in
// traversal order. A traverser without the key property is left out (TinkerPop 3.6+
// by() semantics), one without the value property adds nothing to its key's list.
// Keys must be strings (the map is answered as a g:Map of string keys).
func (s *Store) groupBy(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	groups := make(map[string]any)
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		props, err := s.propertiesOf(src, st, t)
		if err != nil {
			return nil, err
		}
		k, ok := props[st.group[0]]
		if !ok {
			continue
		}
		key, ok := k.(string)
		if !ok {
			return nil, errAt(src, st.pos, "group() by %s: only string keys are supported, found %s", st.group[0], typeName(k))
		}
		list, _ := groups[key].([]any)
		if v, ok := props[st.group[1]]; ok {
			list = append(list, v)
		}
		groups[key] = list
	}
	for k, v := range groups {
		if v.([]any) == nil {
			groups[k] = []any{}
		}
	}
	return []any{groups}, nil
}

// appendResult writes one traversal result as a typed GraphSON v3 value. Vertices
// and edges are written as reference elements (id and label, as Gremlin Server does
// under ReferenceElementStrategy), lists and maps item by item, so that the bound
// on the answer is checked before each, and everything else by
// graphson.AppendValue.
func appendResult(b []byte, v any, limit int) ([]byte, error) {
	if len(b) > limit {
		return nil, answerTooLarge(limit)
	}
	switch v := v.(type) {
	case *vertex:
		b = append(b, `{"@type":"g:Vertex","@value":{"id":`...)
		b = appendJSONString(b, v.id)
		b = append(b, `,"label":`...)
		b = appendJSONString(b, v.label)
		return append(b, "}}"...), nil
	case *edge:
		b = append(b, `{"@type":"g:Edge","@value":{"id":`...)
		b = appendJSONString(b, v.id)
		b = append(b, `,"label":`...)
		b = appendJSONString(b, v.label)
		b = append(b, `,"inVLabel":`...)
		b = appendJSONString(b, v.inLabel)
		b = append(b, `,"outVLabel":`...)
		b = appendJSONString(b, v.outLabel)
		b = append(b, `,"inV":`...)
		b = appendJSONString(b, v.inV)
		b = append(b, `,"outV":`...)
		b = appendJSONString(b, v.outV)
		return append(b, "}}"...), nil
	case []any:
		return appendResults(b, v, limit)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, `{"@type":"g:Map","@value":[`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ',')
			var err error
			if b, err = appendResult(b, v[k], limit); err != nil {
				return nil, err
			}
		}
		return append(b, "]}"...), nil
	}
	return graphson.AppendValue(b, v)
}

// appendResults writes results as a g:List. It refuses (a *limitError) once the
// encoding, b included, passes limit bytes: the answer stops growing within one
// scalar value of its bound.
func appendResults(b []byte, results []any, limit int) ([]byte, error) {
	b = append(b, `{"@type":"g:List","@value":[`...)
	for i, v := range results {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendResult(b, v, limit); err != nil {
			return nil, err
		}
	}
	b = append(b, "]}"...)
	if len(b) > limit {
		return nil, answerTooLarge(limit)
	}
	return b, nil
}

func answerTooLarge(limit int) error {
	return &limitError{msg: fmt.Sprintf("the answer is over the limit of %d bytes: ask for fewer or smaller values", limit)}
}
