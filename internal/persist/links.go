package persist

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
)

const (
	// linkQuery is lookupQuery with Persist's server-managed created_at: inspecting a
	// link is not the resolver's hot path, which keeps its three properties.
	linkQuery = "g.V().hasLabel('short_url').has('short_url_token', %s).limit(2)" +
		".project('short_url_token','short_url_path','target_url','created_at')" +
		".by('short_url_token').by('short_url_path').by('target_url').by('created_at')"
	// maxVisitsResponse bounds the answer of visitsQuery: a count per day and user
	// agent, so it grows with the distinct user agents of each day, not the clicks.
	maxVisitsResponse = 64 << 20
	// maxGremlinRequest is the largest request body a Gremlin server takes (Gremlin
	// Server's default maxContentLength).
	maxGremlinRequest = 64 << 10
)

// visitsQuery counts all of a short URL's clicks and, for each day of a window, its
// clicks by user agent: one groupCount per day, so the answer is small however many
// clicks there are. tok is the token's binding name (or literal) and bounds the
// window's day bounds' (see shorturl.Window.Bounds); day i is projected as "d<i>".
// effective_at is written 2006-01-02T15:04:05.000Z, so comparing it as a string with
// YYYY-MM-DD bounds selects whole UTC days. The day is a project key rather than a
// computed group key: grouping by a computed value is not portable across Gremlin
// servers, while project, has(gte/lt) and groupCount().by(key) are plain TinkerPop.
func visitsQuery(tok string, bounds []string) string {
	return windowScript(tok, bounds, true, false)
}

// uniquesQuery counts the distinct visitor addresses of a short URL's clicks in the
// window ("w") and on each of its days ("u<i>"); only the counts leave Persist.
func uniquesQuery(tok string, bounds []string) string {
	return windowScript(tok, bounds, false, true)
}

// statsQuery is visitsQuery and uniquesQuery in one project(), so that Persist may
// read the window's clicks once for both (local Persist does). With a long window
// its script passes the 64 KiB a Gremlin server takes (maxGremlinRequest), and the two are
// sent apart.
func statsQuery(tok string, bounds []string) string {
	return windowScript(tok, bounds, true, true)
}

// windowScript projects a short URL's token and, with visits, the keys of
// visitsQuery and, with uniques, those of uniquesQuery.
func windowScript(tok string, bounds []string, visits, uniques bool) string {
	days := len(bounds) - 1
	var b strings.Builder
	b.WriteString("g.V().hasLabel('short_url').has('short_url_token', " + tok + ").limit(2)")
	b.WriteString(".project('short_url_token'")
	if visits {
		b.WriteString(",'clicks'")
		for i := range days {
			fmt.Fprintf(&b, ",'d%d'", i)
		}
	}
	if uniques {
		b.WriteString(",'w'")
		for i := range days {
			fmt.Fprintf(&b, ",'u%d'", i)
		}
	}
	b.WriteString(").by('short_url_token')")
	if visits {
		b.WriteString(".by(__.outE('short_url_visited').count())")
		for i := range days {
			fmt.Fprintf(&b, ".by(__.outE('short_url_visited').has('effective_at', gte(%s)).has('effective_at', lt(%s)).groupCount().by('user_agent'))", bounds[i], bounds[i+1])
		}
	}
	if uniques {
		b.WriteString(distinctVisitors(bounds[0], bounds[days]))
		for i := range days {
			b.WriteString(distinctVisitors(bounds[i], bounds[i+1]))
		}
	}
	return b.String()
}

// distinctVisitors is the by() of a project key counting the distinct visitor
// addresses of the clicks from bound from to bound to: the count leaves Persist, the
// addresses do not.
func distinctVisitors(from, to string) string {
	return ".by(__.outE('short_url_visited').has('effective_at', gte(" + from + ")).has('effective_at', lt(" + to + ")).values('visitor_ip_address').dedup().count())"
}

// timeoutFor is the time operation op may take: reading a busy link's click window
// takes Persist longer than a lookup, so visits get five times the per-call timeout.
func timeoutFor(op string, d time.Duration) time.Duration {
	if op == "visits" {
		return 5 * d
	}
	return d
}

