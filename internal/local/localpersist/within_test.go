package localpersist

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// batchLookupQuery is the query a batch's collision check sends (issue 10 item 3):
// every token at once, as a list binding.
const batchLookupQuery = "g.V().hasLabel('short_url').has('short_url_token', within(tokens))" +
	".project('short_url_token','short_url_path','target_url').by('short_url_token').by('short_url_path').by('target_url')"

func TestWithin(t *testing.T) {
	e := newEnv(t, Options{})
	f := seedGraph(t, e)
	popular := f.popular.Properties["target_url"]
	tests := []struct {
		name     string
		query    string
		bindings map[string]any
		want     []any
	}{
		{"list binding", batchLookupQuery, map[string]any{"tokens": []string{"nope000000", "7BTadEDkJ8", "quiet00000"}}, []any{
			map[string]any{"short_url_token": "7BTadEDkJ8", "short_url_path": f.popular.Properties["short_url_path"], "target_url": popular},
			map[string]any{"short_url_token": "quiet00000", "short_url_path": f.quiet.Properties["short_url_path"], "target_url": f.quiet.Properties["target_url"]},
		}},
		{"empty list matches nothing", batchLookupQuery, map[string]any{"tokens": []string{}}, []any{}},
		{"literals (Neptune mode)", "g.V().hasLabel('short_url').has('short_url_token', within('quiet00000','7BTadEDkJ8','quiet00000')).values('short_url_token')", nil,
			[]any{"7BTadEDkJ8", "quiet00000"}},
		{"literals and bindings", "g.V().has('short_url_token', within(a, 'quiet00000')).hasLabel('short_url').count()", map[string]any{"a": "7BTadEDkJ8"}, []any{int64(2)}},
		{"mixed kinds", "g.V().has('count', within('-42', -42, true)).values('name')", nil, []any{"x"}},
		{"second has with within", "g.V().has('short_url_token', '7BTadEDkJ8').has('target_url', within(t, 'x')).label()", map[string]any{"t": popular}, []any{"short_url"}},
		{"within after a step (evaluated, not SQL)", "g.V().hasLabel('short_url').limit(10).has('short_url_token', within('quiet00000')).count()", nil, []any{int64(1)}},
		{"integer list binding", "g.V().has('count', within(ns)).values('name')", map[string]any{"ns": []int{1, -42}}, []any{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.query(t, tt.query, tt.bindings)
			byText := cmpopts.SortSlices(func(a, b any) bool { return fmt.Sprint(a) < fmt.Sprint(b) })
			if diff := cmp.Diff(tt.want, got, byText); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithinRefusals(t *testing.T) {
	e := newEnv(t, Options{})
	for name, tc := range map[string]struct {
		query    string
		bindings map[string]any
	}{
		"list without within":    {"g.V().has('short_url_token', toks).count()", map[string]any{"toks": []string{"a"}}},
		"__.within":              {"g.V().has('short_url_token', __.within('a')).count()", nil},
		"other predicate":        {"g.V().has('short_url_token', without('a')).count()", nil},
		"within in another step": {"g.V().hasLabel(within('a')).count()", nil},
		"nested list":            {"g.V().has('k', within(x)).count()", map[string]any{"x": []any{[]string{"a"}}}},
		"object in a list":       {"g.V().has('k', within(x)).count()", map[string]any{"x": []any{map[string]string{"a": "b"}}}},
		"traversal in within":    {"g.V().has('k', within(__.values('a'))).count()", nil},
	} {
		t.Run(name, func(t *testing.T) {
			status, r := e.gremlin(t, tc.query, tc.bindings)
			if status == http.StatusOK || r.Status.Code == codeSuccess {
				t.Fatalf("HTTP %d code %d: refused script was evaluated", status, r.Status.Code)
			}
		})
	}
}

// TestWithinUsesIndex: the batch query is driven by the token index.
func TestWithinUsesIndex(t *testing.T) {
	e := newEnv(t, Options{})
	root, err := parse(batchLookupQuery)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(batchLookupQuery, root, map[string]any{"tokens": []any{"a000000000", "b000000000"}})
	if err != nil {
		t.Fatal(err)
	}
	q, args, _, ok := startQuery(p)
	if !ok {
		t.Fatal("no start query")
	}
	plan := queryPlan(t, e.store, q, args...)
	if !strings.Contains(plan, "USING INDEX vertices_by_token (token=? AND label=?)") {
		t.Errorf("plan does not search the property index:\n%s", plan)
	}
}
