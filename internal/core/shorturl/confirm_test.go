package shorturl_test

import (
	"context"
	"errors"
	"testing"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// TestWriteConfirmedAfterALostAnswer: Persist committed a write but its answer was
// lost (it timed out, came as a 5xx after the commit, or the connection dropped).
// The issuer reads the tokens back and answers as for an acknowledged write, so that
// a producer without an Idempotency-Key is not sent to retry into a second short URL.
// A write Persist did not store still fails.
func TestWriteConfirmedAfterALostAnswer(t *testing.T) {
	ctx := context.Background()
	const target = "https://example.com/lost-answer"
	issue := map[string]func(*shorturl.Issuer) ([]shorturl.ShortURL, error){
		"single": func(is *shorturl.Issuer) ([]shorturl.ShortURL, error) {
			u, err := is.Shorten(ctx, target)
			return []shorturl.ShortURL{u}, err
		},
		"idempotent": func(is *shorturl.Issuer) ([]shorturl.ShortURL, error) {
			u, _, err := is.ShortenIdempotent(ctx, target, "", shorturl.Idempotent{Caller: "LNKCALLER", Key: "order-1"})
			return []shorturl.ShortURL{u}, err
		},
		"batch": func(is *shorturl.Issuer) ([]shorturl.ShortURL, error) {
			rs, err := is.ShortenBatch(ctx, []shorturl.BatchItem{{Target: target}, {Target: target + "/2"}}, "", nil)
			var us []shorturl.ShortURL
			for _, r := range rs {
				if r.Err != nil {
					return nil, r.Err
				}
				us = append(us, r.URL)
			}
			return us, err
		},
	}
	for name, do := range issue {
		for _, coalesce := range []bool{false, true} {
			st := newGraphStore()
			is := batchIssuer(t, st, func(c *shorturl.IssuerConfig) { c.IdempotencySecret = testSecret; c.Coalesce = coalesce })
			st.lostAnswers = 1
			us, err := do(is)
			if err != nil {
				t.Errorf("%s (coalesce %v): %v after a write Persist stored", name, coalesce, err)
				continue
			}
			for _, u := range us {
				if got := st.v[u.Token]; len(got) != 1 || got[0] != u {
					t.Errorf("%s (coalesce %v): answered %+v, Persist holds %+v", name, coalesce, u, got)
				}
			}
			if st.ingests != 1 {
				t.Errorf("%s (coalesce %v): %d ingests, want the one", name, coalesce, st.ingests)
			}

			st = newGraphStore()
			is = batchIssuer(t, st, func(c *shorturl.IssuerConfig) { c.IdempotencySecret = testSecret; c.Coalesce = coalesce })
			st.down = true
			if _, err := do(is); !errors.Is(err, shorturl.ErrUnavailable) {
				t.Errorf("%s (coalesce %v): %v with Persist down, want unavailable", name, coalesce, err)
			}
		}
	}
}
