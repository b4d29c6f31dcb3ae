package producer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/tty"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

// bulkBatchSize is fixed: a batch's idempotency key names its first line, so the
// same file must split the same way on every run.
const bulkBatchSize = shorturl.MaxBatchItems

// bulkBatchBytes bounds a batch's body under the API's, with room for the
// {"items":[…]} around the items.
const bulkBatchBytes = mgmtapi.MaxBatchBodyBytes - 1<<10

// splitBatches cuts recs into batches of bulkBatchSize records, or fewer where their
// targets would take the body past bulkBatchBytes: 1,000 ASCII targets of the longest
// take ~2.1 MB, but long non-ASCII ones can take three times that, and a body over
// the API's bound fails the whole batch on every run. The cut is a function of the
// content alone, so the same file splits the same way every time.
func splitBatches(recs []record) [][]record {
	var batches [][]record
	start, size := 0, 0
	for i, r := range recs {
		b, _ := json.Marshal(r.target) // as the client sends it
		n := len(`{"target_url":},`) + len(b)
		if i > start && (i-start == bulkBatchSize || size+n > bulkBatchBytes) {
			batches = append(batches, recs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(recs) {
		batches = append(batches, recs[start:])
	}
	return batches
}

// ImportOptions are an import's: how many batches are in flight at once, and
// whether its results are JSON lines rather than CSV.
type ImportOptions struct {
	Concurrency int
	JSON        bool
}

// ErrInterrupted is an import cut short by its context (Ctrl-C): the message says
// what was done and how to finish.
var ErrInterrupted = errors.New("interrupted")

// importJob is one import: what to read, where to send it, how to report.
type importJob struct {
	api         API
	concurrency int
	asJSON      bool
	stdout      io.Writer
	progress    *progressReporter
}

// record is one target URL of the input and the line it came from (1-based).
type record struct {
	line   int
	target string
}

// outcome is what became of a record.
type outcome struct {
	token, shortURL string
	replayed        bool
	problem         *management.Problem
}

// batchResult is what became of a batch: an outcome per record when the API
// answered it, else the error that failed it whole.
type batchResult struct {
	outcomes []outcome
	err      error
}

// stopError is a batch the API refused whole in a way no retry and no other batch
// gets past (credentials, a wrong URL): the import stops there.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// Import is `linoone shorten --file FILE`: it reads FILE ("-": stdin), sends
// its target URLs in batches of up to 1,000 with bounded concurrency, and writes
// target_url,short_url CSV (or JSON lines) to stdout in input order and each failed
// line with its problem to stderr. Each batch carries the Idempotency-Key
// "linoone-file:<sha256 of the content, 32 hex digits>:<first line>", so item i of it
// uses "<that key>#<i>": running the same file again mints nothing twice.
func (api API) Import(ctx context.Context, file string, stdin io.Reader, o ImportOptions, stdout, stderr io.Writer) error {
	j := importJob{api: api, concurrency: o.Concurrency, asJSON: o.JSON, stdout: stdout, progress: newProgress(stderr)}
	content, err := readInput(file, stdin)
	if err != nil {
		return err
	}
	recs, err := parseRecords(content)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%s: no target URLs", file)
	}
	sum := sha256.Sum256(content)
	keyPrefix := "linoone-file:" + hex.EncodeToString(sum[:16]) + ":"

	// A batch that stops the import cancels the others with its error as the cause;
	// the caller's ctx ends at Ctrl-C.
	interrupted := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	parts := splitBatches(recs)
	j.progress.start(len(recs))
	results, done, wg := j.sendAll(ctx, cancel, keyPrefix, parts)
	// Write each batch as soon as it and every batch before it are done.
	t, err := j.write(ctx, parts, results, done)
	cancel(err)
	wg.Wait()
	j.progress.finish(t.links)
	var stop *stopError
	switch {
	case errors.As(err, &stop):
		return fmt.Errorf("stopped after %d of %d lines: %w; then run the same file again (lines already issued replay)", t.lines, len(recs), err)
	case err != nil && interrupted.Err() != nil:
		// Batches past the last line written may have been issued too: they replay.
		return fmt.Errorf("%w after %d of %d lines; run the same file again to finish (lines already issued replay)", ErrInterrupted, t.lines, len(recs))
	case err != nil:
		return err
	}
	return failedLines(t.failed, t.refused, len(recs))
}

// sendAll sends the batches in input order, j.concurrency at a time, so that an
// import cut short has issued the lines before those it did not. A batch's result
// is read once its done channel is closed. A batch that stops the import cancels
// ctx with its error (stop); once ctx ends, the batches not sent are done too, cut
// short.
func (j importJob) sendAll(ctx context.Context, stop context.CancelCauseFunc, keyPrefix string, parts [][]record) ([]batchResult, []chan struct{}, *sync.WaitGroup) {
	results := make([]batchResult, len(parts))
	done := make([]chan struct{}, len(parts))
	for i := range done {
		done[i] = make(chan struct{})
	}
	next := make(chan int)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(next)
		for b := range parts {
			select {
			case next <- b:
			case <-ctx.Done():
				for rest := b; rest < len(parts); rest++ {
					results[rest].err = ctx.Err()
					close(done[rest])
				}
				return
			}
		}
	})
	for range min(j.concurrency, len(parts)) {
		wg.Go(func() {
			for b := range next {
				part := parts[b]
				results[b] = j.send(ctx, keyPrefix+strconv.Itoa(part[0].line), part)
				var se *stopError
				if errors.As(results[b].err, &se) {
					stop(se)
				}
				if results[b].err == nil || ctx.Err() == nil { // an answer, not a batch cut short
					j.progress.add(len(part))
				}
				close(done[b]) // after stop: the writer then reads its cause
			}
		})
	}
	return results, done, &wg
}

