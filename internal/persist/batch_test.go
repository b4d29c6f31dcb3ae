package persist_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/persist"
)

// TestBatchAgainstLocalPersist: one ingest for many short URLs, one query for many
// tokens, with bindings and in Neptune mode. (1,000 targets of 2,048 characters go
// through the whole stack in mgmtapi's TestBatchOfThousandLongTargets; here, under
// -race on a shared machine, they can outlast the client's timeout.)
func TestBatchAgainstLocalPersist(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%t", inline), func(t *testing.T) {
			c := newClient(t, startLocalPersist(t), inline)
			ctx := context.Background()
			long := "https://example.com/" + strings.Repeat("a", 300)
			us := make([]shorturl.ShortURL, 1000)
			toks := make([]shorturl.Token, 0, 1001)
			for i := range us {
				tok := shorturl.Token(fmt.Sprintf("B%09d", i))
				us[i] = shorturl.ShortURL{Token: tok, Path: "https://s.example.com/" + string(tok), Target: long}
				toks = append(toks, tok)
			}
			if err := c.SaveMany(ctx, us); err != nil {
				t.Fatal(err)
			}
			got, err := c.LookupMany(ctx, append(toks, "unknown000"))
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b shorturl.ShortURL) int { return strings.Compare(string(a.Token), string(b.Token)) })
			if !slices.Equal(got, us) {
				t.Fatalf("LookupMany returned %d short urls, want the %d saved", len(got), len(us))
			}
			if u, err := c.Lookup(ctx, us[999].Token); err != nil || u != us[999] {
				t.Fatalf("Lookup after SaveMany: %+v %v", u, err)
			}
		})
	}
}

func TestLookupManyCarriesTokensOnlyAsBindings(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[]}}}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, false)
	if _, err := c.LookupMany(context.Background(), []shorturl.Token{"7BTadEDkJ8", "quiet00000"}); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Gremlin  string              `json:"gremlin"`
		Bindings map[string][]string `json:"bindings"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(req.Gremlin, "7BTadEDkJ8") || !slices.Equal(req.Bindings["tokens"], []string{"7BTadEDkJ8", "quiet00000"}) {
		t.Errorf("request %s", body)
	}
	for _, inline := range []bool{false, true} {
		if _, err := newClient(t, srv.URL, inline).LookupMany(context.Background(), []shorturl.Token{"7BTadEDkJ8", "7BTadEDk'8"}); !errors.Is(err, shorturl.ErrInvalidToken) {
			t.Errorf("inline=%t: a token outside the whitelist was sent: %v", inline, err)
		}
	}
}

func TestBatchUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }))
	defer srv.Close()
	c := newClient(t, srv.URL, false)
	if _, err := c.LookupMany(context.Background(), []shorturl.Token{"7BTadEDkJ8"}); !errors.Is(err, shorturl.ErrUnavailable) {
		t.Errorf("LookupMany: %v", err)
	}
	if err := c.SaveMany(context.Background(), []shorturl.ShortURL{{Token: "7BTadEDkJ8", Path: "https://s/7BTadEDkJ8", Target: "https://e/"}}); !errors.Is(err, shorturl.ErrUnavailable) {
		t.Errorf("SaveMany: %v", err)
	}
}

// TestLookupManyTakesTheAnswerAFullBatchCanHave: the answer to a lookup of 1,000
// tokens whose targets are long and non-ASCII (escaped by the server, as Gremlin
// Server may) is several times the request's 4 MiB bound; it was refused as
// malformed, so an idempotent retry of such a batch failed with 503 every time.
func TestLookupManyTakesTheAnswerAFullBatchCanHave(t *testing.T) {
	toks := make([]shorturl.Token, 1000)
	for i := range toks {
		toks[i] = shorturl.Token(fmt.Sprintf("B%09d", i))
	}
	target := "https://example.com/" + strings.Repeat(`\u00e9`, shorturl.MaxTargetLength-20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[`)
		for i, tok := range toks {
			if i > 0 {
				_, _ = io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `{"@type":"g:Map","@value":["short_url_token","%s","short_url_path","https://s.example.com/%s","target_url","%s"]}`, tok, tok, target)
		}
		_, _ = io.WriteString(w, `]}}}`)
	}))
	defer srv.Close()
	got, err := newClient(t, srv.URL, false).LookupMany(context.Background(), toks)
	if err != nil || len(got) != len(toks) {
		t.Fatalf("LookupMany: %d short urls, %v", len(got), err)
	}
	if n := len([]rune(got[0].Target)); n != shorturl.MaxTargetLength {
		t.Errorf("target of %d code points, want %d", n, shorturl.MaxTargetLength)
	}
}

// TestRowWithoutTargetIsNotAFreeToken: a Persist that answers a row for the token
// without a string target_url (buggy, or holding something issuance did not write)
// is not saying the token is free, nor that it holds another target: a lookup is
// ErrInvalidStored (the resolver's 404; an idempotent issuance's refusal, which
// wrote before), and a lookup of many a malformed answer (503, not a 422 that blames
// the producer).
func TestRowWithoutTargetIsNotAFreeToken(t *testing.T) {
	const tok = shorturl.Token("7BTadEDkJ8")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		row := `{"@type":"g:Map","@value":["short_url_token","` + string(tok) + `","short_url_path","https://s.example.com/` + string(tok) +
			`","target_url",{"@type":"g:List","@value":["https://other.example/"]}]}`
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[`+row+`]}}}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, false)
	if _, err := c.Lookup(context.Background(), tok); !errors.Is(err, shorturl.ErrInvalidStored) || !errors.Is(err, shorturl.ErrNotFound) {
		t.Errorf("Lookup: %v, want ErrNotFound and ErrInvalidStored", err)
	}
	var perr *persist.Error
	if _, err := c.LookupMany(context.Background(), []shorturl.Token{tok}); !errors.As(err, &perr) || perr.Kind != persist.KindMalformed {
		t.Errorf("LookupMany: %v, want a malformed answer", err)
	}
}

// TestRedirectIsNoAcknowledgement: an ingest answered with a redirect fails. Followed,
// the POST would become a GET, and that GET's 200 with any JSON would pass for the
// ingest's acknowledgement, with nothing written.
func TestRedirectIsNoAcknowledgement(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, false)
	u := shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://example.com/"}
	if err := c.Save(context.Background(), u); err == nil {
		t.Error("Save answered by a redirect succeeded")
	}
	if err := c.SaveMany(context.Background(), []shorturl.ShortURL{u}); err == nil {
		t.Error("SaveMany answered by a redirect succeeded")
	}
}
