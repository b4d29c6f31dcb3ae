package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"

	"github.com/linoone/linoone/api/management"
)

// ShortURL is an issued short URL.
type ShortURL struct {
	Token    string // 10 base62 characters
	ShortURL string // the resolver's base URL, "/" and Token
	// Replayed is true when the Idempotency-Key already named this short URL:
	// nothing was written.
	Replayed bool
}

// codeIdempotencyUnavailable is the 503 of a deployment without an idempotency
// secret, which serves requests without an Idempotency-Key.
const codeIdempotencyUnavailable = "idempotency-unavailable"

// A ShortenOption sets something of one Shorten or ShortenBatch call.
type ShortenOption func(*shortenCall)

type shortenCall struct {
	key string
}

// WithIdempotencyKey sends key as the Idempotency-Key (1 to 255 printable ASCII
// characters but the comma, no space at either end or beside another), so that
// this call made again, by this process or another, returns the short URL it
// issued instead of issuing another. Without it the key is random, made for the
// one call: its retries are safe, a second call is another short URL.
func WithIdempotencyKey(key string) ShortenOption {
	return func(c *shortenCall) { c.key = key }
}

// callKey is the Idempotency-Key of a call: the caller's, or a random one, which
// generated says.
func callKey(opts []ShortenOption) (key string, generated bool) {
	var c shortenCall
	for _, o := range opts {
		o(&c)
	}
	if c.key != "" {
		return c.key, false
	}
	return "linoone-go-" + rand.Text(), true
}

// Shorten issues a short URL for targetURL with POST /shorten. It retries network
// errors, 429 and 5xx under one Idempotency-Key, so a retry returns the short URL
// an attempt whose answer was lost had stored. A refusal is a *Problem
// (ErrTargetInvalid, ErrTargetBlocked, ErrIdempotencyKeyReused, …).
//
// On a deployment that has no idempotency secret (503 idempotency-unavailable),
// a call without WithIdempotencyKey is sent once more without a key, and that
// attempt is not retried: a retry without a key could issue a second short URL.
func (c *Client) Shorten(ctx context.Context, targetURL string, opts ...ShortenOption) (ShortURL, error) {
	key, generated := callKey(opts)
	body := management.ShortenJSONRequestBody{TargetURL: targetURL}
	post := func(key *string) send {
		return func(ctx context.Context) (*http.Response, error) {
			return c.api.Shorten(ctx, &management.ShortenParams{IdempotencyKey: key}, body)
		}
	}
	res, err := c.do(ctx, "POST /shorten", c.retry.attempts, post(&key))
	if generated && isProblem(err, codeIdempotencyUnavailable) {
		res, err = c.do(ctx, "POST /shorten (without Idempotency-Key)", 1, post(nil))
	}
	if err != nil {
		return ShortURL{}, err
	}
	r, err := management.ParseShortenResponse(res)
	if err != nil {
		return ShortURL{}, fmt.Errorf("POST /shorten: %w", err)
	}
	u, replayed := r.JSON201, false
	if u == nil && r.JSON200 != nil {
		u, replayed = r.JSON200, true
	}
	if u == nil || u.Token == "" || u.ShortURL == "" {
		return ShortURL{}, unexpected("POST /shorten", r.StatusCode(), r.Body)
	}
	return ShortURL{Token: u.Token, ShortURL: u.ShortURL, Replayed: replayed}, nil
}

// isProblem reports whether err holds a *Problem of this code.
func isProblem(err error, code string) bool {
	var p *Problem
	return errors.As(err, &p) && p.Code() == code
}

// unexpected is the error of a success answer that is not what openapi.yaml
// says, as a proxy or another service at the endpoint might send.
func unexpected(call string, status int, body []byte) error {
	return fmt.Errorf("%s: unexpected answer %d: %.200q: is the endpoint Linoone's management API?", call, status, body)
}
