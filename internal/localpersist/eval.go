package localpersist

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/linoone/linoone/internal/graphson"
)

// vertex and edge are the elements a traversal walks. Their properties are loaded
// on first use and kept for the rest of the request.
type vertex struct {
	id, label string
	props     map[string]any
}

type edge struct {
	id, label      string
	outV, outLabel string
	inV, inLabel   string
	createdAt      string
	rawProps       string // canonical JSON, decoded into props on first use
	props          map[string]any
}

// evaluate runs a compiled traversal against the store and returns its results:
// strings, int64s, bools, maps (project), *vertex and *edge values.
func (s *Store) evaluate(ctx context.Context, p *plan) ([]any, error) {
	in, rest, err := s.start(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.apply(ctx, p.src, rest, in)
}

// start answers g.V() together with the hasLabel()/has() filters that directly follow
// it and an optional limit() after them, as one indexed SQL query (filters commute, so
// folding them changes nothing but the cost). A count() right after them is counted in
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
		if err := rows.Scan(&v.id, &v.label); err != nil {
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

// startQuery builds the SQL for start. With a has() on the token the query is driven
// by the vertex_properties_by_token index: an equality search on (kind, value
// [, label]) that covers the vertex id and label; a has() on any other key reads
// vertex_properties, and hasLabel() alone the vertices. Vertices come back ordered by
// id, so results are deterministic. ok is false when nothing can match.
func startQuery(p *plan) (query string, args []any, rest []step, ok bool) {
	var labelSets [][]string
	var props, createdAt []step
	i := 0
filters:
	for ; i < len(p.steps); i++ {
		switch st := p.steps[i]; {
		case st.kind == stepHasLabel:
			labelSets = append(labelSets, st.labels)
		case st.kind == stepHas && st.pred != nil:
			break filters // compared in Go, by apply
		case st.kind == stepHas && st.key == serverProperty && st.within != nil:
			break filters // within(…) on created_at: apply filters it
		case st.kind == stepHas && st.key == serverProperty:
			createdAt = append(createdAt, st)
		case st.kind == stepHas:
			props = append(props, st)
		default:
			break filters
		}
	}
	limit := int64(-1)
	if i < len(p.steps) && p.steps[i].kind == stepLimit {
		limit = p.steps[i].n
		i++
	}
	rest = p.steps[i:]
	// The token's has() drives the query wherever it was written: the others become
	// EXISTS checks on the vertices it finds.
	if j := slices.IndexFunc(props, func(st step) bool { return st.key == tokenKey }); j > 0 {
		props[0], props[j] = props[j], props[0]
	}
	for _, st := range createdAt {
		if _, isString := st.value.(string); !isString {
			return "", nil, rest, false // created_at is always a string
		}
	}

	var q strings.Builder
	var conds []string
	idCol, labelCol := "id", "label"
	if len(props) > 0 {
		idCol, labelCol = "p.vertex_id", "p.label"
		q.WriteString("SELECT p.vertex_id, p.label FROM vertex_properties p")
		for j, st := range props {
			alias := "p"
			if j > 0 {
				alias = "q"
			}
			cond, condArgs, matchable := hasCondition(alias, st)
			if !matchable {
				return "", nil, rest, false
			}
			if j > 0 {
				cond = "EXISTS (SELECT 1 FROM vertex_properties q WHERE q.vertex_id = p.vertex_id AND " + cond + ")"
			}
			conds = append(conds, cond)
			args = append(args, condArgs...)
		}
		for _, st := range createdAt {
			conds = append(conds, "EXISTS (SELECT 1 FROM vertices v WHERE v.id = p.vertex_id AND v.created_at = ?)")
			args = append(args, st.value)
		}
	} else {
		q.WriteString("SELECT id, label FROM vertices")
		for _, st := range createdAt {
			conds = append(conds, "created_at = ?")
			args = append(args, st.value)
		}
	}
	for _, labels := range labelSets {
		conds = append(conds, labelCol+" IN ("+placeholders(len(labels))+")")
		for _, l := range labels {
			args = append(args, l)
		}
	}
	if len(conds) > 0 {
		q.WriteString(" WHERE ")
		q.WriteString(strings.Join(conds, " AND "))
	}
	q.WriteString(" ORDER BY " + idCol + " LIMIT ?")
	args = append(args, limit)
	return q.String(), args, rest, true
}

// hasCondition is the SQL condition on the vertex_properties row alias a for a has()
// step: an equality on (key, kind, value), or for within(…) an IN list per value kind,
// so that for the token the (kind, value) index drives either. The token's key is
// written into the SQL as a literal, since SQLite uses a partial index only for a
// query whose WHERE names its condition's constant; it is our constant, never input.
// Any other key is bound. matchable is false when nothing can match (an empty
// within()).
func hasCondition(a string, st step) (cond string, args []any, matchable bool) {
	values := st.within
	if values == nil {
		values = []any{st.value}
	}
	byKind := map[string][]any{}
	var kinds []string
	for _, v := range values {
		kind, enc, err := encodeValue(v)
		if err != nil {
			continue // compile only produces strings, int64s and bools
		}
		if _, seen := byKind[kind]; !seen {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], enc)
	}
	if len(kinds) == 0 {
		return "", nil, false
	}
	keyCond := a + ".key = '" + tokenKey + "'"
	if st.key != tokenKey {
		keyCond = a + ".key = ?"
		args = append(args, st.key)
	}
	alts := make([]string, len(kinds))
	for i, kind := range kinds {
		vs := byKind[kind]
		if len(vs) == 1 {
			alts[i] = a + ".kind = ? AND " + a + ".value = ?"
		} else {
			alts[i] = a + ".kind = ? AND " + a + ".value IN (" + placeholders(len(vs)) + ")"
		}
		args = append(append(args, kind), vs...)
	}
	if len(alts) == 1 {
		return keyCond + " AND " + alts[0], args, true
	}
	return keyCond + " AND ((" + strings.Join(alts, ") OR (") + "))", args, true
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
			in, err = filter(in, func(t any) (bool, error) {
				el, err := asElement(src, st, t)
				if err != nil {
					return false, err
				}
				_, label := el.identity()
				return slices.Contains(st.labels, label), nil
			})
		case stepHas:
			in, err = filter(in, func(t any) (bool, error) {
				props, err := s.propertiesOf(ctx, src, st, t)
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

// element is a vertex or an edge.
type element interface {
	identity() (id, label string)
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

func filter(in []any, keep func(any) (bool, error)) ([]any, error) {
	out := in[:0]
	for _, t := range in {
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

// properties loads an element's properties, server-managed created_at included.
func (s *Store) properties(ctx context.Context, el element) (map[string]any, error) {
	switch el := el.(type) {
	case *vertex:
		if el.props == nil {
			props, err := s.vertexProperties(ctx, el.id)
			if err != nil {
				return nil, err
			}
			el.props = props
		}
		return el.props, nil
	case *edge:
		if el.props == nil {
			props, err := decodeProperties(el.rawProps)
			if err != nil {
				return nil, fmt.Errorf("load properties of %s: %w", el.id, err)
			}
			props[serverProperty] = el.createdAt
			el.props = props
		}
		return el.props, nil
	}
	return nil, fmt.Errorf("internal error: properties of %T", el)
}

func (s *Store) vertexProperties(ctx context.Context, id string) (map[string]any, error) {
	rows, err := s.rs.vertexProps.QueryContext(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load properties of %s: %w", id, err)
	}
	defer rows.Close()
	props := make(map[string]any, 4)
	for rows.Next() {
		var key, kind string
		var raw any
		if err := rows.Scan(&key, &kind, &raw); err != nil {
			return nil, fmt.Errorf("load properties of %s: %w", id, err)
		}
		v, err := decodeValue(kind, raw)
		if err != nil {
			return nil, fmt.Errorf("load properties of %s: property %s: %w", id, key, err)
		}
		props[key] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load properties of %s: %w", id, err)
	}
	return props, nil
}

// propertiesOf is the properties of traverser t, which step st needs to be an element.
func (s *Store) propertiesOf(ctx context.Context, src string, st *step, t any) (map[string]any, error) {
	el, err := asElement(src, st, t)
	if err != nil {
		return nil, err
	}
	return s.properties(ctx, el)
}

func (s *Store) values(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	var out []any
	for _, t := range in {
		props, err := s.propertiesOf(ctx, src, st, t)
		if err != nil {
			return nil, err
		}
		if v, ok := props[st.key]; ok {
			out = append(out, v)
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
		m := make(map[string]any, len(st.proj))
		for _, pr := range st.proj {
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
			props, err := s.propertiesOf(ctx, src, st, t)
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
		props, err := s.propertiesOf(ctx, src, st, t)
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
// under ReferenceElementStrategy); everything else by graphson.AppendValue.
func appendResult(b []byte, v any) ([]byte, error) {
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
	case map[string]any:
		if !containsElement(v) {
			return graphson.AppendValue(b, v)
		}
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
			if b, err = appendResult(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, "]}"...), nil
	}
	return graphson.AppendValue(b, v)
}

func containsElement(m map[string]any) bool {
	for _, v := range m {
		switch v.(type) {
		case *vertex, *edge:
			return true
		}
	}
	return false
}

// appendResults writes results as a g:List.
func appendResults(b []byte, results []any) ([]byte, error) {
	b = append(b, `{"@type":"g:List","@value":[`...)
	for i, v := range results {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendResult(b, v); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}
