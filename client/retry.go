package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryPolicy is how often and how far apart a request is sent.
type retryPolicy struct {
	attempts  int
	base, max time.Duration
}

// backoff is the wait before attempt n+1 after n failed without a Retry-After:
// between half and all of min(max, base·2ⁿ⁻¹), so that clients that failed
// together do not retry together ("equal jitter").
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.max
	if n < 31 && p.base<<(n-1) > 0 && p.base<<(n-1) < p.max {
		d = p.base << (n - 1)
	}
	return d/2 + rand.N(d/2+1)
}

// maxRetryAfter bounds the Retry-After the client waits for: a throttle that asks
// for longer is the caller's to handle (ErrThrottled).
const maxRetryAfter = time.Minute

// maxAnswerBytes bounds what is read of an answer: a full batch's is well under a
// megabyte.
const maxAnswerBytes = 16 << 20

// send is one attempt of a call: the generated client's request.
type send func(ctx context.Context) (*http.Response, error)

// do sends a request until it gets an answer that is not worth another attempt,
// at most attempts times: a network error, a 429 or a 5xx is retried after a
// backoff or the answer's Retry-After, unless the wait would outlast ctx. It
// returns a 2xx answer with its body read into memory, or the last error: a
// *Problem for an answer, the transport's error otherwise.
func (c *Client) do(ctx context.Context, call string, attempts int, s send) (*http.Response, error) {
	for n := 1; ; n++ {
		res, wait, err := c.attempt(ctx, s)
		if err == nil {
			return res, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", call, err)
		}
		if n == attempts {
			return nil, fmt.Errorf("%s: %w (sent %d times)", call, err, n)
		}
		if wait == 0 {
			wait = c.retry.backoff(n)
		} else if wait > maxRetryAfter {
			return nil, fmt.Errorf("%s: %w (Retry-After %v is longer than the client waits)", call, err, wait)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, fmt.Errorf("%s: %w (sent %d times; no time left for another)", call, err, n)
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%s: %w (sent %d times, then %w)", call, err, n, serr)
		}
	}
}

// attempt sends once and reads the answer. It returns a 2xx answer, or the error
// with the wait its Retry-After asks for (0 when none).
func (c *Client) attempt(ctx context.Context, s send) (*http.Response, time.Duration, error) {
	res, err := s(ctx)
	if err != nil {
		return nil, 0, &networkError{err}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	closeErr := res.Body.Close()
	if err = errors.Join(err, closeErr); err != nil {
		return nil, 0, &networkError{fmt.Errorf("read answer: %w", err)}
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, 0, nil
	}
	return nil, retryAfter(res.Header, time.Now()), problemOf(res.StatusCode, body)
}

// networkError is an attempt that got no answer: the request may or may not
// have reached the server.
type networkError struct{ err error }

func (e *networkError) Error() string { return e.err.Error() }
func (e *networkError) Unwrap() error { return e.err }

// retryable reports whether another attempt may succeed where err failed: no
// answer at all, a throttle or a server error. idempotency-unavailable is a 503
// that lasts until an operator acts.
func retryable(err error) bool {
	var p *Problem
	if errors.As(err, &p) {
		return p.Status == http.StatusTooManyRequests || p.Status >= 500 && p.Code() != codeIdempotencyUnavailable
	}
	var ne *networkError
	return errors.As(err, &ne) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// retryAfter is the wait an answer's Retry-After asks for, in seconds or as an
// HTTP date (RFC 9110, 10.2.3); 0 when it asks none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(s, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