// failedLines says what to do about the lines that failed: those that failed on the
// server's side or the network's are retried by running the same file again; those
// the API refused (a 4xx problem of their own in its answer) fail again as they
// are, and fixing them in this file would make it a new file, every line of which
// is issued anew.
func failedLines(failed, refused, total int) error {
	if failed == 0 {
		return nil
	}
	var advice []string
	if refused > 0 {
		advice = append(advice, fmt.Sprintf("%d the API refused, which fail again as they are: "+
			"put them, fixed, in a new file (an edited file is a new one, and every line of it is issued anew)", refused))
	}
	if retry := failed - refused; retry > 0 {
		advice = append(advice, fmt.Sprintf("%d failed on the server's side or the network's: "+
			"run the same file again to retry them, nothing is minted twice", retry))
	}
	return fmt.Errorf("%d of %d lines failed (listed above): %s", failed, total, strings.Join(advice, "; "))
}

func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// parseRecords reads one URL per line, or a CSV whose header row has a target_url
// column. Blank lines are skipped; a line's number is its physical line in the input.
func parseRecords(content []byte) ([]record, error) {
	first, _, _ := bytes.Cut(content, []byte("\n"))
	header, err := csv.NewReader(bytes.NewReader(first)).Read()
	col := -1
	if err == nil {
		for i, h := range header {
			if strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) == "target_url" {
				col = i
			}
		}
	}
	if col < 0 {
		return plainRecords(content), nil
	}
	r := csv.NewReader(bytes.NewReader(content))
	r.FieldsPerRecord = -1
	if _, err := r.Read(); err != nil {
		return nil, err
	}
	// A row with more fields than the header is most likely a target with an unquoted
	// comma (…/@52.52,13.40,15z): its first field is a valid URL, just not the one
	// meant, so the file is refused before anything is minted.
	width := len(header)
	var recs []record
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		line, _ := r.FieldPos(0)
		if len(row) > width {
			return nil, fmt.Errorf("line %d has %d fields where the header has %d: quote a target_url that holds a comma", line, len(row), width)
		}
		if col >= len(row) {
			recs = append(recs, record{line: line}) // no target_url: the server names the rule
			continue
		}
		recs = append(recs, record{line: line, target: row[col]})
	}
}

