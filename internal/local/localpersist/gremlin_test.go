package localpersist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/linoone/linoone/internal/core/graphson"
)

// The queries Linoone sends, with the token as a binding.
const (
	lookupQuery = "g.V().hasLabel('short_url').has('short_url_token', token).limit(1).project('short_url_token','short_url_path','target_url').by('short_url_token').by('short_url_path').by('target_url')"
	clicksQuery = "g.V().hasLabel('short_url').has('short_url_token', token).limit(1).project('short_url_token','clicks').by('short_url_token').by(__.outE('short_url_visited').count())"
	countQuery  = "g.V().hasLabel('short_url').has('short_url_token', token).outE('short_url_visited').count()"
)

// inline writes the token into the query as a quoted literal (the Neptune mode).
func inline(query, quote, token string) string {
	return strings.Replace(query, "token)", quote+token+quote+")", 1)
}

type graphFixture struct {
	popular, quiet, partial graphson.Vertex
	clicks                  []graphson.Edge
	sample                  graphson.Vertex
}

func seedGraph(t *testing.T, e *testEnv) graphFixture {
	t.Helper()
	var f graphFixture
	f.popular = shortURL(t, "7BTadEDkJ8")
	f.quiet = shortURL(t, "quiet00000")
	var err error
	// A short_url without target_url: project must omit the key.
	if f.partial, err = graphson.NewVertex("short_url", graphson.Properties{"short_url_token": "partial000", "short_url_path": "https://s.example/partial000"}); err != nil {
		t.Fatal(err)
	}
	// Another label carrying the same token: hasLabel must filter it out.
	decoy, err := graphson.NewVertex("decoy", graphson.Properties{"short_url_token": "7BTadEDkJ8"})
	if err != nil {
		t.Fatal(err)
	}
	if f.sample, err = graphson.NewVertex("sample", graphson.Properties{"count": int64(-42), "flag": true, "name": "x", "text": "caf\u00e9 \"q\" \\ \u0001 \u0000 😀"}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"ev_1", "ev_2", "ev_3"} {
		f.clicks = append(f.clicks, click(t, f.popular, ev))
	}
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{f.popular, f.quiet, f.partial, decoy, f.sample}, Edges: f.clicks})
	// A replayed click is the same edge: still three.
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{f.popular}, Edges: f.clicks[:1]})
	return f
}

func TestLinooneQueries(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	p := f.popular.Properties
	lookupPopular := []any{map[string]any{"short_url_token": "7BTadEDkJ8", "short_url_path": p["short_url_path"], "target_url": p["target_url"]}}

	tests := []struct {
		name  string
		query string
		token string
		want  []any
	}{
		{"lookup", lookupQuery, "7BTadEDkJ8", lookupPopular},
		{"lookup unknown token", lookupQuery, "unknown000", []any{}},
		{"lookup missing property", lookupQuery, "partial000", []any{map[string]any{"short_url_token": "partial000", "short_url_path": "https://s.example/partial000"}}},
		{"clicks", clicksQuery, "7BTadEDkJ8", []any{map[string]any{"short_url_token": "7BTadEDkJ8", "clicks": int64(3)}}},
		{"clicks none", clicksQuery, "quiet00000", []any{map[string]any{"short_url_token": "quiet00000", "clicks": int64(0)}}},
		{"clicks unknown token", clicksQuery, "unknown000", []any{}},
		{"count self-loops once each", countQuery, "7BTadEDkJ8", []any{int64(3)}},
		{"count none", countQuery, "quiet00000", []any{int64(0)}},
		{"count unknown token", countQuery, "unknown000", []any{int64(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, form := range []struct {
				name     string
				query    string
				bindings map[string]any
			}{
				{"bindings", tt.query, map[string]any{"token": tt.token}},
				{"inlined single-quoted", inline(tt.query, "'", tt.token), nil},
				{"inlined double-quoted", inline(tt.query, `"`, tt.token), nil},
			} {
				got := e.query(t, form.query, form.bindings)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: (-want +got):\n%s", form.name, diff)
				}
			}
		})
	}
}

