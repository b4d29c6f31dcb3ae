package localpersist

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The listing's traversals as internal/persist writes them (listQuery): the first
// page, and a page after a cursor.
const (
	listOrder = ".order().by('created_at', desc).by('short_url_token', desc).limit(26)" +
		".project('short_url_token','short_url_path','target_url','created_at')" +
		".by('short_url_token').by('short_url_path').by('target_url').by('created_at')"
	listPage1 = "g.V().hasLabel('short_url')" + listOrder
	listLater = "g.V().hasLabel('short_url').has('created_at', lte(at))" +
		".or(__.has('created_at', lt(at)), __.has('short_url_token', lt(after)))" + listOrder
)

// bulkShortURLs writes n short_url vertices straight into the database, a thousand
// per created_at millisecond as a bulk import stores them, far faster than ingest
// (the listing reads rows; it does not check identities). Token i is "Bk" and i in
// eight digits; created_at grows with i.
func bulkShortURLs(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := context.Background()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	st, err := tx.PrepareContext(ctx, `INSERT INTO vertices (id, label, created_at, properties, token) VALUES (?, 'short_url', ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		tok := fmt.Sprintf("Bk%08d", i)
		props := `{"short_url_path":"https://s.example/` + tok + `","short_url_token":"` + tok + `","target_url":"https://example.com/p/` + tok + `"}`
		at := start.Add(time.Duration(i/1000) * time.Millisecond).Format(createdAtLayout)
		if _, err := st.ExecContext(ctx, fmt.Sprintf("%064d", i), at, props, tok); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func tokensOf(tb testing.TB, rows []any) []string {
	tb.Helper()
	var out []string
	for _, r := range rows {
		m, ok := r.(map[string]any)
		if !ok {
			tb.Fatalf("row %T, want a map", r)
		}
		out = append(out, m["short_url_token"].(string))
	}
	return out
}

// TestListingOrderAndCursor checks the folded SQL against the same traversal
// evaluated in Go (an unfoldable has() first makes apply do every step).
func TestListingOrderAndCursor(t *testing.T) {
	e := newEnv(t, Options{})
	bulkShortURLs(t, e.store, 3500)
	page1 := tokensOf(t, e.query(t, listPage1, nil))
	if len(page1) != 26 || page1[0] != "Bk00003499" || page1[25] != "Bk00003474" {
		t.Fatalf("page 1: %v", page1)
	}
	// Bk00002999 and Bk00003000 lie on either side of a created_at millisecond.
	at := time.Date(2026, 1, 1, 0, 0, 0, 2_000_000, time.UTC).Format(createdAtLayout)
	later := tokensOf(t, e.query(t, listLater, map[string]any{"at": at, "after": "Bk00002010"}))
	if len(later) != 26 || later[0] != "Bk00002009" || later[25] != "Bk00001984" {
		t.Errorf("after Bk00002010: %v", later)
	}
	inGo := strings.Replace(listLater, "hasLabel('short_url')", "hasLabel('short_url').has('short_url_path', neq('x'))", 1)
	if got := tokensOf(t, e.query(t, inGo, map[string]any{"at": at, "after": "Bk00002010"})); strings.Join(got, ",") != strings.Join(later, ",") {
		t.Errorf("evaluated in Go: %v, in SQL: %v", got, later)
	}
	search := "g.V().hasLabel('short_url').or(__.has('short_url_token', q), __.has('target_url', regex(p)))" + listOrder
	got := tokensOf(t, e.query(t, search, map[string]any{"q": "Bk00000007", "p": "(?i)P/BK0000001[23]$"}))
	if strings.Join(got, ",") != "Bk00000013,Bk00000012,Bk00000007" {
		t.Errorf("search: %v", got)
	}
}

// BenchmarkListing1M lists pages of a million short URLs: the first page, and one
// deep in the listing (after the 900,000th newest), through local Persist's HTTP API.
func BenchmarkListing1M(b *testing.B) {
	e := newEnv(b, Options{})
	bulkShortURLs(b, e.store, 1_000_000)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(99 * time.Millisecond).Format(createdAtLayout)
	for _, bc := range []struct {
		name, script string
		bindings     map[string]any
		first        string
	}{
		{"page1", listPage1, nil, "Bk00999999"},
		{"later", listLater, map[string]any{"at": at, "after": "Bk00099500"}, "Bk00099499"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				got := tokensOf(b, e.query(b, bc.script, bc.bindings))
				if len(got) != 26 || got[0] != bc.first {
					b.Fatalf("page starts %v", got[:min(3, len(got))])
				}
			}
		})
	}
}
