package localpersist

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/linoone/linoone/internal/core/graphson"
)

// TestEdgeColumnsAnswerAsProperties checks that a has() or groupCount() answered
// from the property columns in SQL answers what the same filter evaluated on the
// decoded properties answers. has('event_identifier', neq('none')) matches every
// click and is never folded, so it forces the generic path for what follows it.
func TestEdgeColumnsAnswerAsProperties(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	var edges []graphson.Edge
	for _, p := range []graphson.Properties{
		{"event_identifier": "ev_day", "user_agent": "Slackbot 1.0", "effective_at": "2026-11-28T23:59:59.999Z"},
		{"event_identifier": "ev_next", "user_agent": "test", "effective_at": "2026-11-30T00:00:00.000Z"},
		{"event_identifier": "ev_no_ua", "effective_at": "2026-11-29T01:00:00.000Z"},
		{"event_identifier": "ev_int_at", "user_agent": "test", "effective_at": int64(20261129)},
	} {
		ed, err := graphson.NewEdge("short_url_visited", f.popular, f.popular, p)
		if err != nil {
			t.Fatal(err)
		}
		edges = append(edges, ed)
	}
	e.mustIngest(t, graphson.Document{Edges: edges})
	tok := map[string]any{"token": "7BTadEDkJ8", "lo": "2026-11-29", "hi": "2026-11-30"}
	const v = "g.V().has('short_url_token', token)"
	const generic = ".has('event_identifier', neq('none'))"
	// Once with the one-pass group count (countByFunc), once with it giving way to
	// GROUP BY at the first value.
	for _, maxValues := range []int{maxCountByValues, 0} {
		prev := maxCountByValues
		maxCountByValues = maxValues
		for _, tail := range []string{
			".count()",
			".groupCount().by('user_agent')",
			".has('effective_at', gte(lo)).has('effective_at', lt(hi)).groupCount().by('user_agent')",
			".has('effective_at', gte(lo)).has('effective_at', lt(hi)).values('event_identifier')",
			".has('effective_at', lte(lo)).values('event_identifier')",
			".has('effective_at', gt('2026-11-29T17:13:58.123Z')).count()",
			".has('effective_at', eq('2026-11-29T17:13:58.123Z')).count()",
			".has('effective_at', '2026-11-30T00:00:00.000Z').values('event_identifier')",
			".has('effective_at', 20261129).values('event_identifier')",
			".has('effective_at', neq('2026-11-29T17:13:58.123Z')).values('event_identifier')",
			".has('user_agent', 'test').has('effective_at', lt(hi)).count()",
			".has('user_agent', lt('test')).groupCount().by('effective_at')",
		} {
			for _, step := range []string{"outE('short_url_visited')", "inE('short_url_visited')", "outE()", "inE()"} {
				folded := e.query(t, v+"."+step+tail, tok)
				plain := e.query(t, v+"."+step+generic+tail, tok)
				if diff := cmp.Diff(plain, folded); diff != "" {
					t.Errorf("%s%s: folded answer differs (-generic +folded):\n%s", step, tail, diff)
				}
			}
		}
		want := []any{map[string]any{"test": int64(3), "Slackbot 1.0": int64(1)}}
		if got := e.query(t, v+".outE('short_url_visited').has('effective_at', gte('2026-11-28')).has('effective_at', lt(hi)).groupCount().by('user_agent')", tok); !cmp.Equal(got, want) {
			t.Errorf("clicks by user agent = %v, want %v", got, want)
		}
		if got := e.query(t, v+".outE('none').groupCount().by('user_agent')", tok); !cmp.Equal(got, []any{map[string]any{}}) {
			t.Errorf("groupCount of nothing = %v, want one empty map", got)
		}
		maxCountByValues = prev
	}
}

func TestGroupCountNonStringKey(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	ed, err := graphson.NewEdge("short_url_visited", f.popular, f.popular, graphson.Properties{"event_identifier": "ev_int_ua", "user_agent": int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{ed}})
	for _, q := range []string{
		"g.V().has('short_url_token', token).outE().groupCount().by('user_agent')",
		"g.V().has('short_url_token', token).outE().has('event_identifier', neq('x')).groupCount().by('user_agent')",
	} {
		status, r := e.gremlin(t, q, map[string]any{"token": "7BTadEDkJ8"})
		if status == http.StatusOK || !strings.Contains(r.Status.Message, "only string keys") {
			t.Errorf("%s: %d %q, want an error about string keys", q, status, r.Status.Message)
		}
	}
}

func TestGroupCountErrors(t *testing.T) {
	for _, tt := range []struct{ script, want string }{
		{"g.V().groupCount()", "groupCount() is supported as groupCount().by(key)"},
		{"g.V().groupCount().by('a').by('b')", "groupCount() is supported as groupCount().by(key)"},
		{"g.V().groupCount('x').by('a')", "side-effect key is not supported"},
		{"g.V().groupCount().by(__.id())", "groupCount()'s by() takes 1 property key here"},
	} {
		root, err := parse(tt.script)
		if err != nil {
			t.Fatalf("%s: %v", tt.script, err)
		}
		if _, err := compile(tt.script, root, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.script, err, tt.want)
		}
	}
}

// TestEdgeCountsFollowWhatWasCreated: outE(label).count() is answered from
// edge_counts, which the writer keeps in the transaction that creates the edges. A
// click ingested again, twice in one document, or in a document refused as a whole
// adds nothing; the kept count always equals a count of the edges themselves.
func TestEdgeCountsFollowWhatWasCreated(t *testing.T) {
	e := newEnv(t, Options{})
	u := shortURL(t, "7BTadEDkJ8")
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{u}})
	tok := map[string]any{"token": "7BTadEDkJ8"}
	check := func(want int64) {
		t.Helper()
		for _, q := range []string{
			"g.V().has('short_url_token', token).outE('short_url_visited').count()",
			"g.V().has('short_url_token', token).outE().count()",
			"g.V().has('short_url_token', token).outE('short_url_visited').has('event_identifier', neq('none')).count()",
		} {
			if got := e.query(t, q, tok); !cmp.Equal(got, []any{want}) {
				t.Errorf("%s = %v, want %d", q, got, want)
			}
		}
	}
	check(0)
	e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{click(t, u, "ev_1"), click(t, u, "ev_2")}})
	check(2)
	e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{click(t, u, "ev_1")}})
	check(2)
	e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{click(t, u, "ev_3"), click(t, u, "ev_3"), click(t, u, "ev_2")}})
	check(3)
	refused := click(t, u, "ev_4")
	refused.InVLabel = "visitor" // does not match the stored vertex: the whole document is refused
	if status, _ := e.ingest(t, docJSON(t, graphson.Document{Edges: []graphson.Edge{click(t, u, "ev_5"), refused}})); status != http.StatusBadRequest {
		t.Fatalf("a document with a mislabelled endpoint: status %d", status)
	}
	check(3)
}
