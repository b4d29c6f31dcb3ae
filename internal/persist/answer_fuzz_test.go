package persist_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/persist"
)

// answering is a transport whose every call gets answer, as a 200: Persist (or a
// proxy before it) answering anything at all.
type answering []byte

func (a answering) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(a)), Request: r}, nil
}

// FuzzGremlinAnswer gives each read of the Persist client (Lookup, Link, LookupMany,
// Visits) any bytes as Persist's answer. Each either returns what it promises (the
// token asked for, a target, a window's days of counts that are counts) or fails
// with an error the APIs answer as 404 (shorturl.ErrNotFound) or 503
// (shorturl.ErrUnavailable): never one they would answer as 500, and never a panic.
func FuzzGremlinAnswer(f *testing.F) {
	row := `{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","short_url_path","/7BTadEDkJ8","target_url","https://example.com/a","created_at",%s]}`
	for _, seed := range []string{
		`{"status":{"code":200},"result":{"data":{"@type":"g:List","@value":[` + fmtRow(row, `"2026-12-02T00:00:00Z"`) + `]}}}`,
		`{"status":{"code":200},"result":{"data":{"@type":"g:List","@value":[` + fmtRow(row, `{"@type":"g:Date","@value":1764633600000}`) + `,` + fmtRow(row, `null`) + `]}}}`,
		`{"status":{"code":204},"result":{"data":null}}`,
		`{"status":{"code":500,"message":"boom"}}`,
		`{"status":{"code":200},"result":{"data":{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks",{"@type":"g:Int64","@value":3},` +
			`"d0",{"@type":"g:Map","@value":["Mozilla/5.0",{"@type":"g:Int64","@value":2},"Slackbot",{"@type":"g:Int64","@value":1}]},"d2",{"@type":"g:Map","@value":[]}]}]}}}`,
		`{"status":{"code":200},"result":{"data":{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks",{"@type":"g:Int64","@value":-1}]}]}}}`,
		`{"status":{"code":200},"result":{"data":{"@type":"g:List","@value":[{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks",{"@type":"g:Int64","@value":1},` +
			`"d1",{"@type":"g:Map","@value":["a",{"@type":"g:Int64","@value":9223372036854775807},"b",{"@type":"g:Int64","@value":1}]}]}]}}}`,
		`{"status":{"code":200},"result":{"data":[1,"x",{"a":[]}]}}`,
		`not json`,
	} {
		f.Add([]byte(seed))
	}
	tok, other := shorturl.Token("7BTadEDkJ8"), shorturl.Token("Other00000")
	w, err := shorturl.ParseWindow("2026-11-30", "2026-12-02", time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		c, err := persist.New(persist.Config{BaseURL: "http://persist.invalid", HTTPClient: &http.Client{Transport: answering(answer)}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		refusal := func(op string, err error) {
			if !errors.Is(err, shorturl.ErrNotFound) && !errors.Is(err, shorturl.ErrUnavailable) {
				t.Fatalf("%s of %q: %v, which is neither not found nor unavailable", op, answer, err)
			}
		}
		u, err := c.Lookup(ctx, tok)
		if err != nil {
			refusal("lookup", err)
		} else if u.Token != tok || u.Target == "" {
			t.Fatalf("lookup of %q: %+v", answer, u)
		}
		l, lerr := c.Link(ctx, tok)
		switch {
		case lerr != nil:
			refusal("link", lerr)
		case err != nil || l.ShortURL != u:
			t.Fatalf("link of %q: %+v (%v), where lookup read %+v (%v)", answer, l, lerr, u, err)
		case l.CreatedAt.Location() != time.UTC:
			t.Fatalf("link of %q: created_at %v is not UTC", answer, l.CreatedAt)
		}
		us, err := c.LookupMany(ctx, []shorturl.Token{tok, other})
		if err != nil {
			refusal("lookup-many", err)
		}
		for _, u := range us {
			if u.Token != tok && u.Token != other || u.Target == "" {
				t.Fatalf("lookup-many of %q: %+v", answer, u)
			}
		}
		v, err := c.Visits(ctx, tok, w)
		if err != nil {
			refusal("visits", err)
			return
		}
		if v.Total < 0 || len(v.PerDay) != w.Days() {
			t.Fatalf("visits of %q: total %d, %d days for a window of %d", answer, v.Total, len(v.PerDay), w.Days())
		}
		for _, d := range v.ByDay(w, func(ua string) bool { return ua == "Slackbot" }) {
			if d.Clicks < 0 || d.Previews < 0 || d.Previews > d.Clicks {
				t.Fatalf("visits of %q: day %+v", answer, d)
			}
		}
	})
}

func fmtRow(row, createdAt string) string {
	return string(bytes.Replace([]byte(row), []byte("%s"), []byte(createdAt), 1))
}