// plainRecords reads one target a line, of any length (the server refuses one too
// long on its own line; a scanner's cap would have ended the file there, silently),
// after a UTF-8 byte order mark, which Windows editors write.
func plainRecords(content []byte) []record {
	var recs []record
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	for n := 1; len(content) > 0; n++ {
		line, rest, _ := bytes.Cut(content, []byte("\n"))
		if t := strings.TrimSpace(string(line)); t != "" {
			recs = append(recs, record{line: n, target: t})
		}
		content = rest
	}
	return recs
}

// bulkAttempts is how often a batch is sent when Persist, the network or a
// throttle fails it; a retry is safe, since the batch's idempotency key derives its
// tokens.
const bulkAttempts = 4

// maxRetryAfter bounds the wait a throttled answer's Retry-After asks for: a run
// never sits silent for longer than a request may take.
const maxRetryAfter = 2 * time.Minute

// maxBatchAnswer bounds what is read of an answer: a batch's holds 1,000 short URLs
// or problems, well under a megabyte.
const maxBatchAnswer = 16 << 20

// send issues one batch, sending it again after a failure of the server's side, the
// network's or a throttle's (429, as API Gateway answers), and returns an outcome
// per record, or the error of its last attempt. A batch the API refuses whole
// otherwise fails with a *stopError at once: no retry passes credentials it refuses
// or a URL that is not the API.
func (j importJob) send(ctx context.Context, key string, part []record) batchResult {
	body := management.ShortenBatchJSONRequestBody{Items: make([]management.BatchItem, len(part))}
	for i, r := range part {
		body.Items[i].TargetURL = &r.target
	}
	for attempt := 1; ; attempt++ {
		out, wait, err := j.post(ctx, key, body)
		var stop *stopError
		switch {
		case err == nil:
			return batchResult{outcomes: out}
		case errors.As(err, &stop) || ctx.Err() != nil:
			return batchResult{err: err}
		case attempt == bulkAttempts:
			return batchResult{err: fmt.Errorf("%w (sent %d times)", err, attempt)}
		}
		if wait == 0 {
			wait = time.Duration(attempt*attempt) * 200 * time.Millisecond
		}
		if !sleep(ctx, wait) {
			return batchResult{err: ctx.Err()}
		}
	}
}

// post sends a batch once. Its error is a *stopError where no retry helps;
// otherwise a retry may, after the wait the answer asked for (0: none).
func (j importJob) post(ctx context.Context, key string, body management.ShortenBatchJSONRequestBody) ([]outcome, time.Duration, error) {
	call := "POST " + j.api.Base + "/shorten/batch"
	res, err := j.api.Client.ShortenBatch(ctx, &management.ShortenBatchParams{IdempotencyKey: &key}, body)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", call, err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxBatchAnswer))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", call, err)
	}
	switch status := res.StatusCode; {
	case status == http.StatusOK:
		out, err := outcomes(answer, len(body.Items))
		if err != nil {
			return nil, 0, &stopError{fmt.Errorf("unexpected answer from %s: 200 %v: %.200q: check that %s (--management-url or LINOONE_MANAGEMENT_URL) is the management API",
				call, err, answer, j.api.Base)}
		}
		return out, 0, nil
	case status == http.StatusTooManyRequests || status >= 500:
		return nil, retryAfter(res.Header), fmt.Errorf("%s: %s", call, describeAnswer(status, answer))
	default:
		return nil, 0, &stopError{fmt.Errorf("%s: %s: %s", call, describeAnswer(status, answer), j.refusedWhole(status))}
	}
}

// refusedWhole says what to check when the API refuses a batch as a whole.
func (j importJob) refusedWhole(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprintf("the API refused the credentials: check %s, and that %s is the management API they belong to", j.api.signer, j.api.Base)
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return fmt.Sprintf("check that %s (--management-url or LINOONE_MANAGEMENT_URL) is the management API", j.api.Base)
	default: // 413, 415, 400, a redirect: what answered does not take batches as the API does
		return fmt.Sprintf("check that %s (--management-url or LINOONE_MANAGEMENT_URL) is the management API, with no proxy between that changes or bounds the request", j.api.Base)
	}
}