// responseLimit is the largest response body operation op accepts.
func responseLimit(op string) int {
	if op == "visits" {
		return maxVisitsResponse
	}
	return maxResponse
}

// day is the whitelist a window bound passes before it may be inlined as a literal.
var day = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// Link reads a token's short URL with Persist's server-managed created_at (zero when
// Persist answers none). It records no click.
func (c *Client) Link(ctx context.Context, tok shorturl.Token) (shorturl.Link, error) {
	rows, err := c.tokenQuery(ctx, "link", linkQuery, tok)
	if err != nil {
		return shorturl.Link{}, err
	}
	us, err := shortURLsOf(tok, rows)
	if err != nil {
		return shorturl.Link{}, err
	}
	var l shorturl.Link
	for i, row := range rows {
		v := shorturl.Link{ShortURL: us[i]}
		if v.CreatedAt, err = createdAt(row["created_at"]); err != nil {
			return shorturl.Link{}, &Error{Op: "link", Kind: KindMalformed, Err: fmt.Errorf("token %s: %w", tok, err)}
		}
		if i == 0 || (!v.CreatedAt.IsZero() && v.CreatedAt.Before(l.CreatedAt)) {
			l = v // the same short URL stored twice: the earlier creation
		}
	}
	return l, nil
}

// createdAt reads Persist's created_at: absent, an RFC 3339 string or a g:Date.
func createdAt(v any) (time.Time, error) {
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("created_at %q is not an RFC 3339 time", v)
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("created_at is %T, want a string or a g:Date", v)
}

// Visits counts all of a token's clicks and reads the times of those in w, grouped by
// user agent.
func (c *Client) Visits(ctx context.Context, tok shorturl.Token, w shorturl.Window) (shorturl.Visits, error) {
	if !shorturl.IsToken(string(tok)) {
		return shorturl.Visits{}, shorturl.ErrInvalidToken
	}
	bounds := w.Bounds()
	for _, d := range bounds {
		if !day.MatchString(d) { // the whitelist that makes inlining safe
			return shorturl.Visits{}, &shorturl.WindowError{Rule: shorturl.WindowDate, Detail: "the window's dates are not YYYY-MM-DD"}
		}
	}
	row, uniques, err := c.windowRows(ctx, tok, bounds)
	if err != nil {
		return shorturl.Visits{}, err
	}
	v, err := visitsOf(tok, row, uniques, len(bounds)-1)
	if err != nil {
		return shorturl.Visits{}, &Error{Op: "visits", Kind: KindMalformed, Err: err}
	}
	return v, nil
}

// windowRows reads the rows of visitsQuery and uniquesQuery: one row of statsQuery,
// which answers both, where its request fits in maxGremlinRequest, two otherwise.
func (c *Client) windowRows(ctx context.Context, tok shorturl.Token, bounds []string) (visits, uniques map[string]any, err error) {
	body, err := c.windowBody(statsQuery, tok, bounds)
	if err != nil {
		return nil, nil, err
	}
	if len(body) <= maxGremlinRequest {
		row, err := c.windowQuery(ctx, body, tok)
		return row, row, err
	}
	// Uniques first: clicks are only ever added, so each day's distinct visitors,
	// read before its clicks, never exceed them.
	if body, err = c.windowBody(uniquesQuery, tok, bounds); err != nil {
		return nil, nil, err
	}
	if uniques, err = c.windowQuery(ctx, body, tok); err != nil {
		return nil, nil, err
	}
	if body, err = c.windowBody(visitsQuery, tok, bounds); err != nil {
		return nil, nil, err
	}
	visits, err = c.windowQuery(ctx, body, tok)
	return visits, uniques, err
}

// windowBody is the request of query over tok and a window's bounds, bound or
// inlined.
func (c *Client) windowBody(query func(tok string, bounds []string) string, tok shorturl.Token, bounds []string) ([]byte, error) {
	if c.inline {
		quoted := make([]string, len(bounds))
		for i, d := range bounds {
			quoted[i] = quote(d)
		}
		return gremlinBody(query(quote(string(tok)), quoted), ""), nil
	}
	names := make([]string, len(bounds))
	bindings := make(map[string]string, len(bounds)+1)
	bindings["token"] = string(tok)
	for i, d := range bounds {
		names[i] = fmt.Sprintf("b%d", i)
		bindings[names[i]] = d
	}
	b, err := json.Marshal(struct {
		Gremlin  string            `json:"gremlin"`
		Bindings map[string]string `json:"bindings"`
	}{query("token", names), bindings})
	if err != nil {
		return nil, &Error{Op: "visits", Err: err}
	}
	return b, nil
}