func TestGremlinResponseShape(t *testing.T) {
	e := newEnv(t, Options{})
	seedGraph(t, e)
	body := []byte(`{"gremlin":"g.V().hasLabel('short_url').has('short_url_token', token).outE('short_url_visited').count()","bindings":{"token":"7BTadEDkJ8"}}`)
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/persist/gremlin", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.gremlin-v3.0+json")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != gremlinContentType {
		t.Errorf("Content-Type %q", ct)
	}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	r := decodeGremlinReply(t, raw.Bytes())
	if len(r.RequestID) != 36 || r.RequestID[14] != '4' {
		t.Errorf("requestId %q is not a version 4 UUID", r.RequestID)
	}
	// Everything but the request id is fixed.
	want := `{"requestId":"` + r.RequestID + `","status":{"message":"","code":200,"attributes":{"@type":"g:Map","@value":[]}},"result":{"data":{"@type":"g:List","@value":[{"@type":"g:Int64","@value":3}]},"meta":{"@type":"g:Map","@value":[]}}}`
	if raw.String() != want {
		t.Errorf("body:\n got %s\nwant %s", raw.String(), want)
	}
}

func TestGremlinSubset(t *testing.T) {
	e := newEnv(t, Options{Now: func() time.Time { return time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC) }})
	f := seedGraph(t, e)
	clickIDs := []string{f.clicks[0].ID, f.clicks[1].ID, f.clicks[2].ID}
	slices.Sort(clickIDs)
	var firstEvent string
	for _, c := range f.clicks {
		if c.ID == clickIDs[0] {
			firstEvent = c.Properties["event_identifier"].(string)
		}
	}

	tests := []struct {
		name     string
		query    string
		bindings map[string]any
		want     []any
	}{
		{"count by label", "g.V().hasLabel('short_url').count()", nil, []any{int64(3)}},
		{"count all", "g.V().count()", nil, []any{int64(5)}},
		{"several labels", "g.V().hasLabel('short_url', 'decoy').has('short_url_token', '7BTadEDkJ8').count()", nil, []any{int64(2)}},
		{"has without hasLabel", "g.V().has('short_url_token', '7BTadEDkJ8').label()", nil, sortedLabels(t, f.popular, "decoy")},
		{"two has", "g.V().has('short_url_token', '7BTadEDkJ8').has('target_url', t).id()", map[string]any{"t": f.popular.Properties["target_url"]}, []any{f.popular.ID}},
		{"two has, no match", "g.V().has('short_url_token', '7BTadEDkJ8').has('target_url', 'x').id()", nil, []any{}},
		{"hasLabel after has", "g.V().has('short_url_token', '7BTadEDkJ8').limit(5).hasLabel('decoy').count()", nil, []any{int64(1)}},
		{"values", "g.V().hasLabel('short_url').has('short_url_token', '7BTadEDkJ8').values('target_url')", nil, []any{f.popular.Properties["target_url"]}},
		{"values missing", "g.V().hasLabel('short_url').has('short_url_token', 'partial000').values('target_url')", nil, []any{}},
		{"id", "g.V().hasLabel('short_url').has('short_url_token', \"7BTadEDkJ8\").id()", nil, []any{f.popular.ID}},
		{"integer property", "g.V().hasLabel('sample').has('count', -42).values('name')", nil, []any{"x"}},
		{"integer property, long suffix", "g.V().hasLabel('sample').has('count', -42L).values('name')", nil, []any{"x"}},
		{"integer binding", "g.V().has('count', n).values('name')", map[string]any{"n": -42}, []any{"x"}},
		{"integer is not a string", "g.V().has('count', '-42').count()", nil, []any{int64(0)}},
		{"boolean property", "g.V().has('flag', true).values('count')", nil, []any{int64(-42)}},
		{"boolean binding", "g.V().has('flag', b).values('flag')", map[string]any{"b": true}, []any{true}},
		{"boolean is not an integer", "g.V().has('flag', 1).count()", nil, []any{int64(0)}},
		{"escapes", `g.V().has('text', 'caf\u00e9 "q" \\ \u0001 \u0000 \uD83D\uDE00').values('name')`, nil, []any{"x"}},
		{"escapes, double quotes", `g.V().has("text", "café \"q\" \\ \u0001 \u0000 😀").values('name')`, nil, []any{"x"}},
		{"created_at", "g.V().hasLabel('sample').values('created_at')", nil, []any{"2026-11-29T00:00:00.000Z"}},
		{"has created_at", "g.V().has('created_at', '2026-11-29T00:00:00.000Z').hasLabel('sample').count()", nil, []any{int64(1)}},
		{"has created_at, integer", "g.V().has('created_at', 1).count()", nil, []any{int64(0)}},
		{"outE then limit", "g.V().has('short_url_token', '7BTadEDkJ8').outE('short_url_visited').limit(1).values('event_identifier')", nil, []any{firstEvent}},
		{"outE has", "g.V().hasLabel('short_url').outE('short_url_visited').has('event_identifier', 'ev_2').count()", nil, []any{int64(1)}},
		{"outE any label", "g.V().hasLabel('short_url').outE().count()", nil, []any{int64(3)}},
		{"outE other label", "g.V().hasLabel('short_url').outE('other').count()", nil, []any{int64(0)}},
		{"inE", "g.V().hasLabel('short_url').inE('short_url_visited').count()", nil, []any{int64(3)}},
		{"edge ids", "g.V().hasLabel('short_url').outE('short_url_visited').id()", nil, []any{clickIDs[0], clickIDs[1], clickIDs[2]}},
		{"edge label", "g.V().hasLabel('short_url').outE().limit(1).label()", nil, []any{"short_url_visited"}},
		{"limit 0", "g.V().limit(0)", nil, []any{}},
		{"limit binding", "g.V().hasLabel('short_url').limit(n).count()", map[string]any{"n": 2}, []any{int64(2)}},
		{"count of count", "g.V().count().count()", nil, []any{int64(1)}},
		{"project by values traversal", "g.V().hasLabel('short_url').has('short_url_token', 'partial000').project('t', 'p').by(__.values('target_url')).by(values('short_url_path'))", nil,
			[]any{map[string]any{"p": "https://s.example/partial000"}}},
		{"project by binding key", "g.V().hasLabel('sample').project('k').by(k)", map[string]any{"k": "name"}, []any{map[string]any{"k": "x"}}},
		{"nested project", "g.V().hasLabel('sample').project('a').by(__.project('b').by('name'))", nil, []any{map[string]any{"a": map[string]any{"b": "x"}}}},
		{"project on empty", "g.V().hasLabel('nothing').project('a').by('a')", nil, []any{}},
		{"trailing semicolon", "g.V().hasLabel('short_url').count();", nil, []any{int64(3)}},
		{"edge range", "g.V().hasLabel('short_url').outE('short_url_visited').has('effective_at', gte('2026-11-29')).has('effective_at', lt('2026-11-30')).count()", nil, []any{int64(3)}},
		{"edge range, bindings", "g.V().outE().has('effective_at', gte(since)).has('effective_at', lt(until)).count()", map[string]any{"since": "2026-11-30", "until": "2026-12-01"}, []any{int64(0)}},
		{"edge range, upper bound", "g.V().outE().has('effective_at', lte('2026-11-29T17:13:58.123Z')).has('effective_at', gt('2026-11-29T17:13:58.122Z')).count()", nil, []any{int64(3)}},
		{"vertex predicate", "g.V().has('count', lt(0)).values('name')", nil, []any{"x"}},
		{"vertex predicate after has", "g.V().hasLabel('sample').has('count', gte(-42)).has('count', lte(n)).values('name')", map[string]any{"n": -42}, []any{"x"}},
		{"predicate eq", "g.V().has('name', eq('x')).count()", nil, []any{int64(1)}},
		{"predicate types never compare", "g.V().has('count', gt('a')).count()", nil, []any{int64(0)}},
		{"predicate neq other type", "g.V().hasLabel('sample').has('count', neq('a')).count()", nil, []any{int64(1)}},
		{"predicate booleans", "g.V().has('flag', gt(false)).values('name')", nil, []any{"x"}},
		{"predicate missing property", "g.V().hasLabel('short_url').has('target_url', neq('x')).count()", nil, []any{int64(2)}},
		{"group", "g.V().hasLabel('short_url').has('short_url_token', '7BTadEDkJ8').outE('short_url_visited').group().by('user_agent').by('effective_at')", nil,
			[]any{map[string]any{"test": []any{"2026-11-29T17:13:58.123Z", "2026-11-29T17:13:58.123Z", "2026-11-29T17:13:58.123Z"}}}},
		{"group nothing", "g.V().hasLabel('nothing').group().by('a').by('b')", nil, []any{map[string]any{}}},
		{"group missing key and value", "g.V().hasLabel('short_url').group().by('short_url_path').by('target_url')", nil,
			[]any{map[string]any{
				f.popular.Properties["short_url_path"].(string): []any{f.popular.Properties["target_url"]},
				f.quiet.Properties["short_url_path"].(string):   []any{f.quiet.Properties["target_url"]},
				"https://s.example/partial000":                  []any{},
			}}},
		{"project by group", "g.V().hasLabel('short_url').has('short_url_token', '7BTadEDkJ8').project('n', 'g').by(__.outE('short_url_visited').count()).by(__.outE('short_url_visited').has('effective_at', gte('2026-11-30')).group().by('user_agent').by('effective_at'))", nil,
			[]any{map[string]any{"n": int64(3), "g": map[string]any{}}}},
		{"whitespace", "g .V( )\n\t.hasLabel( 'short_url' )\r\n.count( )", nil, []any{int64(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.query(t, tt.query, tt.bindings)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func sortedLabels(t *testing.T, v graphson.Vertex, otherLabel string) []any {
	t.Helper()
	other, err := graphson.NewVertex(otherLabel, graphson.Properties{"short_url_token": v.Properties["short_url_token"]})
	if err != nil {
		t.Fatal(err)
	}
	if v.ID < other.ID {
		return []any{v.Label, other.Label}
	}
	return []any{other.Label, v.Label}
}

func TestGremlinElements(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	status, r := e.gremlin(t, "g.V().hasLabel('sample')", nil)
	want := `{"@type":"g:List","@value":[{"@type":"g:Vertex","@value":{"id":"` + f.sample.ID + `","label":"sample"}}]}`
	if status != http.StatusOK || string(r.Result.Data) != want {
		t.Errorf("vertex: HTTP %d, data %s; want %s", status, r.Result.Data, want)
	}
	c := f.clicks[0]
	status, r = e.gremlin(t, "g.V().hasLabel('short_url').has('short_url_token', '7BTadEDkJ8').project('e', 'n').by(__.outE().has('event_identifier', 'ev_1')).by('short_url_token')", nil)
	want = `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["e",{"@type":"g:Edge","@value":{"id":"` + c.ID +
		`","label":"short_url_visited","inVLabel":"short_url","outVLabel":"short_url","inV":"` + c.InV + `","outV":"` + c.OutV + `"}},"n","7BTadEDkJ8"]}]}`
	if status != http.StatusOK || string(r.Result.Data) != want {
		t.Errorf("edge in map: HTTP %d, data %s;\nwant %s", status, r.Result.Data, want)
	}
	status, r = e.gremlin(t, "g.V().hasLabel('sample').project('outer').by(__.project('inner').by(__.limit(1)))", nil)
	want = `{"@type":"g:List","@value":[{"@type":"g:Map","@value":["outer",{"@type":"g:Map","@value":["inner",{"@type":"g:Vertex","@value":{"id":"` +
		f.sample.ID + `","label":"sample"}}]}]}]}`
	if status != http.StatusOK || string(r.Result.Data) != want {
		t.Errorf("vertex in a map in a map: HTTP %d, code %d %q, data %s;\nwant %s", status, r.Status.Code, r.Status.Message, r.Result.Data, want)
	}
}

// TestScriptAndListsBounded: a script over maxScriptBytes is refused with 400 before it
// is tokenised; the largest Linoone sends (1,000 tokens inlined as literals, as for
// Neptune) is served. So is a list binding over maxBindingList, and a traversal that
// binds more than maxPlanParameters values.
func TestScriptAndListsBounded(t *testing.T) {
	e := newEnv(t, Options{})
	status, r := e.gremlin(t, "g.V().limit(1)"+strings.Repeat(" ", maxScriptBytes), nil)
	if status != http.StatusBadRequest || !strings.Contains(r.Status.Message, "over the limit") {
		t.Errorf("oversized script: HTTP %d, %q; want 400 naming the limit", status, r.Status.Message)
	}
	lits := make([]string, 1000)
	for i := range lits {
		lits[i] = fmt.Sprintf("'tok%07d'", i)
	}
	script := "g.V().hasLabel('short_url').has('short_url_token', within(" + strings.Join(lits, ",") + "))" +
		".project('short_url_token','short_url_path','target_url')" +
		".by('short_url_token').by('short_url_path').by('target_url')"
	if status, r := e.gremlin(t, script, nil); status != http.StatusOK {
		t.Errorf("a %d-byte lookup of 1,000 inlined tokens: HTTP %d, %q", len(script), status, r.Status.Message)
	}
	// A list binding takes an SQL parameter a value: past maxBindingList it is
	// refused as a bad request, not failed in SQLite as a storage failure.
	tokens := make([]any, maxBindingList+1)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%07d", i)
	}
	lookup := "g.V().hasLabel('short_url').has('short_url_token', within(tokens)).values('target_url')"
	if status, r := e.gremlin(t, lookup, map[string]any{"tokens": tokens}); status != http.StatusBadRequest || !strings.Contains(r.Status.Message, "over the limit") {
		t.Errorf("a list binding of %d values: HTTP %d, %q; want 400 naming the limit", len(tokens), status, r.Status.Message)
	}
	if status, r := e.gremlin(t, lookup, map[string]any{"tokens": tokens[:maxBindingList]}); status != http.StatusOK {
		t.Errorf("a list binding of %d values: HTTP %d, %q", maxBindingList, status, r.Status.Message)
	}
	// Nor does a list binding used again and again get past SQLite's bound of 32,766
	// parameters in a statement: the plan's are counted and refused past
	// maxPlanParameters. Three uses are still served.
	full := map[string]any{"t": tokens[:maxBindingList]}
	for script, ok := range map[string]bool{
		"g.V().has('short_url_token', within(t, t, t)).count()":    true,
		"g.V().has('short_url_token', within(t, t, t, t)).count()": false,
		"g.V().has('short_url_token', within(t)).has('short_url_token', within(t)).has('short_url_token', within(t)).has('short_url_token', within(t)).count()": false,
	} {
		status, r := e.gremlin(t, script, full)
		switch {
		case ok && status != http.StatusOK:
			t.Errorf("%s: HTTP %d, %q", script, status, r.Status.Message)
		case !ok && (status != http.StatusBadRequest || r.Status.Code != codeInvalidRequestArguments || !strings.Contains(r.Status.Message, "over the limit")):
			t.Errorf("%s: HTTP %d, code %d, %q; want 400 / 499 naming the limit", script, status, r.Status.Code, r.Status.Message)
		}
	}
}

// TestProjectKeysBounded: a project() of more than maxProjectKeys keys, each of which
// every traverser evaluates, is refused as a bad request; one of maxProjectKeys is
// served.
func TestProjectKeysBounded(t *testing.T) {
	e := newEnv(t, Options{})
	seedGraph(t, e)
	script := func(n int) string {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("'k%d'", i)
		}
		return "g.V().hasLabel('sample').project(" + strings.Join(keys, ",") + ")" + strings.Repeat(".by('name')", n)
	}
	if status, r := e.gremlin(t, script(maxProjectKeys), nil); status != http.StatusOK {
		t.Errorf("%d keys: HTTP %d, %q", maxProjectKeys, status, r.Status.Message)
	}
	status, r := e.gremlin(t, script(maxProjectKeys+1), nil)
	if status != http.StatusBadRequest || r.Status.Code != codeInvalidRequestArguments || !strings.Contains(r.Status.Message, "over the limit") {
		t.Errorf("%d keys: HTTP %d, code %d, %q; want 400 / 499 naming the limit", maxProjectKeys+1, status, r.Status.Code, r.Status.Message)
	}
}

// TestAnswerBounded: an answer whose result data would pass Options.MaxAnswerBytes
// is refused as a bad request; one of exactly the bound is served. The bound holds
// within one result too: group() answers a single map.
func TestAnswerBounded(t *testing.T) {
	answer := func(t *testing.T, script string, limit int) (int, gremlinReply) {
		t.Helper()
		e := newEnv(t, Options{MaxAnswerBytes: limit})
		seedGraph(t, e)
		return e.gremlin(t, script, nil)
	}
	for _, script := range []string{
		"g.V().hasLabel('short_url').values('target_url')",
		"g.V().hasLabel('short_url').group().by('short_url_token').by('target_url')",
	} {
		t.Run(script, func(t *testing.T) {
			_, r := answer(t, script, 0)
			size := len(r.Result.Data)
			if status, r := answer(t, script, size); status != http.StatusOK || len(r.Result.Data) != size {
				t.Errorf("a %d-byte answer within its bound: HTTP %d, %q", size, status, r.Status.Message)
			}
			status, r := answer(t, script, size-1)
			if status != http.StatusBadRequest || r.Status.Code != codeInvalidRequestArguments || !strings.Contains(r.Status.Message, "over the limit") {
				t.Errorf("a %d-byte answer over a bound of %d: HTTP %d, code %d, %q; want 400 / 499 naming the limit", size, size-1, status, r.Status.Code, r.Status.Message)
			}
		})
	}
}

// TestAnswerStopsGrowingAtItsBound: the bound is checked before each value of a
// result, so one map of 16 MiB is given up a value past the bound, not built whole.
func TestAnswerStopsGrowingAtItsBound(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	m := make(map[string]any, 256)
	for i := range 256 {
		m[fmt.Sprintf("k%03d", i)] = big
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := appendResults(make([]byte, 0, 256), []any{m}, 1<<20)
	runtime.ReadMemStats(&after)
	var lerr *limitError
	if !errors.As(err, &lerr) {
		t.Fatalf("err = %v, want a *limitError", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("allocated %d MB to refuse a 16 MiB answer over a bound of 1 MiB", got>>20)
	}
}

// TestAppendResultAgreesWithAppendValue: lists and maps without elements, which
// appendResult writes item by item to check the bound before each, come out byte
// for byte as graphson.AppendValue writes them.
func TestAppendResultAgreesWithAppendValue(t *testing.T) {
	v := []any{"a", int64(-3), true, nil, []any{[]any{"x"}, []any{}},
		map[string]any{"z": []any{}, "b": map[string]any{"c": "caf\u00e9 \"q\" \\ \u0001"}, "a": int64(7), "é": map[string]any{}}}
	want, err := graphson.AppendValue(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := appendResult(nil, v, DefaultMaxAnswerBytes)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("appendResult = %s, %v\nwant %s", got, err, want)
	}
}

// TestEvaluationStopsWhenTheClientLeaves: each loop over traversers that runs no
// statement gives up once the request's context is done, rather than finish a
// large traversal for a client that hung up.
func TestEvaluationStopsWhenTheClientLeaves(t *testing.T) {
	e := newEnv(t, Options{})
	seedGraph(t, e)
	for _, script := range []string{
		"g.V().limit(100).hasLabel('short_url')",
		"g.V().has('name', 'x')",
		"g.V().values('short_url_token')",
		"g.V().project('a').by('short_url_token')",
		"g.V().group().by('short_url_token').by('target_url')",
		"g.V().groupCount().by('short_url_token')",
	} {
		t.Run(script, func(t *testing.T) {
			root, err := parse(script)
			if err != nil {
				t.Fatal(err)
			}
			p, err := compile(script, root, nil)
			if err != nil {
				t.Fatal(err)
			}
			in, rest, err := e.store.start(t.Context(), p)
			if err != nil || len(in) == 0 || len(rest) != 1 {
				t.Fatalf("start: %d traversers, %d steps left, %v", len(in), len(rest), err)
			}
			gone, cancel := context.WithCancel(t.Context())
			cancel()
			if out, err := e.store.apply(gone, p.src, rest, in); !errors.Is(err, context.Canceled) {
				t.Errorf("%s() after the client left: %d results, %v; want context.Canceled", rest[0].name, len(out), err)
			}
		})
	}
}
