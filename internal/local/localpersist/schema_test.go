package localpersist

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// queryPlan returns the detail lines of EXPLAIN QUERY PLAN for a statement.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.rdb.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

func TestQueriesUseIndexes(t *testing.T) {
	e := newEnv(t, Options{})
	seedGraph(t, e)
	startPlan := func(script string) (string, []any) {
		t.Helper()
		root, err := parse(script)
		if err != nil {
			t.Fatal(err)
		}
		p, err := compile(script, root, map[string]any{"token": "7BTadEDkJ8", "at": "2026-12-01T09:00:00.000Z", "after": "7BTadEDkJ8"})
		if err != nil {
			t.Fatal(err)
		}
		q, args, _, ok := startQuery(p)
		if !ok {
			t.Fatalf("%s: no start query", script)
		}
		return q, args
	}
	scan := func(dir stepKind, labels ...string) *edgeScan {
		return &edgeScan{st: &step{kind: dir, labels: labels}}
	}
	countEdges := func(dir stepKind, labels ...string) (string, []any) {
		q, args := scan(dir, labels...).query("1", "x")
		return "SELECT count(*) FROM (" + q + ")", args
	}
	window := func() (string, []any) {
		st := []step{{kind: stepOutE, labels: []string{"short_url_visited"}},
			{kind: stepHas, key: "effective_at", pred: &predicate{op: "gte", value: "2026-11-01"}},
			{kind: stepHas, key: "effective_at", pred: &predicate{op: "lt", value: "2026-11-02"}}}
		sc, last := foldEdgeScan(st, 0)
		if last != 2 {
			t.Fatalf("folded up to step %d, want 2", last)
		}
		q, args := sc.query("user_agent", "x")
		return "SELECT user_agent, count(*) FROM (" + q + ") GROUP BY 1", args
	}
	visitors := func() (string, []any) {
		st := []step{{kind: stepOutE, labels: []string{"short_url_visited"}},
			{kind: stepHas, key: "effective_at", pred: &predicate{op: "gte", value: "2026-11-01"}},
			{kind: stepHas, key: "effective_at", pred: &predicate{op: "lt", value: "2026-11-02"}}}
		sc, _ := foldEdgeScan(st, 0)
		return distinctColumnQuery(&sc, "visitor_ip_address", "x")
	}
	tests := []struct {
		name  string
		query func() (string, []any)
		want  string
		sorts bool // sorting the (few) matches by id is expected
		scans bool // reading the table is expected: a lookup the service never makes
	}{
		{"token lookup", func() (string, []any) { return startPlan(lookupQuery) },
			"SEARCH vertices USING INDEX vertices_by_token (token=? AND label=?)", false, false},
		{"token count", func() (string, []any) { return startPlan(countQuery) },
			"SEARCH vertices USING INDEX vertices_by_token (token=? AND label=?)", false, false},
		{"has without hasLabel", func() (string, []any) { return startPlan("g.V().has('short_url_token', token)") },
			"SEARCH vertices USING INDEX vertices_by_token (token=?)", true, false},
		{"token after another has", func() (string, []any) {
			return startPlan("g.V().has('target_url', 'https://example.com/').has('short_url_token', token)")
		}, "SEARCH vertices USING INDEX vertices_by_token (token=?)", true, false},
		{"has on another key", func() (string, []any) { return startPlan("g.V().has('target_url', 'https://example.com/')") },
			"SCAN vertices", false, true},
		{"token of another type", func() (string, []any) { return startPlan("g.V().has('short_url_token', 5)") },
			"SCAN vertices", false, true},
		{"hasLabel", func() (string, []any) { return startPlan("g.V().hasLabel('short_url')") },
			"SCAN vertices", false, true},
		{"listing, page 1", func() (string, []any) { return startPlan(listPage1) },
			"SCAN vertices USING INDEX vertices_by_created", false, true},
		{"listing, a later page", func() (string, []any) { return startPlan(listLater) },
			"SEARCH vertices USING INDEX vertices_by_created (created_at<?)", false, false},
		{"outE count", func() (string, []any) { return countEdges(stepOutE, "short_url_visited") },
			"SEARCH edges USING COVERING INDEX edges_out (out_v=? AND label=?)", false, false},
		{"inE count, edges between vertices", func() (string, []any) { return countEdges(stepInE, "short_url_visited") },
			"SEARCH edges USING INDEX edges_in (in_v=? AND label=?)", false, false},
		{"inE count, self-loops", func() (string, []any) { return countEdges(stepInE, "short_url_visited") },
			"SEARCH edges USING INDEX edges_out (out_v=? AND label=?)", false, false},
		{"clicks of a day by user agent", window,
			"SEARCH edges USING COVERING INDEX edges_out (out_v=? AND label=? AND effective_at>? AND effective_at<?)", true, false},
		{"distinct visitors of a day", visitors, // the temp b-tree is count(DISTINCT)'s set
			"SEARCH edges USING COVERING INDEX edges_out (out_v=? AND label=? AND effective_at>? AND effective_at<?)", true, false},
		{"outE", func() (string, []any) {
			q, args := scan(stepOutE, "short_url_visited").query(edgeColumns, "x")
			return q + " ORDER BY id", args
		}, "SEARCH edges USING INDEX edges_out (out_v=? AND label=?)", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, args := tt.query()
			plan := queryPlan(t, e.store, q, args...)
			if !strings.Contains(plan, tt.want) {
				t.Errorf("plan for %s:\n%s\nwant a line %q", q, plan, tt.want)
			}
			// inE's two branches are read as a co-routine: SCAN (subquery-N) reads
			// its rows, not a table.
			scans := strings.Contains(strings.ReplaceAll(plan, "SCAN (subquery", ""), "SCAN")
			if scans != tt.scans || (!tt.sorts && strings.Contains(plan, "TEMP B-TREE")) {
				t.Errorf("plan for %s: scans %v (want %v), or sorts:\n%s", q, scans, tt.scans, plan)
			}
		})
	}
}

func TestConnectionSettings(t *testing.T) {
	// A path that needs escaping in a file: URI.
	dir := t.TempDir() + "/a dir?with#odd%chars"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := dir + "/persist.db"
	e := openEnv(t, path, Options{})
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at %s: %v", path, err)
	}
	tests := []struct {
		db     *sql.DB
		pragma string
		want   string
	}{
		{e.store.wdb, "journal_mode", "wal"},
		{e.store.wdb, "synchronous", "2"}, // FULL
		{e.store.wdb, "busy_timeout", "5000"},
		{e.store.wdb, "foreign_keys", "1"},
		{e.store.wdb, "user_version", strconv.Itoa(schemaVersion)},
		{e.store.rdb, "journal_mode", "wal"},
		{e.store.rdb, "query_only", "1"},
		{e.store.rdb, "busy_timeout", "5000"},
		{e.store.rdb, "mmap_size", strconv.Itoa(readerMmapBytes)},
		{e.store.wdb, "mmap_size", "0"},
	}
	for _, tt := range tests {
		var got string
		if err := tt.db.QueryRowContext(context.Background(), "PRAGMA "+tt.pragma).Scan(&got); err != nil {
			t.Fatalf("%s: %v", tt.pragma, err)
		}
		if got != tt.want {
			t.Errorf("PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
		}
	}
	// Opening the same file again (another process would) works alongside.
	other, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDatabaseIsTheOwnersAlone: the graph holds every visitor's address, so a new
// database file and its WAL are 0600 whatever the directory's mode.
func TestDatabaseIsTheOwnersAlone(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "persist.db")
	st, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
}
