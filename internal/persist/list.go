package persist

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// listProjection reads what a listing shows of each short URL.
const listProjection = ".project('short_url_token','short_url_path','target_url','created_at')" +
	".by('short_url_token').by('short_url_path').by('target_url').by('created_at')"

// listQuery is the listing traversal: short URLs newest first (created_at, then the
// token, both descending, so that short URLs stored in one ingest keep an order),
// after the cursor (at, tok) when after is set, matching the search when search is
// set (exact token q, or target_url matching the regex pattern; byToken only the
// token), limit(n). Every step is plain TinkerPop: has() with P and TextP.regex
// (3.6+), or() of anonymous has() traversals, order().by(key, desc), limit, project.
// The cursor is written created_at <= at AND (created_at < at OR token < tok) so that
// a store answers it with one range over a (created_at, token) index.
// val writes a value: its binding's name, or a whitelisted literal.
func listQuery(after, search, byToken bool, n int, val func(name string) string) string {
	var b strings.Builder
	b.WriteString("g.V().hasLabel('short_url')")
	if after {
		fmt.Fprintf(&b, ".has('created_at', lte(%s)).or(__.has('created_at', lt(%[1]s)), __.has('short_url_token', lt(%s)))", val("at"), val("after"))
	}
	switch {
	case search && byToken:
		fmt.Fprintf(&b, ".has('short_url_token', %s)", val("q"))
	case search:
		fmt.Fprintf(&b, ".or(__.has('short_url_token', %s), __.has('target_url', regex(%s)))", val("q"), val("pattern"))
	}
	b.WriteString(".order().by('created_at', desc).by('short_url_token', desc).limit(" + strconv.Itoa(n) + ")")
	b.WriteString(listProjection)
	return b.String()
}

// searchPattern is the regex of a case-insensitive substring search for q. Go's
// QuoteMeta escapes only punctuation with a backslash, which Java's regex (the
// Gremlin Server's TextP.regex) reads as that literal character too.
func searchPattern(q string) string { return "(?i)" + regexp.QuoteMeta(q) }

// Links answers one page of short URLs, newest first. It asks Persist for one more
// than the page holds to know whether a next page exists. With inlined literals
// (a Persist that ignores bindings) a search can only be an exact token: the search
// text never enters a query.
func (c *Client) Links(ctx context.Context, q shorturl.ListQuery) (shorturl.LinkPage, error) {
	if q.Limit < 1 || q.Limit > shorturl.MaxListLimit {
		return shorturl.LinkPage{}, &shorturl.ParamError{Rule: "links-limit-range", Detail: fmt.Sprintf("limit %d is not between 1 and %d", q.Limit, shorturl.MaxListLimit)}
	}
	if q.After != nil && (!shorturl.IsCreatedAt(q.After.CreatedAt) || !shorturl.IsToken(string(q.After.Token))) {
		return shorturl.LinkPage{}, &shorturl.ParamError{Rule: "links-cursor-invalid", Detail: "cursor is malformed"}
	}
	search, byToken := q.Search != "", shorturl.IsToken(q.Search)
	bindings := map[string]string{}
	if c.inline && search && !byToken {
		return shorturl.LinkPage{}, &shorturl.ParamError{Rule: "links-search-unavailable",
			Detail: "this deployment's Persist takes no bindings, so q can only be a token: the search text never enters a query"}
	}
	if q.After != nil {
		bindings["at"], bindings["after"] = q.After.CreatedAt, string(q.After.Token)
	}
	if search {
		bindings["q"] = q.Search
		if !byToken {
			bindings["pattern"] = searchPattern(q.Search)
		}
	}
	var body []byte
	if c.inline { // every value passed a whitelist: a token or a created_at
		query := listQuery(q.After != nil, search, true, q.Limit+1, func(name string) string { return quote(bindings[name]) })
		body = gremlinBody(query, "")
	} else {
		query := listQuery(q.After != nil, search, byToken, q.Limit+1, func(name string) string { return name })
		b, err := json.Marshal(struct {
			Gremlin  string            `json:"gremlin"`
			Bindings map[string]string `json:"bindings"`
		}{query, bindings})
		if err != nil {
			return shorturl.LinkPage{}, &Error{Op: "list", Err: err}
		}
		body = b
	}
	data, err := c.gremlin(ctx, "list", body)
	if err != nil {
		return shorturl.LinkPage{}, err
	}
	rows, err := rowsOf("list", data)
	if err != nil {
		return shorturl.LinkPage{}, err
	}
	return pageOf(rows, q.Limit)
}

// pageOf reads listQuery's rows: at most limit links, and the cursor after the last
// when Persist had one more.
func pageOf(rows []map[string]any, limit int) (shorturl.LinkPage, error) {
	var p shorturl.LinkPage
	for i, row := range rows {
		if i == limit {
			last := p.Links[limit-1]
			p.Next = &shorturl.Cursor{CreatedAt: last.CreatedAt.Format(createdAtWire), Token: last.Token}
			if raw, ok := rows[limit-1]["created_at"].(string); ok {
				p.Next.CreatedAt = raw // compared as Persist wrote it
			}
			break
		}
		tok, _ := row["short_url_token"].(string)
		l := shorturl.Link{ShortURL: shorturl.ShortURL{Token: shorturl.Token(tok)}}
		l.Path, _ = row["short_url_path"].(string)
		l.Target, _ = row["target_url"].(string)
		var err error
		if l.CreatedAt, err = createdAt(row["created_at"]); err != nil || !shorturl.IsToken(tok) || l.Target == "" || l.CreatedAt.IsZero() {
			return shorturl.LinkPage{}, &Error{Op: "list", Kind: KindMalformed, Err: fmt.Errorf("row %d is not a short URL with a token, a target and created_at (%v)", i, err)}
		}
		p.Links = append(p.Links, l)
	}
	return p, nil
}

// createdAtWire is how a cursor writes a created_at Persist answered as a g:Date.
const createdAtWire = "2006-01-02T15:04:05.000Z"
