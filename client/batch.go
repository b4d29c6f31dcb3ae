package client

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/linoone/linoone/api/management"
)

// The API's bounds on one POST /shorten/batch (openapi.yaml; the server's
// shorturl.MaxBatchItems and mgmtapi.MaxBatchBodyBytes, which a test holds these
// to).
const (
	maxBatchItems     = 1000
	maxBatchBodyBytes = 4 << 20
	maxKeyLength      = 255
)

// BatchResult is what became of one target URL of a ShortenBatch call.
type BatchResult struct {
	TargetURL string
	// Token, ShortURL and Replayed are set when the URL was issued (Replayed: the
	// Idempotency-Key already named it).
	Token, ShortURL string
	Replayed        bool
	// Err is set when it was not: a *Problem of this URL alone (ErrTargetInvalid,
	// ErrTargetBlocked, …), or the error of the request that carried it.
	Err error
}

// ShortenBatch issues short URLs for targetURLs with POST /shorten/batch and
// returns one result per URL, in input order. It sends batches of up to 1,000 URLs
// (fewer where long URLs would take a body past the API's 4 MiB), up to
// WithBatchConcurrency at a time, each retried like Shorten under an
// Idempotency-Key of its own: the call's key for the batch that starts at the first
// URL, and the key followed by "@" and the index of its first URL for the others.
// The same call made again with WithIdempotencyKey and the same URLs returns what
// the first issued and issues the rest.
//
// A URL the API refuses fails alone, in its result's Err. The error is non-nil
// when a request failed whole (after its retries): its URLs' results say so, the
// batches not yet sent then are not sent, and their URLs' results say that too.
func (c *Client) ShortenBatch(ctx context.Context, targetURLs []string, opts ...ShortenOption) ([]BatchResult, error) {
	results := make([]BatchResult, len(targetURLs))
	for i, t := range targetURLs {
		results[i].TargetURL = t
	}
	key, generated := callKey(opts)
	parts := split(targetURLs, maxBatchItems, maxBatchBodyBytes)
	if n := len(parts); n > 1 && len(batchKey(key, parts[n-1].start)) > maxKeyLength {
		return results, fmt.Errorf("POST /shorten/batch: Idempotency-Key %q leaves no room for the suffix of batch %d of %d (at most %d characters in all)", key, n, n, maxKeyLength)
	}
	errs := make([]error, len(parts))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error // the first batch that failed: no batch is sent after it
	)
	flight := make(chan struct{}, c.inFlight)
	for i, p := range parts {
		flight <- struct{}{}
		mu.Lock()
		stop := failure
		mu.Unlock()
		if stop == nil {
			stop = ctx.Err()
		}
		if stop != nil {
			<-flight
			errs[i] = fmt.Errorf("not sent after an earlier batch failed: %w", stop)
			setErr(results[p.start:p.end], errs[i])
			continue
		}
		wg.Go(func() {
			defer func() { <-flight }()
			errs[i] = c.batch(ctx, batchKey(key, p.start), generated, targetURLs[p.start:p.end], results[p.start:p.end])
			if errs[i] != nil {
				mu.Lock()
				failure = cmp.Or(failure, errs[i])
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return results, batchError(results, errs)
}

// batchError is nil when every batch was answered, else the first batch's error,
// saying how many URLs were not issued.
func batchError(results []BatchResult, errs []error) error {
	var first error
	for _, err := range errs {
		first = cmp.Or(first, err)
	}
	if first == nil {
		return nil
	}
	failed := 0
	for _, r := range results {
		if r.Err != nil && r.Token == "" {
			failed++
		}
	}
	return fmt.Errorf("%d of %d target URLs not issued (each result's Err says why): %w", failed, len(results), first)
}

// batch sends one batch and fills in out, one result per target.
func (c *Client) batch(ctx context.Context, key string, generated bool, targets []string, out []BatchResult) error {
	items := make([]management.BatchItem, len(targets))
	for i := range targets {
		items[i].TargetURL = &targets[i]
	}
	body := management.ShortenBatchJSONRequestBody{Items: items}
	post := func(key *string) send {
		return func(ctx context.Context) (*http.Response, error) {
			return c.api.ShortenBatch(ctx, &management.ShortenBatchParams{IdempotencyKey: key}, body)
		}
	}
	res, err := c.do(ctx, "POST /shorten/batch", c.retry.attempts, post(&key))
	if generated && isProblem(err, codeIdempotencyUnavailable) {
		res, err = c.do(ctx, "POST /shorten/batch (without Idempotency-Key)", 1, post(nil))
	}
	if err == nil {
		err = fill(res, out)
	}
	if err != nil {
		setErr(out, err)
	}
	return err
}

// fill reads a batch's answer into out.
func fill(res *http.Response, out []BatchResult) error {
	r, err := management.ParseShortenBatchResponse(res)
	if err != nil {
		return fmt.Errorf("POST /shorten/batch: %w", err)
	}
	if r.JSON200 == nil || len(r.JSON200.Results) != len(out) {
		return unexpected("POST /shorten/batch", r.StatusCode(), r.Body)
	}
	for _, it := range r.JSON200.Results {
		if (it.Token == nil || it.ShortURL == nil) && it.Problem == nil {
			return unexpected("POST /shorten/batch", r.StatusCode(), r.Body)
		}
	}
	for i, it := range r.JSON200.Results {
		if it.Problem != nil {
			out[i].Err = fromAPI(*it.Problem)
			continue
		}
		out[i].Token, out[i].ShortURL = *it.Token, *it.ShortURL
		out[i].Replayed = it.Replayed != nil && *it.Replayed
	}
	return nil
}

func setErr(out []BatchResult, err error) {
	for i := range out {
		out[i].Err = err
	}
}

// batchKey is the Idempotency-Key of the batch whose first URL is the call's
// start-th: the call's own for the first batch, so that a call of one batch sends
// the caller's key as it is.
func batchKey(key string, start int) string {
	if start == 0 {
		return key
	}
	return key + "@" + strconv.Itoa(start)
}

// span is the targets [start, end) of one batch.
type span struct{ start, end int }

// split cuts targets into batches of at most maxItems whose JSON body stays within
// maxBytes (the API's maxBatchItems and maxBatchBodyBytes): 1,000 ASCII targets of
// the longest valid length take about 2.1 MB, long non-ASCII ones can take three
// times that. A target too long
// for any body goes alone, for the API to refuse. The cut depends on the targets
// alone, so the same call made again sends the same batches under the same keys.
func split(targets []string, maxItems, maxBytes int) []span {
	const envelope = len(`{"items":[]}`)
	var parts []span
	start, size := 0, envelope
	for i, t := range targets {
		n := itemBytes(t)
		if i > start && (i-start == maxItems || size+1+n > maxBytes) {
			parts = append(parts, span{start, i})
			start, size = i, envelope
		}
		if i > start {
			size++ // the comma
		}
		size += n
	}
	if start < len(targets) {
		parts = append(parts, span{start, len(targets)})
	}
	return parts
}

// itemBytes is the length of {"target_url":…} as the generated client encodes it
// (encoding/json, which escapes <, > and & and replaces invalid UTF-8).
func itemBytes(target string) int {
	b, _ := json.Marshal(target) // a string always encodes
	return len(`{"target_url":}`) + len(b)
}
