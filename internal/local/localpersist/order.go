package localpersist

import (
	"context"
	"database/sql/driver"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// orderKey is one by(key[, desc|asc]) modulator of order().
type orderKey struct {
	key  string
	desc bool
}

// orderBy compiles order() and the by() modulators that follow it in rest: at least
// one, each by(key) or by(key, asc|desc). asc and desc are Order's values, which
// Gremlin Server's static imports let a script write bare; a binding of that name
// would win there, and does here. It reports how many calls of rest it consumed.
func (c *compiler) orderBy(cl *call, rest []*call) ([]orderKey, int, error) {
	if len(cl.args) != 0 {
		return nil, 0, c.errorf(cl.pos, "order() takes no arguments: use order().by(key[, desc])")
	}
	var keys []orderKey
	for _, by := range rest {
		if by.name != "by" {
			break
		}
		if len(by.args) < 1 || len(by.args) > 2 || by.args[0].kind == argTraversal {
			return nil, 0, c.errorf(by.pos, "order()'s by() takes a property key and optionally asc or desc")
		}
		k, err := c.stringArg(by, by.args[0])
		if err != nil {
			return nil, 0, err
		}
		ok := orderKey{key: k}
		if len(by.args) == 2 {
			a := by.args[1]
			_, bound := c.bindings[a.str]
			if a.kind != argBinding || bound || (a.str != "asc" && a.str != "desc") {
				return nil, 0, c.errorf(a.pos, "order()'s by() takes asc or desc as its second argument, found %s", a.str)
			}
			ok.desc = a.str == "desc"
		}
		keys = append(keys, ok)
	}
	if len(keys) == 0 {
		return nil, 0, c.errorf(cl.pos, "order() needs at least one by(key[, desc]) modulator")
	}
	return keys, len(keys), nil
}

// orFilters compiles or(t, …): each t an anonymous traversal of filter steps only
// (hasLabel, has, or), which keeps a traverser when any t does.
func (c *compiler) orFilters(cl *call) ([][]step, error) {
	if len(cl.args) == 0 {
		return nil, c.errorf(cl.pos, "or() needs at least one traversal")
	}
	out := make([][]step, len(cl.args))
	for i, a := range cl.args {
		if a.kind != argTraversal {
			return nil, c.errorf(a.pos, "or() takes anonymous traversals such as __.has(key, value)")
		}
		steps, err := c.steps(a.trav.calls)
		if err != nil {
			return nil, err
		}
		for _, st := range steps {
			if st.kind != stepHas && st.kind != stepHasLabel && st.kind != stepOr {
				return nil, c.errorf(st.pos, "or() takes traversals of filters only (hasLabel, has, or), found %s()", st.name)
			}
		}
		out[i] = steps
	}
	return out, nil
}

// orderIn sorts the traversers by the keys. A traverser without one of the keys is
// left out (TinkerPop 3.6+: a by() that yields nothing filters); values of different
// types do not compare, an error as in TinkerPop.
func (s *Store) orderIn(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	type row struct {
		t    any
		vals []any
	}
	rows := make([]row, 0, len(in))
	for _, t := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		props, err := s.propertiesOf(src, st, t)
		if err != nil {
			return nil, err
		}
		r := row{t: t, vals: make([]any, len(st.order))}
		keep := true
		for i, k := range st.order {
			if r.vals[i], keep = props[k.key]; !keep {
				break
			}
		}
		if keep {
			rows = append(rows, r)
		}
	}
	var cmpErr error
	slices.SortStableFunc(rows, func(a, b row) int {
		for i, k := range st.order {
			c, ok := compareValues(a.vals[i], b.vals[i])
			if !ok {
				cmpErr = errAt(src, st.pos, "order() by %s: %s and %s do not compare", k.key, typeName(a.vals[i]), typeName(b.vals[i]))
				return 0
			}
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	if cmpErr != nil {
		return nil, cmpErr
	}
	out := in[:0]
	for _, r := range rows {
		out = append(out, r.t)
	}
	return out, nil
}

// anyOf keeps the traversers for which one of the or() traversals yields something.
func (s *Store) anyOf(ctx context.Context, src string, st *step, in []any) ([]any, error) {
	return filter(ctx, in, func(t any) (bool, error) {
		for _, alt := range st.or {
			res, err := s.apply(ctx, src, alt, []any{t})
			if err != nil {
				return false, err
			}
			if len(res) > 0 {
				return true, nil
			}
		}
		return false, nil
	})
}

// sqlColumns are the properties start can compare in SQL: columns of vertices
// holding them as strings (the token column only when the property is a string).
var sqlColumns = map[string]string{serverProperty: "created_at", tokenKey: "token"}

var sqlOps = map[string]string{"eq": "=", "neq": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

// sqlFilter writes a filter step as an SQL condition when it compares a column with
// a string, matches a string property with regex(), or is an or() of such filters;
// ok is false when the step must be evaluated in Go.
func sqlFilter(st step) (cond string, args []any, ok bool) {
	switch st.kind {
	case stepHas:
		s, isString := st.value.(string)
		if st.pred != nil {
			s, isString = st.pred.value.(string)
		}
		col, isCol := sqlColumns[st.key]
		switch {
		case st.within != nil || !isString:
			return "", nil, false
		case st.pred != nil && st.pred.op == "regex" && keyPath.MatchString(st.key):
			// json_extract of a GraphSON property: a plain string is a JSON string.
			return "(json_type(properties, ?) = 'text' AND json_extract(properties, ?) REGEXP ?)", []any{"$." + st.key, "$." + st.key, s}, true
		case !isCol:
			return "", nil, false
		case st.pred == nil:
			return col + " = ?", []any{s}, true
		case sqlOps[st.pred.op] != "" && st.pred.op != "neq":
			return col + " " + sqlOps[st.pred.op] + " ?", []any{s}, true
		}
		return "", nil, false
	case stepOr:
		var alts []string
		for _, alt := range st.or {
			var conds []string
			for _, f := range alt {
				if f.kind == stepHasLabel {
					conds = append(conds, "label IN ("+placeholders(len(f.labels))+")")
					for _, l := range f.labels {
						args = append(args, l)
					}
					continue
				}
				c, a, ok := sqlFilter(f)
				if !ok {
					return "", nil, false
				}
				conds = append(conds, c)
				args = append(args, a...)
			}
			alts = append(alts, "("+joinAnd(conds)+")")
		}
		return "(" + strings.Join(alts, " OR ") + ")", args, true
	}
	return "", nil, false
}

// keyPath is a property key a JSON path may name without quoting.
var keyPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func joinAnd(conds []string) string {
	if len(conds) == 0 {
		return "1"
	}
	return strings.Join(conds, " AND ")
}

// sqlOrder writes order()'s keys as an ORDER BY over columns, with the conditions
// that leave out the vertices without a key (a NULL token column); ok is false
// when a key is not a column.
func sqlOrder(st step) (orderBy string, conds []string, ok bool) {
	for i, k := range st.order {
		col, isCol := sqlColumns[k.key]
		if !isCol {
			return "", nil, false
		}
		if col == "token" {
			conds = append(conds, "token IS NOT NULL")
		}
		if i > 0 {
			orderBy += ", "
		}
		orderBy += col
		if k.desc {
			orderBy += " DESC"
		}
	}
	return orderBy, conds, true
}

// registerRegexp gives SQLite the REGEXP operator (x REGEXP y calls regexp(y, x)),
// with Go's regexp syntax as regex() compiles it in Go: a non-string matches nothing.
var registerRegexp = sync.OnceValue(func() error {
	var mu sync.Mutex
	cache := map[string]*regexp.Regexp{}
	return sqlite.RegisterDeterministicScalarFunction("regexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		pattern, ok1 := args[0].(string)
		s, ok2 := args[1].(string)
		if !ok1 || !ok2 {
			return int64(0), nil
		}
		mu.Lock()
		re, ok := cache[pattern]
		if !ok {
			var err error
			if re, err = regexp.Compile(pattern); err != nil {
				mu.Unlock()
				return nil, fmt.Errorf("regex: %w", err)
			}
			if len(cache) >= 64 {
				clear(cache)
			}
			cache[pattern] = re
		}
		mu.Unlock()
		if re.MatchString(s) {
			return int64(1), nil
		}
		return int64(0), nil
	})
})