// outcomes reads the answer to a batch of n items: one result per item, in input
// order, each a short URL or a problem.
func outcomes(answer []byte, n int) ([]outcome, error) {
	if err := checkShape("BatchResponse", answer); err != nil {
		return nil, err
	}
	var res management.BatchResponse
	if err := json.Unmarshal(answer, &res); err != nil {
		return nil, fmt.Errorf("is not a batch answer (%v)", err)
	}
	if len(res.Results) != n {
		return nil, fmt.Errorf("holds %d results for %d items", len(res.Results), n)
	}
	out := make([]outcome, n)
	for i, r := range res.Results {
		switch {
		case r.Token != nil && r.ShortURL != nil:
			out[i] = outcome{token: *r.Token, shortURL: *r.ShortURL, replayed: r.Replayed != nil && *r.Replayed}
		case r.Problem != nil && r.Problem.Type != "":
			out[i].problem = r.Problem
		default:
			return nil, fmt.Errorf("holds a result (item %d) with neither a short URL nor a problem", i)
		}
	}
	return out, nil
}

// describeAnswer is an answer as a message shows it: its status and its problem,
// or its body quoted.
func describeAnswer(status int, body []byte) string {
	var p management.Problem
	if err := json.Unmarshal(body, &p); err == nil && p.Type != "" {
		return problemText(status, p)
	}
	return fmt.Sprintf("%d %s: %.200q", status, http.StatusText(status), body)
}

// retryAfter is the wait a throttled or unavailable answer asks for in seconds
// (Retry-After), at most maxRetryAfter; 0 when it asks none.
func retryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || s < 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, maxRetryAfter)
}

// sleep waits d, or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// tally counts the lines the output reached, in input order.
type tally struct {
	lines   int // reported: a short URL on stdout or a failure on stderr
	links   int // of those, the short URLs
	failed  int
	refused int // of the failed, those the API refused in its answer (a 4xx problem)
}

// write writes the batches in input order as they complete, each failed line with
// its problem and each batch that failed whole as one line with its lines' range.
// It stops at a batch cut short by the import's end, and returns its cause.
func (j importJob) write(ctx context.Context, parts [][]record, results []batchResult, done []chan struct{}) (tally, error) {
	var t tally
	out := bufio.NewWriterSize(j.stdout, 256<<10)
	cw := csv.NewWriter(out)
	enc := json.NewEncoder(out)
	if !j.asJSON {
		_ = cw.Write([]string{"target_url", "short_url"})
	}
	for b := range done {
		<-done[b]
		part, res := parts[b], results[b]
		switch {
		case res.err != nil && ctx.Err() != nil:
			return t, context.Cause(ctx)
		case res.err != nil:
			t.lines += len(part)
			t.failed += len(part)
			j.progress.printf("lines %d-%d: %v\n", part[0].line, part[len(part)-1].line, res.err)
		}
		for i, o := range res.outcomes {
			r := part[i]
			t.lines++
			if o.problem != nil {
				t.failed++
				if o.problem.Status >= 400 && o.problem.Status < 500 {
					t.refused++
				}
				j.progress.printf("line %d: %s: %s (%s)\n", r.line, tty.Printable(r.target), tty.Printable(o.problem.Detail), tty.Printable(o.problem.Type))
				continue
			}
			t.links++
			if j.asJSON {
				_ = enc.Encode(struct {
					Line      int    `json:"line"`
					TargetURL string `json:"target_url"`
					ShortURL  string `json:"short_url"`
					Token     string `json:"token"`
					Replayed  bool   `json:"replayed,omitempty"`
				}{r.line, r.target, o.shortURL, o.token, o.replayed})
				continue
			}
			_ = cw.Write([]string{r.target, o.shortURL})
		}
		cw.Flush()
		if err := errors.Join(cw.Error(), out.Flush()); err != nil {
			return t, fmt.Errorf("write results: %w", err)
		}
	}
	return t, nil
}
