package localpersist

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"sync"

	"modernc.org/sqlite"
)

// windowRanges answers, for vertex v, the by() traversals of project step st that
// count edges by a column over ranges (rangeBy.group) together with those that
// count distinct values over ranges of the same edges, in one scan of the union of
// their ranges: a link's stats ask for its clicks by user agent on each day of its
// window and for its distinct visitors over the window and each day, and would
// otherwise read the window's index entries twice (groupCountEdges for each day,
// distinctRanges for the visitors). The group counts taken together are those of the
// first such by(): its labels, column and key; the distinct counts those of the
// first by() over the same labels and column. It returns the answers by index of the
// by(), or nil when the scan answers nothing (no such pair of by()s; or, from
// countInRangesFunc, NULL), and the by()s are answered as they would be without it.
func (s *Store) windowRanges(ctx context.Context, st *step, v *vertex) (map[int]any, error) {
	var groups, distinct []rangeBy
	for i, pr := range st.proj {
		r, ok := asRangeBy(pr.byTrav)
		if !pr.isTrav || !ok {
			continue
		}
		r.proj = i
		switch {
		case r.group && (len(groups) == 0 || sameRanges(r, groups[0])):
			groups = append(groups, r)
		case !r.group && (len(distinct) == 0 || sameRanges(r, distinct[0])):
			distinct = append(distinct, r)
		}
	}
	if len(groups) == 0 || len(distinct) == 0 {
		return nil, nil
	}
	g0, d := groups[0], distinct[:0]
	for _, r := range distinct { // over the group counts' labels and column
		if r.labels == g0.labels && r.col == g0.col && (len(d) == 0 || r.key == d[0].key) {
			d = append(d, r)
		}
	}
	if len(d) == 0 {
		return nil, nil
	}
	out, err := s.countInRanges(ctx, &st.proj[g0.proj].byTrav[0], v.id, groups, d)
	if err != nil {
		return nil, fmt.Errorf("count %s and distinct %s of the edges of %s: %w", g0.key, d[0].key, v.id, err)
	}
	return out, nil
}

// sameRanges reports whether a and b count the same key over ranges of the same
// column of edges of the same labels.
func sameRanges(a, b rangeBy) bool {
	return a.labels == b.labels && a.col == b.col && a.key == b.key
}

// countInRanges runs the one scan of windowRanges over the ranges groups and
// distinct of the edges outE selects from vertex id.
func (s *Store) countInRanges(ctx context.Context, outE *step, id string, groups, distinct []rangeBy) (map[int]any, error) {
	g, d := groups[0], distinct[0]
	spec := [2][]string{rangeBounds(groups), rangeBounds(distinct)}
	text, err := s.scanRanges(ctx, outE, id, countInRangesFunc+"("+g.col+", "+g.key+", "+d.key+", ?)", spec, groups, distinct)
	if err != nil || !text.Valid {
		return nil, err
	}
	parts, err := splitParts(text.String)
	if err != nil || len(parts) != 1+len(groups) {
		return nil, fmt.Errorf("%s: malformed answer", countInRangesFunc)
	}
	counts, err := parseCounts(parts[0], len(distinct))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", countInRangesFunc, err)
	}
	out := make(map[int]any, len(groups)+len(distinct))
	for i, r := range distinct {
		out[r.proj] = counts[i]
	}
	for i, r := range groups {
		m := make(map[string]any)
		if _, err := decodeCountBy(parts[1+i], m); err != nil {
			return nil, err
		}
		out[r.proj] = m
	}
	return out, nil
}

// countInRangesFunc(x, g, v, spec) is an aggregate over rows in x order. spec, a
// JSON array of two arrays of bounds [lo1, hi1, lo2, hi2, …] constant over the rows,
// holds ranges of x: for each range of the first, how many of the rows whose string x
// falls in it hold each string g (as countByFunc counts), and for each range of the
// second, how many distinct strings v they hold (as distinctInRangesFunc counts). It
// answers the distinct counts as distinctInRangesFunc does, then each range's group
// counts as countByFunc does, each part its length in bytes, a colon and itself. It
// is NULL over no rows, wherever either aggregate would be, and when a row in a range
// of the first holds a NULL g (no such property, or one of another type: the caller's
// per-by() path judges those edges). The spec is a BLOB, as distinctInRangesFunc's
// bounds are.
const countInRangesFunc = "linoone_count_in_ranges"

var registerCountInRanges = sync.OnceValue(func() error {
	return sqlite.RegisterFunction(countInRangesFunc, &sqlite.FunctionImpl{
		NArgs: 4, Deterministic: true, VolatileArgs: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &countInRanges{}, nil },
	})
})

type countInRanges struct {
	started  bool
	runs     rangeRuns // over the group counts' ranges
	groups   []countBy // one a range
	distinct distinctInRanges
	arg      [1]driver.Value // countBy's argument, reused row after row
	dargs    [3]driver.Value // distinctInRanges'
}

func (a *countInRanges) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if !a.started {
		var spec [2][]string
		b, ok := args[3].([]byte)
		if err := json.Unmarshal(b, &spec); !ok || err != nil || len(spec[0])%2 != 0 || len(spec[1])%2 != 0 {
			return fmt.Errorf("%s: the spec is not a JSON array of two arrays of pairs of strings", countInRangesFunc)
		}
		a.runs.bounds, a.groups = spec[0], make([]countBy, len(spec[0])/2)
		a.distinct.start(spec[1])
		a.started = true
	}
	a.dargs[0], a.dargs[1] = args[0], args[2]
	if err := a.distinct.Step(nil, a.dargs[:]); err != nil || a.distinct.other {
		return err
	}
	x, ok := args[0].(string)
	if !ok {
		return nil
	}
	a.arg[0] = args[1]
	for _, i := range a.runs.holding(x) {
		if err := a.groups[i].Step(nil, a.arg[:]); err != nil {
			return err
		}
	}
	return nil
}

func (a *countInRanges) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", countInRangesFunc)
}

func (a *countInRanges) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if !a.started || a.distinct.other {
		return nil, nil
	}
	d, err := a.distinct.WindowValue(nil)
	ds, ok := d.(string)
	if err != nil || !ok {
		return nil, err
	}
	b := appendPart(nil, ds)
	for i := range a.groups {
		g := &a.groups[i]
		if g.other || g.nulls > 0 {
			return nil, nil
		}
		v, err := g.WindowValue(nil)
		gs, ok := v.(string)
		if err != nil || !ok {
			return nil, err
		}
		b = appendPart(b, gs)
	}
	return string(b), nil
}

func (a *countInRanges) Final(*sqlite.FunctionContext) {}

// splitParts reads the parts appendPart wrote.
func splitParts(text string) ([]string, error) {
	var parts []string
	for text != "" {
		part, rest, ok := cutPart(text)
		if !ok {
			return nil, fmt.Errorf("%s: malformed answer", countInRangesFunc)
		}
		parts, text = append(parts, part), rest
	}
	return parts, nil
}
