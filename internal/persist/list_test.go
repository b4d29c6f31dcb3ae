package persist_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
)

// clockedPersist serves local Persist whose created_at comes from the returned
// setter, so that the test decides the listing order.
func clockedPersist(t *testing.T) (base string, set func(time.Time)) {
	t.Helper()
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st, err := localpersist.Open(context.Background(), filepath.Join(t.TempDir(), "persist.db"), localpersist.Options{Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(st.Handler())
	t.Cleanup(func() { srv.Close(); _ = st.Close() })
	return srv.URL, func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
}

// seedLinks stores ten short URLs: seven one second apart, then three in one ingest
// (the same created_at, ordered by token). It returns their tokens newest first.
func seedLinks(t *testing.T, c *persist.Client, set func(time.Time)) []shorturl.Token {
	t.Helper()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var newestFirst []shorturl.Token
	u := func(i int) shorturl.ShortURL {
		tok := shorturl.Token(fmt.Sprintf("Lst%07d", i))
		return shorturl.ShortURL{Token: tok, Path: "https://s.example/" + string(tok), Target: fmt.Sprintf("https://Shop.Example.org/item-%d?a.b=1", i)}
	}
	for i := range 7 {
		set(start.Add(time.Duration(i) * time.Second))
		if err := c.Save(context.Background(), u(i)); err != nil {
			t.Fatal(err)
		}
		newestFirst = append([]shorturl.Token{u(i).Token}, newestFirst...)
	}
	set(start.Add(10 * time.Second))
	var doc graphson.Document
	for i := 7; i < 10; i++ {
		d, err := u(i).Artifact()
		if err != nil {
			t.Fatal(err)
		}
		doc.Vertices = append(doc.Vertices, d.Vertices...)
		newestFirst = append([]shorturl.Token{u(i).Token}, newestFirst...) // token descending
	}
	if err := c.Ingest(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	return newestFirst
}

func listAll(t *testing.T, c *persist.Client, q shorturl.ListQuery) []shorturl.Token {
	t.Helper()
	var got []shorturl.Token
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("the listing does not end")
		}
		p, err := c.Links(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Links) > q.Limit {
			t.Fatalf("a page of %d links, limit %d", len(p.Links), q.Limit)
		}
		for _, l := range p.Links {
			if l.CreatedAt.IsZero() || l.Target == "" || l.Path != "https://s.example/"+string(l.Token) {
				t.Errorf("incomplete link %+v", l)
			}
			got = append(got, l.Token)
		}
		if p.Next == nil {
			return got
		}
		// The cursor travels as text, as a client passes it back.
		next, err := shorturl.ParseCursor(p.Next.Encode())
		if err != nil {
			t.Fatal(err)
		}
		q.After = &next
	}
}

func TestLinksNewestFirstWithCursor(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%t", inline), func(t *testing.T) {
			base, set := clockedPersist(t)
			c := newClient(t, base, inline)
			want := seedLinks(t, c, set)
			for _, limit := range []int{1, 3, 10, 100} {
				if got := listAll(t, c, shorturl.ListQuery{Limit: limit}); !slices.Equal(got, want) {
					t.Errorf("limit %d: got %v, want %v", limit, got, want)
				}
			}
			if got := listAll(t, c, shorturl.ListQuery{Limit: 5, Search: "Lst0000003"}); !slices.Equal(got, []shorturl.Token{"Lst0000003"}) {
				t.Errorf("exact token: got %v", got)
			}
		})
	}
}

func TestLinksSearch(t *testing.T) {
	base, set := clockedPersist(t)
	c := newClient(t, base, false)
	seedLinks(t, c, set)
	for _, tc := range []struct {
		q    string
		want []shorturl.Token
	}{
		{"shop.EXAMPLE.org/ITEM-4?", []shorturl.Token{"Lst0000004"}},
		{"item-", nil}, // all ten, checked by count below
		{"a.b=1", nil},
		{"a+b", []shorturl.Token{}},      // regex metacharacters are literal
		{"item-.", []shorturl.Token{}},   // "." is not any character
		{"(?i)item", []shorturl.Token{}}, // nor is a flag group
		{"Lst0000008", []shorturl.Token{"Lst0000008"}},
	} {
		got := listAll(t, c, shorturl.ListQuery{Limit: 4, Search: tc.q})
		switch {
		case tc.want == nil && len(got) != 10:
			t.Errorf("q %q: %d links, want all 10", tc.q, len(got))
		case tc.want != nil && !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0):
			t.Errorf("q %q: got %v, want %v", tc.q, got, tc.want)
		}
	}
	inline := newClient(t, base, true)
	_, err := inline.Links(context.Background(), shorturl.ListQuery{Limit: 5, Search: "example"})
	var pe *shorturl.ParamError
	if !errors.As(err, &pe) || pe.Rule != "links-search-unavailable" {
		t.Errorf("inline search by target: %v, want links-search-unavailable", err)
	}
}
