package localpersist

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// rangeBy is a by() traversal of a project() over a range of an edge column that
// counts the distinct values of another: outE(labels).has(col, gte(lo))
// .has(col, lt(hi)).values(key).dedup().count(), how a link's unique visitors are
// counted for its window and for each of its days; or, when group is set, that
// counts the edges by another: ….groupCount().by(key), how a link's clicks are
// counted by user agent on each day.
type rangeBy struct {
	proj        int // index of the by() in the project step
	labels, col string
	key         string
	lo, hi      string
	group       bool
}

// asRangeBy reads the by() traversal steps as a rangeBy.
func asRangeBy(steps []step) (rangeBy, bool) {
	group := len(steps) == 4 && steps[3].kind == stepGroupCount
	if !group && (len(steps) != 6 || !distinctCountFollows(steps[3:])) || steps[0].kind != stepOutE || !isEdgeColumn(steps[3].key) {
		return rangeBy{}, false
	}
	r := rangeBy{labels: strings.Join(steps[0].labels, "\x00"), key: steps[3].key, group: group}
	var haveLo, haveHi bool
	for _, st := range steps[1:3] {
		if st.kind != stepHas || st.pred == nil || st.within != nil || !isEdgeColumn(st.key) || (r.col != "" && st.key != r.col) {
			return rangeBy{}, false
		}
		v, ok := st.pred.value.(string)
		switch {
		case !ok:
			return rangeBy{}, false
		case st.pred.op == "gte" && !haveLo:
			r.lo, haveLo = v, true
		case st.pred.op == "lt" && !haveHi:
			r.hi, haveHi = v, true
		default:
			return rangeBy{}, false
		}
		r.col = st.key
	}
	return r, haveLo && haveHi
}

// distinctRanges answers, for vertex v, the by() traversals of project step st that
// count distinct values over ranges (rangeBy) and share their labels and
// columns with at least one other, in one scan of the union of their ranges instead
// of one scan each: a link's stats ask for its window and for each of its days. It
// returns the counts by index of the by(); a by() it leaves out is evaluated as any
// other. A scan finding an edge whose counted column is NULL (a value that is not a
// string, or none) answers nothing: that edge is for countDistinctStrings to judge;
// so does one finding no edge at all, whose by()s each find an empty range.
func (s *Store) distinctRanges(ctx context.Context, st *step, v *vertex) (map[int]any, error) {
	groups := map[[3]string][]rangeBy{}
	var order [][3]string
	for i, pr := range st.proj {
		r, ok := asRangeBy(pr.byTrav)
		if !pr.isTrav || !ok || r.group {
			continue
		}
		r.proj = i
		k := [3]string{r.labels, r.col, r.key}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out map[int]any
	for _, k := range order {
		rs := groups[k]
		if len(rs) < 2 {
			continue
		}
		counts, ok, err := s.countDistinctRanges(ctx, &st.proj[rs[0].proj].byTrav[0], v.id, rs)
		if err != nil {
			return nil, fmt.Errorf("count distinct %s of the edges of %s: %w", k[2], v.id, err)
		}
		if !ok {
			continue
		}
		if out == nil {
			out = make(map[int]any, len(st.proj))
		}
		for i, r := range rs {
			out[r.proj] = counts[i]
		}
	}
	return out, nil
}

// countDistinctRanges runs the one scan of distinctRanges over the ranges rs of the
// edges outE selects from vertex id.
func (s *Store) countDistinctRanges(ctx context.Context, outE *step, id string, rs []rangeBy) ([]int64, bool, error) {
	text, err := s.scanRanges(ctx, outE, id, distinctInRangesFunc+"("+rs[0].col+", "+rs[0].key+", ?)", rangeBounds(rs), rs)
	if err != nil || !text.Valid {
		return nil, false, err
	}
	counts, err := parseCounts(text.String, len(rs))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", distinctInRangesFunc, err)
	}
	return counts, true, nil
}

// scanRanges runs the aggregate call, whose last argument is spec (as JSON, in a
// BLOB: see distinctInRangesFunc), over the edges outE selects from vertex id whose
// column falls in the union of the ranges rss, one scan of that part of the index.
func (s *Store) scanRanges(ctx context.Context, outE *step, id, call string, spec any, rss ...[]rangeBy) (sql.NullString, error) {
	var text sql.NullString
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return text, err
	}
	first := rss[0][0]
	lo, hi := first.lo, first.hi
	for _, rs := range rss {
		for _, r := range rs {
			lo, hi = min(lo, r.lo), max(hi, r.hi)
		}
	}
	sc := edgeScan{st: outE, conds: []string{first.col + " >= ?", first.col + " < ?"}, args: []any{lo, hi}}
	q, scanArgs := sc.query(call, id)
	err = s.queryRow(ctx, q, append([]any{specJSON}, scanArgs...), &text)
	return text, err
}

// rangeBounds is the bounds of the ranges rs, [lo1, hi1, lo2, hi2, …].
func rangeBounds(rs []rangeBy) []string {
	bounds := make([]string, 0, 2*len(rs))
	for _, r := range rs {
		bounds = append(bounds, r.lo, r.hi)
	}
	return bounds
}

// parseCounts reads the n counts, separated by spaces, that distinctInRangesFunc
// answers.
func parseCounts(text string, n int) ([]int64, error) {
	fields := strings.Fields(text)
	if len(fields) != n {
		return nil, fmt.Errorf("%d counts for %d ranges", len(fields), n)
	}
	counts := make([]int64, n)
	for i, f := range fields {
		c, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, err
		}
		counts[i] = c
	}
	return counts, nil
}

