package localpersist

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/graphson"
)

// visit is a short_url_visited self-loop on v from ip (any GraphSON value; nil
// leaves the property out).
func visit(t *testing.T, v graphson.Vertex, event string, ip any, at string) graphson.Edge {
	t.Helper()
	p := graphson.Properties{"event_identifier": event, "user_agent": "test", "effective_at": at}
	if ip != nil {
		p["visitor_ip_address"] = ip
	}
	e, err := graphson.NewEdge("short_url_visited", v, v, p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestDistinctVisitors counts distinct visitor addresses, the unique visitors of
// the stats: values(key).dedup().count() after outE() is answered in SQL, and must
// answer what the same steps evaluated in Go answer (a limit() in between keeps
// them out of SQL), including when an address is not a string and SQL gives up.
func TestDistinctVisitors(t *testing.T) {
	e := newEnv(t, Options{})
	strs, mixed, gaps := shortURL(t, "Distinct01"), shortURL(t, "Distinct02"), shortURL(t, "Distinct03")
	doc := graphson.Document{Vertices: []graphson.Vertex{strs, mixed, gaps}}
	for i, ip := range []any{"192.0.2.1", nil, "2001:db8::1", "2001:DB8::1", nil, "192.0.2.1", "::1"} {
		doc.Edges = append(doc.Edges, visit(t, gaps, fmt.Sprintf("ev_g%d", i), ip, fmt.Sprintf("2026-11-%02dT10:00:00.000Z", 28+i%2)))
	}
	for i, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.1", "2001:db8::1", "192.0.2.2"} {
		doc.Edges = append(doc.Edges, visit(t, strs, fmt.Sprintf("ev_s%d", i), ip, fmt.Sprintf("2026-11-%02dT10:00:00.000Z", 28+i%3)))
	}
	for i, ip := range []any{"1", int64(1), int64(1), "1", true} {
		doc.Edges = append(doc.Edges, visit(t, mixed, fmt.Sprintf("ev_m%d", i), ip, "2026-11-29T10:00:00.000Z"))
	}
	e.mustIngest(t, doc)
	for _, tt := range []struct {
		token, window string
		want          int64
	}{
		{"Distinct01", "", 3},
		{"Distinct01", ".has('effective_at', gte('2026-11-29')).has('effective_at', lt('2026-11-30'))", 1},
		{"Distinct01", ".has('effective_at', gte('2026-11-28')).has('effective_at', lt('2026-11-30'))", 3},
		{"Distinct01", ".has('effective_at', gte('2026-12-01'))", 0},
		{"Distinct02", "", 3}, // "1", 1 and true
		{"Distinct03", "", 4}, // clicks without an address count no visitor; IPv6 spellings are strings
		{"Distinct03", ".has('effective_at', gte('2026-11-29'))", 2},
		{"NoSuchTok0", "", 0},
	} {
		t.Run(tt.token+tt.window, func(t *testing.T) {
			var answers [][]any
			for _, tail := range []string{".values('visitor_ip_address').dedup().count()", ".values('visitor_ip_address').limit(1000).dedup().count()"} {
				answers = append(answers, e.query(t, "g.V().hasLabel('short_url').has('short_url_token', tok).outE('short_url_visited')"+tt.window+tail, map[string]any{"tok": tt.token}))
			}
			want := []any{tt.want}
			if d := cmp.Diff(want, answers[0]); d != "" {
				t.Errorf("SQL answer (-want +got):\n%s", d)
			}
			if d := cmp.Diff(answers[0], answers[1]); d != "" {
				t.Errorf("SQL and Go disagree (-sql +go):\n%s", d)
			}
		})
	}
	got := e.query(t, "g.V().hasLabel('short_url').has('short_url_token', 'Distinct01').outE('short_url_visited').values('visitor_ip_address').dedup()", nil)
	if d := cmp.Diff([]any{"192.0.2.1", "192.0.2.2", "2001:db8::1"}, sorted(got)); d != "" {
		t.Errorf("dedup (-want +got):\n%s", d)
	}
	if status, r := e.gremlin(t, "g.V().hasLabel('short_url').groupCount().by('short_url_token').dedup()", nil); status == 200 {
		t.Errorf("dedup of a map answered %d %s", status, r.Result.Data)
	}
}

func sorted(v []any) []any {
	out := append([]any(nil), v...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if fmt.Sprint(out[j]) < fmt.Sprint(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
