package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/mgmtapi"
	"github.com/linoone/linoone/internal/shorturl"
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

// bulkJob is one import: what to read, where to send it, how to report.
type bulkJob struct {
	client      *management.ClientWithResponses
	endpoint    string
	concurrency int
	asJSON      bool
	stdout      io.Writer
	stderr      io.Writer
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

// bulkShorten is `linoone shorten --file FILE`: it reads FILE ("-": stdin), sends
// its target URLs in batches of up to 1,000 with bounded concurrency, and writes
// target_url,short_url CSV (or JSON lines) to stdout in input order and each failed
// line with its problem to stderr. Each batch carries the Idempotency-Key
// "linoone-file:<sha256 of the content, 32 hex digits>:<first line>", so item i of it
// uses "<that key>#<i>": running the same file again mints nothing twice.
func bulkShorten(ctx context.Context, j bulkJob, file string, stdin io.Reader) error {
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

	parts := splitBatches(recs)
	batches := len(parts)
	results := make([][]outcome, batches)
	done := make([]chan struct{}, batches)
	for i := range done {
		done[i] = make(chan struct{})
	}
	j.progress.start(len(recs))
	sem := make(chan struct{}, j.concurrency)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			part := parts[b]
			results[b] = j.send(ctx, keyPrefix+strconv.Itoa(part[0].line), part)
			j.progress.add(len(part))
			close(done[b])
		}()
	}
	// Write each batch as soon as it and every batch before it are done.
	failed, refused, err := j.write(parts, results, done)
	wg.Wait()
	j.progress.finish()
	if err != nil {
		return err
	}
	return failedLines(failed, refused, len(recs))
}

// failedLines says what to do about the lines that failed: those that failed on the
// server's side or the network's are retried by running the same file again; those
// the API refused (4xx) fail again as they are, and fixing them in this file would
// make it a new file, every line of which is issued anew.
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

// bulkAttempts is how often a batch is sent when Persist or the network fails; a
// retry is safe, since the batch's idempotency key derives its tokens.
const bulkAttempts = 4

// send issues one batch and returns one outcome per record; a batch the API
// refused as a whole gives every record the same problem.
func (j bulkJob) send(ctx context.Context, key string, part []record) []outcome {
	body := management.ShortenBatchJSONRequestBody{Items: make([]management.BatchItem, len(part))}
	for i, r := range part {
		body.Items[i].TargetURL = &r.target
	}
	var p *management.Problem
	for attempt := 1; ; attempt++ {
		res, err := j.client.ShortenBatchWithResponse(ctx, &management.ShortenBatchParams{IdempotencyKey: &key}, body)
		switch {
		case err == nil && res.JSON200 != nil && len(res.JSON200.Results) == len(part):
			out := make([]outcome, len(part))
			for i, r := range res.JSON200.Results {
				out[i] = outcome{problem: r.Problem}
				if r.Token != nil && r.ShortURL != nil {
					out[i].token, out[i].shortURL = *r.Token, *r.ShortURL
					out[i].replayed = r.Replayed != nil && *r.Replayed
				}
			}
			return out
		case err != nil:
			p = &management.Problem{Type: "urn:linoone:problem:request-failed", Title: "Request failed", Detail: fmt.Sprintf("POST %s/shorten/batch: %v", j.endpoint, err)}
		default:
			p = batchProblem(res.StatusCode(), res.Body)
		}
		retry := err != nil || p.Status == http.StatusServiceUnavailable || p.Status >= 500
		if !retry || attempt == bulkAttempts || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt*attempt) * 200 * time.Millisecond)
	}
	out := make([]outcome, len(part))
	for i := range out {
		out[i].problem = p
	}
	return out
}

func batchProblem(status int, body []byte) *management.Problem {
	var p management.Problem
	if err := json.Unmarshal(body, &p); err != nil || p.Type == "" {
		return &management.Problem{Type: "urn:linoone:problem:unexpected-answer", Status: status, Title: http.StatusText(status), Detail: fmt.Sprintf("%.200s", body)}
	}
	return &p
}

