package localpersist

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/graphson"
)

// TestDistinctRangesAnswerAsEachAlone checks that a project() whose by()s count
// distinct visitors over several ranges, answered in one scan (distinctRanges),
// answers what each by() answers alone, through countDistinctStrings: overlapping,
// empty and inverted ranges, bounds that need JSON escaping, clicks outside every
// range, clicks without an effective_at, and scans that must give way to the
// per-by() path: more addresses than the aggregate keeps, a click without an
// address, one whose address is not a string.
func TestDistinctRangesAnswerAsEachAlone(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	var edges []graphson.Edge
	add := func(p graphson.Properties) {
		ed, err := graphson.NewEdge("short_url_visited", f.quiet, f.quiet, p)
		if err != nil {
			t.Fatal(err)
		}
		edges = append(edges, ed)
	}
	for i := range 60 {
		add(graphson.Properties{"event_identifier": fmt.Sprint("ev_", i), "user_agent": "ua",
			"visitor_ip_address": fmt.Sprintf("198.51.100.%d", i%7),
			"effective_at":       fmt.Sprintf("2026-11-%02dT%02d:00:00.000Z", 1+i%5, i%24)})
	}
	add(graphson.Properties{"event_identifier": "ev_no_at", "user_agent": "ua", "visitor_ip_address": "203.0.113.99"})
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{f.quiet}, Edges: edges})

	ranges := [][2]string{
		{"2026-11-01", "2026-11-06"}, {"2026-11-01", "2026-11-02"}, {"2026-11-02", "2026-11-03"},
		{"2026-11-02T04", "2026-11-04"}, {"2026-11-05", "2026-11-02"}, {"2026-11-03", "2026-11-03"},
		{"2026-12-01", "2026-12-02"}, {"\"q\" \\ \u00e9", "2026-11-04"},
	}
	by := func(lo, hi string) string {
		return fmt.Sprintf(".by(__.outE('short_url_visited').has('effective_at', gte('%s')).has('effective_at', lt('%s')).values('visitor_ip_address').dedup().count())",
			strings.ReplaceAll(strings.ReplaceAll(lo, `\`, `\\`), `'`, `\'`), hi)
	}
	const v = "g.V().has('short_url_token', 'quiet00000')"
	check := func(t *testing.T, oneScan bool) {
		var keys, bys []string
		want := map[string]any{}
		for i, r := range ranges {
			k := fmt.Sprint("r", i)
			keys, bys = append(keys, "'"+k+"'"), append(bys, by(r[0], r[1]))
			alone := e.query(t, v+".project('"+k+"')"+by(r[0], r[1]), nil)
			want[k] = alone[0].(map[string]any)[k]
		}
		if err := e.store.stmts.close(); err != nil { // empty: see which statements the next query prepares
			t.Fatal(err)
		}
		got := e.query(t, v+".project("+strings.Join(keys, ",")+")"+strings.Join(bys, ""), nil)
		if diff := cmp.Diff([]any{want}, got); diff != "" {
			t.Errorf("counts of the ranges together differ from each alone (-alone +together):\n%s", diff)
		}
		if scan, each := preparedWith(e.store, distinctInRangesFunc), preparedWith(e.store, "count(DISTINCT"); scan != 1 || (each == 0) == !oneScan {
			t.Errorf("prepared %d statements of the one scan and %d of a range each; want 1 and, for one scan, none", scan, each)
		}
	}
	t.Run("string addresses", func(t *testing.T) { check(t, true) })
	t.Run("more addresses than the aggregate keeps", func(t *testing.T) {
		defer func(n int) { maxDistinctValues = n }(maxDistinctValues)
		maxDistinctValues = 3
		check(t, false)
	})
	if got := e.query(t, v+".project('a','b')"+by("2026-11-01", "2026-11-02")+by("2026-11-02", "2026-11-03"), nil); !cmp.Equal(got, []any{map[string]any{"a": int64(7), "b": int64(7)}}) {
		t.Errorf("distinct visitors of two days = %v, want 7 each", got)
	}

	add(graphson.Properties{"event_identifier": "ev_no_ip", "user_agent": "ua", "effective_at": "2026-11-02T05:00:00.000Z"})
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{f.quiet}, Edges: edges[len(edges)-1:]})
	t.Run("a click without an address", func(t *testing.T) { check(t, false) })
	add(graphson.Properties{"event_identifier": "ev_int_ip", "user_agent": "ua", "visitor_ip_address": int64(7), "effective_at": "2026-11-02T06:00:00.000Z"})
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{f.quiet}, Edges: edges[len(edges)-1:]})
	t.Run("an address that is not a string", func(t *testing.T) { check(t, false) })
}

// preparedWith counts the statements the store has prepared whose text holds part.
func preparedWith(s *Store, part string) int {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	n := 0
	for q := range s.stmts.m {
		if strings.Contains(q, part) {
			n++
		}
	}
	return n
}

// TestDistinctInRangesFunc checks the aggregate on rows in no particular order,
// and that it answers NULL over no rows or when a counted value is not a string.
func TestDistinctInRangesFunc(t *testing.T) {
	e := newEnv(t, Options{})
	const rows = "(VALUES ('b', 'p'), ('a', 'p'), ('c', 'q'), ('b', 'q'), ('a', 'p'), (NULL, 'r'), ('bb', 'r'), ('b', 'p')"
	for _, c := range []struct {
		from string
		want sql.NullString
	}{
		{rows + ")", sql.NullString{String: "3 3 0 0", Valid: true}}, // [a,c) and [b,bz) hold p, q, r; [c,a) and [z,zz) nothing
		{rows + ", ('d', NULL))", sql.NullString{}},
		{rows + ", ('b', 7))", sql.NullString{}},
		{rows + ") WHERE column1 = 'none'", sql.NullString{}},
	} {
		var got sql.NullString
		err := e.store.rdb.QueryRowContext(context.Background(), "SELECT "+distinctInRangesFunc+"(column1, column2, ?) FROM "+c.from,
			[]byte(`["a","c","b","bz","c","a","z","zz"]`)).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("over %s: got %+v, want %+v", c.from, got, c.want)
		}
	}
	// Past 64 ranges a value's ranges take a second word.
	bounds, want := []string{}, []string{}
	for i := range 70 {
		switch i % 3 {
		case 0:
			bounds, want = append(bounds, "a", "c"), append(want, "3")
		case 1:
			bounds, want = append(bounds, "bb", "c"), append(want, "1")
		default:
			bounds, want = append(bounds, "c", "a"), append(want, "0")
		}
	}
	b, err := json.Marshal(bounds)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := e.store.rdb.QueryRowContext(context.Background(), "SELECT "+distinctInRangesFunc+"(column1, column2, ?) FROM "+rows+")", b).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != strings.Join(want, " ") {
		t.Errorf("over 70 ranges: got %q, want %q", got, strings.Join(want, " "))
	}
}
