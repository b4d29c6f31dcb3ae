package localpersist

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/graphson"
)

// TestWindowRangesAnswerAsGeneric checks that a project() of a link's stats, its
// clicks by user agent over ranges and its distinct visitors over ranges, answered in
// one scan (windowRanges), answers what the generic evaluator does: overlapping,
// empty and inverted ranges, clicks outside every range or without an effective_at;
// and when the scan gives way (more values than an aggregate keeps, a click without
// a user agent, a user agent or an address that is not a string).
func TestWindowRangesAnswerAsGeneric(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	add := func(v graphson.Vertex, p graphson.Properties) {
		ed, err := graphson.NewEdge("short_url_visited", v, v, p)
		if err != nil {
			t.Fatal(err)
		}
		e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{ed}})
	}
	for _, v := range []graphson.Vertex{f.quiet, f.partial} {
		for i := range 60 {
			add(v, graphson.Properties{"event_identifier": fmt.Sprint("ev_", i), "user_agent": fmt.Sprint("ua ", i%4),
				"visitor_ip_address": fmt.Sprintf("198.51.100.%d", i%7),
				"effective_at":       fmt.Sprintf("2026-11-%02dT%02d:00:00.000Z", 1+i%5, i%24)})
		}
		add(v, graphson.Properties{"event_identifier": "ev_no_at", "user_agent": "ua", "visitor_ip_address": "203.0.113.99"})
	}

	ranges := [][2]string{
		{"2026-11-01", "2026-11-06"}, {"2026-11-01", "2026-11-02"}, {"2026-11-02", "2026-11-03"},
		{"2026-11-02T04", "2026-11-04"}, {"2026-11-05", "2026-11-02"}, {"2026-11-03", "2026-11-03"},
		{"2026-12-01", "2026-12-02"},
	}
	// script is the stats' project(); generic puts a filter on a property outside
	// the edge columns after each outE(), which no scan folds.
	script := func(tok string, generic bool) string {
		outE := "__.outE('short_url_visited')"
		if generic {
			outE += ".has('event_identifier', neq('none'))"
		}
		keys := []string{"'short_url_token'", "'clicks'"}
		bys := []string{".by('short_url_token')", ".by(" + outE + ".count())"}
		for i, r := range ranges {
			within := fmt.Sprintf("%s.has('effective_at', gte('%s')).has('effective_at', lt('%s'))", outE, r[0], r[1])
			keys = append(keys, fmt.Sprintf("'d%d'", i), fmt.Sprintf("'u%d'", i))
			bys = append(bys, ".by("+within+".groupCount().by('user_agent'))", ".by("+within+".values('visitor_ip_address').dedup().count())")
		}
		return "g.V().has('short_url_token', '" + tok + "').project(" + strings.Join(keys, ",") + ")" + strings.Join(bys, "")
	}
	answer := func(t *testing.T, script string) any {
		t.Helper()
		status, r := e.gremlin(t, script, nil)
		if r.Status.Code != codeSuccess {
			return fmt.Sprintf("HTTP %d, code %d", status, r.Status.Code)
		}
		v, err := graphson.DecodeValue(r.Result.Data)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(t *testing.T, tok string, oneScan bool) {
		want := answer(t, script(tok, true))
		if err := e.store.stmts.close(); err != nil { // empty: see which statements the next query prepares
			t.Fatal(err)
		}
		got := answer(t, script(tok, false))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("folded answer differs (-generic +folded):\n%s", diff)
		}
		scan, days := preparedWith(e.store, countInRangesFunc), preparedWith(e.store, countByFunc)+preparedWith(e.store, "GROUP BY")
		if scan != 1 || (days == 0) != oneScan {
			t.Errorf("prepared %d statements of the one scan and %d of a day's group count; want 1 and, for one scan, none", scan, days)
		}
	}
	t.Run("strings", func(t *testing.T) { check(t, "quiet00000", true) })
	t.Run("more user agents than the group count keeps", func(t *testing.T) {
		defer func(n int) { maxCountByValues = n }(maxCountByValues)
		maxCountByValues = 2
		check(t, "quiet00000", false)
	})
	t.Run("more addresses than the distinct count keeps", func(t *testing.T) {
		defer func(n int) { maxDistinctValues = n }(maxDistinctValues)
		maxDistinctValues = 3
		check(t, "quiet00000", false)
	})
	if got := answer(t, script("quiet00000", false)); !cmp.Equal(got.([]any)[0].(map[string]any)["d2"], map[string]any{"ua 0": int64(3), "ua 1": int64(3), "ua 2": int64(3), "ua 3": int64(3)}) {
		t.Errorf("clicks of 2026-11-02 by user agent = %v, want 3 of each of four", got.([]any)[0].(map[string]any)["d2"])
	}

	add(f.quiet, graphson.Properties{"event_identifier": "ev_no_ua", "visitor_ip_address": "203.0.113.1", "effective_at": "2026-11-02T05:00:00.000Z"})
	t.Run("a click without a user agent", func(t *testing.T) { check(t, "quiet00000", false) })
	add(f.quiet, graphson.Properties{"event_identifier": "ev_int_ua", "user_agent": int64(7), "visitor_ip_address": "203.0.113.2", "effective_at": "2026-11-03T06:00:00.000Z"})
	t.Run("a user agent that is not a string", func(t *testing.T) { check(t, "quiet00000", false) })
	add(f.partial, graphson.Properties{"event_identifier": "ev_int_ip", "user_agent": "ua", "visitor_ip_address": int64(7), "effective_at": "2026-11-02T06:00:00.000Z"})
	t.Run("an address that is not a string", func(t *testing.T) { check(t, "partial000", false) })
}