// write writes the batches in input order as they complete and returns how many
// records failed, and how many of those the API refused (a 4xx problem).
func (j bulkJob) write(parts [][]record, results [][]outcome, done []chan struct{}) (failed, refused int, err error) {
	out := bufio.NewWriterSize(j.stdout, 256<<10)
	cw := csv.NewWriter(out)
	enc := json.NewEncoder(out)
	if !j.asJSON {
		_ = cw.Write([]string{"target_url", "short_url"})
	}
	for b := range done {
		<-done[b]
		for i, o := range results[b] {
			r := parts[b][i]
			if o.problem != nil {
				failed++
				if o.problem.Status >= 400 && o.problem.Status < 500 {
					refused++
				}
				j.progress.printf("line %d: %s: %s (%s)\n", r.line, r.target, o.problem.Detail, o.problem.Type)
				continue
			}
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
			return failed, refused, fmt.Errorf("write results: %w", err)
		}
	}
	return failed, refused, nil
}

// shortenFlags are the flags of shorten beyond a single URL: --file and what goes
// with it, and --idempotency-key.
type shortenFlags struct {
	file        *string
	concurrency *int
	key         *string
}

func bulkFlags(fs *flag.FlagSet) shortenFlags {
	return shortenFlags{
		file:        fs.String("file", "", "import FILE (one URL per line, or CSV with a target_url column; - for stdin) through POST /shorten/batch"),
		concurrency: fs.Int("concurrency", 4, "with --file: batches of 1,000 in flight at once (1-32)"),
		key:         fs.String("idempotency-key", "", "without --file: send this Idempotency-Key, so a retry returns the same short URL"),
	}
}

// check refuses a command line that mixes the two modes, or gives an empty
// --idempotency-key: that is most often an unset shell variable, and sending no key
// would issue a new short URL on every retry the key was meant to make safe.
func (f shortenFlags) check(fs *flag.FlagSet, pos []string) error {
	keyGiven := false
	fs.Visit(func(fl *flag.Flag) { keyGiven = keyGiven || fl.Name == "idempotency-key" })
	switch {
	case *f.file == "" && len(pos) != 1:
		return &usageError{fs: fs, err: errors.New("an argument is missing: give TARGET_URL or --file FILE")}
	case *f.file != "" && len(pos) != 0:
		return &usageError{fs: fs, err: errors.New("give TARGET_URL or --file FILE, not both")}
	case *f.file != "" && keyGiven:
		return &usageError{fs: fs, err: errors.New("--idempotency-key is for one URL: --file derives its keys from the file")}
	case keyGiven && *f.key == "":
		return &usageError{fs: fs, err: errors.New("--idempotency-key is empty (an unset variable?): give a key, or leave the flag out to issue a new short URL")}
	case *f.concurrency < 1 || *f.concurrency > 32:
		return &usageError{fs: fs, err: fmt.Errorf("--concurrency %d: want 1 to 32", *f.concurrency)}
	}
	return nil
}

// timeout bounds one request: a batch of 1,000 takes longer than one URL.
func (f shortenFlags) timeout() time.Duration {
	if *f.file != "" {
		return 2 * time.Minute
	}
	return 15 * time.Second
}

// params are POST /shorten's parameters: the Idempotency-Key, if given.
func (f shortenFlags) params() *management.ShortenParams {
	if *f.key == "" {
		return nil
	}
	return &management.ShortenParams{IdempotencyKey: f.key}
}

func (f shortenFlags) run(ctx context.Context, client *management.ClientWithResponses, endpoint string, asJSON bool, stdin io.Reader, stdout, stderr io.Writer) error {
	j := bulkJob{client: client, endpoint: endpoint, concurrency: *f.concurrency, asJSON: asJSON, stdout: stdout, stderr: stderr, progress: newProgress(stderr)}
	return bulkShorten(ctx, j, *f.file, stdin)
}