// distinctInRangesFunc(x, v, bounds) is an aggregate: for each range [lo, hi) of
// bounds, a JSON array [lo1, hi1, lo2, hi2, …] constant over the rows, how many
// distinct strings v the rows whose string x falls in it hold, as counts separated
// by spaces. It is NULL over no rows, past maxDistinctValues, and when a row's v is
// not a string: SQL and Go equality may differ there, which countDistinctStrings
// judges.
// Bytewise comparison, as SQLite compares TEXT. One pass keeps one set of values,
// where count(DISTINCT) in SQL takes one scan and one temporary B-tree per range.
//
// The bounds are one argument, and a BLOB: the driver converts every argument of
// every row, and hands a BLOB over as it lies, where it reads a bound TEXT through
// sqlite3_value_text, which copies it on every row to end it with a NUL byte (a
// column's TEXT already ends with one): with a link's window and each of its days,
// kilobytes a row.
const distinctInRangesFunc = "linoone_distinct_in_ranges"

// maxDistinctValues bounds the values distinctInRangesFunc keeps in Go memory (some
// tens of MB): past it, it answers NULL and each range is counted by
// count(DISTINCT), whose temporary B-trees SQLite bounds and spills.
var maxDistinctValues = 1 << 20

var registerDistinctInRanges = sync.OnceValue(func() error {
	return sqlite.RegisterFunction(distinctInRangesFunc, &sqlite.FunctionImpl{
		NArgs: 3, Deterministic: true, VolatileArgs: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &distinctInRanges{}, nil },
	})
})

type distinctInRanges struct {
	runs   rangeRuns // over the bounds decoded from the first row's arguments
	counts []int64   // nil until the first row
	// seen numbers each distinct value; the value numbered n was counted in range i
	// when bit i of words seen[n*w:(n+1)*w] is set (w words a value): one copy of a
	// value and one map lookup a row, however many ranges hold it.
	seen  map[string]int
	words []uint64
	other bool // a row's v was not a string, or there were more than maxDistinctValues
}

// rangeRuns finds the ranges [lo, hi) of bounds (lo1, hi1, lo2, hi2, …) that hold
// a value. The ranges holding x are those of every x in [runLo, runHi) (runOpen: no
// lower bound, runEnd: none upper): rows come in x order, so runs are long, and a
// row costs a comparison or two however many ranges there are.
type rangeRuns struct {
	bounds          []string
	in              []int
	runLo, runHi    string
	runOpen, runEnd bool
	runValid        bool
}

// holding returns the indexes of the ranges holding x, valid until the next call.
func (r *rangeRuns) holding(x string) []int {
	if !r.runValid || (!r.runOpen && x < r.runLo) || (!r.runEnd && x >= r.runHi) {
		r.enter(x)
	}
	return r.in
}

// enter makes in the ranges holding x, and [runLo, runHi) the run of values between
// the bounds closest to x, which all lie in the same ranges.
func (r *rangeRuns) enter(x string) {
	r.in = r.in[:0]
	for i := 0; i+1 < len(r.bounds); i += 2 {
		if x >= r.bounds[i] && x < r.bounds[i+1] {
			r.in = append(r.in, i/2)
		}
	}
	r.runOpen, r.runEnd, r.runValid = true, true, true
	for _, b := range r.bounds {
		if b <= x && (r.runOpen || b > r.runLo) {
			r.runLo, r.runOpen = b, false
		}
		if b > x && (r.runEnd || b < r.runHi) {
			r.runHi, r.runEnd = b, false
		}
	}
}

// start readies a for rows over the ranges of bounds.
func (a *distinctInRanges) start(bounds []string) {
	a.runs.bounds = bounds
	a.counts, a.seen = make([]int64, len(bounds)/2), map[string]int{}
}

func (a *distinctInRanges) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if a.counts == nil {
		b, ok := args[2].([]byte)
		var bounds []string
		if err := json.Unmarshal(b, &bounds); !ok || err != nil || len(bounds)%2 != 0 {
			return fmt.Errorf("%s: the bounds are not a JSON array of pairs of strings", distinctInRangesFunc)
		}
		a.start(bounds)
	}
	x, ok1 := args[0].(string)
	v, ok2 := args[1].(string)
	a.other = a.other || !ok2
	if !ok1 || !ok2 || a.other {
		return nil
	}
	in := a.runs.holding(x)
	if len(in) == 0 {
		return nil
	}
	w := (len(a.counts) + 63) / 64
	n, ok := a.seen[v]
	if !ok && len(a.seen) >= maxDistinctValues {
		a.other, a.seen, a.words = true, nil, nil
		return nil
	}
	if !ok {
		n = len(a.seen)
		a.seen[strings.Clone(v)] = n // v is SQLite's memory (VolatileArgs)
		a.words = append(a.words, make([]uint64, w)...)
	}
	words := a.words[n*w : (n+1)*w]
	for _, i := range in {
		if bit := uint64(1) << (i % 64); words[i/64]&bit == 0 {
			words[i/64] |= bit
			a.counts[i]++
		}
	}
	return nil
}

func (a *distinctInRanges) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", distinctInRangesFunc)
}

func (a *distinctInRanges) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if a.counts == nil || a.other {
		return nil, nil
	}
	var b strings.Builder
	for i, n := range a.counts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(n, 10))
	}
	return b.String(), nil
}

func (a *distinctInRanges) Final(*sqlite.FunctionContext) {}
