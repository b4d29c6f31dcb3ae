package persist

import (
	"context"
	"fmt"
	"strings"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// batchLookupQuery checks a whole batch of tokens at once; %s is the within(…)
// argument: the binding "tokens" (a list) or, in Neptune mode, quoted literals.
const batchLookupQuery = "g.V().hasLabel('short_url').has('short_url_token', within(%s))" +
	".project('short_url_token','short_url_path','target_url')" +
	".by('short_url_token').by('short_url_path').by('target_url')"

var _ shorturl.BatchStore = (*Client)(nil)

// batchTimeoutFactor stretches the per-call timeout for the calls of a batch: one
// query or ingest carries up to 1,000 short URLs (about 0.3 s locally, against a
// few milliseconds for one).
const batchTimeoutFactor = 5

// LookupMany returns every short_url vertex whose token is one of toks, in one
// Gremlin query. Tokens pass the whitelist before they reach the query, as a list
// binding or (InlineLiterals) as quoted literals.
func (c *Client) LookupMany(ctx context.Context, toks []shorturl.Token) ([]shorturl.ShortURL, error) {
	if len(toks) == 0 {
		return nil, nil
	}
	for _, t := range toks {
		if !shorturl.IsToken(string(t)) {
			return nil, shorturl.ErrInvalidToken
		}
	}
	body := make([]byte, 0, 256+len(toks)*13)
	if c.inline {
		lits := make([]string, len(toks))
		for i, t := range toks {
			lits[i] = "'" + string(t) + "'"
		}
		body = append(body, `{"gremlin":`...)
		body, _ = appendJSONString(body, fmt.Sprintf(batchLookupQuery, strings.Join(lits, ",")))
	} else {
		body = append(body, `{"gremlin":`...)
		body, _ = appendJSONString(body, fmt.Sprintf(batchLookupQuery, "tokens"))
		body = append(body, `,"bindings":{"tokens":[`...)
		for i, t := range toks {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, '"')
			body = append(body, t...) // a checked token: base62 only
			body = append(body, '"')
		}
		body = append(body, "]}"...)
	}
	body = append(body, '}')
	resp, err := c.postWithin(ctx, batchTimeoutFactor*c.timeout, lookupManyLimit(len(toks)), "lookup-many", c.gremlinURL, body, gremlinAccept)
	if err != nil {
		return nil, err
	}
	data, err := decodeGremlin("lookup-many", resp)
	if err != nil {
		return nil, err
	}
	rows, err := rowsOf("lookup-many", data)
	if err != nil {
		return nil, err
	}
	asked := make(map[shorturl.Token]bool, len(toks))
	for _, t := range toks {
		asked[t] = true
	}
	out := make([]shorturl.ShortURL, 0, len(rows))
	for _, m := range rows {
		tok, _ := m["short_url_token"].(string)
		if !asked[shorturl.Token(tok)] {
			return nil, &Error{Op: "lookup-many", Kind: KindMalformed, Err: fmt.Errorf("persist answered token %q, which was not asked for", tok)}
		}
		u := shorturl.ShortURL{Token: shorturl.Token(tok)}
		u.Path, _ = m["short_url_path"].(string)
		u.Target, _ = m["target_url"].(string)
		if u.Target == "" {
			// Taken for a short URL with another target, it would answer a producer's
			// idempotent retry 422, blaming the producer for Persist's answer.
			return nil, &Error{Op: "lookup-many", Kind: KindMalformed, Err: fmt.Errorf("persist answered token %q without a target", tok)}
		}
		out = append(out, u)
	}
	return out, nil
}

// lookupManyLimit bounds the answer to a lookup of n tokens by what n rows can take:
// a target of MaxTargetLength code points, each escaped as up to 12 bytes (a
// surrogate pair's two \uXXXX), and a KiB for its token, path and GraphSON. A fixed
// 4 MiB, the request's own bound, refused the answer to an idempotent retry of a full
// batch of long non-ASCII targets on every attempt.
func lookupManyLimit(n int) int {
	return max(maxResponse, n*(12*shorturl.MaxTargetLength+1<<10))
}

// SaveMany ingests the short URLs' vertices as one GraphSON document, in one call.
func (c *Client) SaveMany(ctx context.Context, us []shorturl.ShortURL) error {
	doc := graphson.Document{Vertices: make([]graphson.Vertex, 0, len(us))}
	for _, u := range us {
		v, err := u.Vertex()
		if err != nil {
			return fmt.Errorf("build short_url vertex %s: %w", u.Token, err)
		}
		doc.Vertices = append(doc.Vertices, v)
	}
	body, err := doc.AppendJSON(make([]byte, 0, 512*len(us)))
	if err != nil {
		return fmt.Errorf("encode graphson: %w", err)
	}
	ack, err := c.postWithin(ctx, batchTimeoutFactor*c.timeout, responseLimit("ingest"), "ingest", c.ingestURL, body, "application/json")
	if err != nil {
		return err
	}
	return checkAck(ack)
}