// windowQuery sends a window's request body and returns the one short URL's row.
func (c *Client) windowQuery(ctx context.Context, body []byte, tok shorturl.Token) (map[string]any, error) {
	data, err := c.gremlin(ctx, "visits", body)
	if err != nil {
		return nil, err
	}
	rows, err := rowsOf("visits", data)
	switch {
	case err != nil:
		return nil, fmt.Errorf("token %s: %w", tok, err)
	case len(rows) == 0:
		return nil, shorturl.ErrNotFound
	case len(rows) > 1:
		return nil, fmt.Errorf("token %s: persist holds several short_url vertices: %w: %w", tok, shorturl.ErrNotFound, shorturl.ErrInvalidStored)
	}
	if got, _ := rows[0]["short_url_token"].(string); got != string(tok) {
		return nil, &Error{Op: "visits", Kind: KindMalformed, Err: fmt.Errorf("token %s: persist answered another vertex (%q)", tok, got)}
	}
	return rows[0], nil
}

// visitsOf reads visitsQuery's row m and uniquesQuery's row uniques (or statsQuery's
// row as both): the token, an all-time count and, per day, a g:Map from user agent
// to a count. A day's missing key is a day without clicks.
func visitsOf(tok shorturl.Token, m, uniques map[string]any, days int) (shorturl.Visits, error) {
	if got, _ := m["short_url_token"].(string); got != string(tok) {
		return shorturl.Visits{}, fmt.Errorf("token %s: persist answered another vertex (%q)", tok, got)
	}
	n, ok := m["clicks"].(int64)
	if !ok || n < 0 {
		return shorturl.Visits{}, fmt.Errorf("token %s: clicks is %v, want a count", tok, m["clicks"])
	}
	v := shorturl.Visits{Total: n, PerDay: make([]map[string]int64, days)}
	if err := uniquesOf(uniques, &v, days); err != nil {
		return shorturl.Visits{}, fmt.Errorf("token %s: %w", tok, err)
	}
	for i := range v.PerDay {
		key := fmt.Sprintf("d%d", i)
		groups, ok := m[key].(map[string]any)
		if !ok && m[key] != nil {
			return shorturl.Visits{}, fmt.Errorf("token %s: %s is %T, want g:Map", tok, key, m[key])
		}
		v.PerDay[i] = make(map[string]int64, len(groups))
		var day int64 // the day's clicks, which stats answers as one int64
		for ua, c := range groups {
			n, ok := c.(int64)
			if !ok || n < 0 {
				return shorturl.Visits{}, fmt.Errorf("token %s: %s: clicks of a user agent are %v, want a count", tok, key, c)
			}
			if n > math.MaxInt64-day {
				return shorturl.Visits{}, fmt.Errorf("token %s: %s: the clicks of its user agents add up past any count", tok, key)
			}
			day += n
			v.PerDay[i][ua] = n
		}
	}
	return v, nil
}

// uniquesOf reads uniquesQuery's row m into v: the window's ("w") and each day's
// ("u<i>") distinct visitor counts.
func uniquesOf(m map[string]any, v *shorturl.Visits, days int) error {
	count := func(key string) (int64, error) {
		n, ok := m[key].(int64)
		if !ok || n < 0 {
			return 0, fmt.Errorf("uniques: %s is %v, want a count", key, m[key])
		}
		return n, nil
	}
	var err error
	if v.Unique, err = count("w"); err != nil {
		return err
	}
	v.UniquePerDay = make([]int64, days)
	for i := range v.UniquePerDay {
		if v.UniquePerDay[i], err = count(fmt.Sprintf("u%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// quote writes a whitelisted value (a token, a YYYY-MM-DD day) as a Groovy literal.
func quote(s string) string { return "'" + s + "'" }
