package shorturl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// Recovered counts what a Republisher did with the facts it found in logs.
type Recovered struct {
	Lines       int64 // lines read
	Republished int   // published onto the bus
	Skipped     int   // a fact this run had seen already (same idempotency key)
	Failed      int   // the bus refused it
	Invalid     int   // a graph_fact that is not a click fact Linoone builds
}

// republishers is how many publishes a Republisher keeps in flight: a bus that
// syncs each publish commits the ones waiting together.
const republishers = 32

// Republisher publishes every click fact that logs hold whole, each once across the
// logs it reads; consumers and Persist dedupe across runs by idempotency key and
// identity. A log is read line by line, passing over lines that are not JSON or
// carry no fact; a fact is in an ERROR line's graph_fact (MsgLostToLog's, or a file
// in their shape such as local mode's refused.jsonl) or is the detail of a
// GraphFactProduced event (a line of the facts log).
type Republisher struct {
	pub  Publisher
	warn io.Writer

	mu   sync.Mutex
	seen map[string]bool
	res  Recovered
}

// NewRepublisher publishes to pub and tells warn of each line it could not
// republish.
func NewRepublisher(pub Publisher, warn io.Writer) *Republisher {
	return &Republisher{pub: pub, warn: warn, seen: map[string]bool{}}
}

// Result is what the Republisher did so far; it may be read while Read runs.
func (r *Republisher) Result() Recovered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.res
}

type republishJob struct {
	fact clickfact.Fact
	at   string // name:line, for warnings
}

// Read publishes the facts of one log, named name in warnings, and returns once
// each is published or failed. live says the log may still be appended to (the
// facts log a consumer writes): a last event line without its newline is one the
// consumer had not committed, and delivers again, so it is passed over.
func (r *Republisher) Read(ctx context.Context, name string, log io.Reader, live bool) error {
	jobs := make(chan republishJob)
	var wg sync.WaitGroup
	for range republishers {
		wg.Go(func() {
			for j := range jobs {
				r.publish(ctx, j)
			}
		})
	}
	err := r.scan(ctx, name, log, live, jobs)
	close(jobs)
	wg.Wait()
	return err
}

// scan reads the log's lines and hands each fact not seen yet to the publishers.
func (r *Republisher) scan(ctx context.Context, name string, log io.Reader, live bool, jobs chan<- republishJob) error {
	br := bufio.NewReaderSize(log, 64<<10)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			torn := live && errors.Is(rerr, io.EOF) && isEvent(line)
			if j, ok := r.classify(line, fmt.Sprintf("%s:%d", name, n), torn); ok {
				select {
				case jobs <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("read %s: %w", name, rerr)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// classify counts one line and returns the job that publishes its fact, if it holds
// one not seen yet. torn says the line is the live log's unfinished last one.
func (r *Republisher) classify(line []byte, at string, torn bool) (republishJob, bool) {
	raw, ok := loggedFact(line)
	var f clickfact.Fact
	var perr error
	if ok {
		f, perr = clickfact.Parse(raw)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Lines++
	switch {
	case !ok && torn:
		fmt.Fprintf(r.warn, "%s: the live log's last line is unfinished: passed over (its consumer delivers it again)\n", at)
	case !ok && (bytes.Contains(line, []byte(MsgLostToLog)) || isEvent(line)):
		// Cut short (a full disk under the log): the fact it held is gone.
		r.res.Invalid++
		fmt.Fprintf(r.warn, "%s: a line that held a click fact is not whole JSON: its fact cannot be republished\n", at)
	case !ok:
	case perr != nil:
		r.res.Invalid++
		fmt.Fprintf(r.warn, "%s: %v\n", at, perr)
	case r.seen[f.IdempotencyKey]:
		r.res.Skipped++
	default:
		r.seen[f.IdempotencyKey] = true
		return republishJob{fact: f, at: at}, true
	}
	return republishJob{}, false
}

// publish publishes one fact and counts the outcome. A fact that failed is no
// longer seen, so that a later line holding it tries again.
func (r *Republisher) publish(ctx context.Context, j republishJob) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := r.pub.Publish(pctx, j.fact)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.res.Failed++
		delete(r.seen, j.fact.IdempotencyKey)
		fmt.Fprintf(r.warn, "%s: %v\n", j.at, err)
		return
	}
	r.res.Republished++
}

// eventMarker is what every line of the facts log holds (clickfact.AppendEvent).
var eventMarker = []byte(`"detail-type":"` + clickfact.DetailType + `"`)

func isEvent(line []byte) bool { return bytes.Contains(line, eventMarker) }

// loggedFact is the graph_fact of an ERROR log line, or the detail of a
// GraphFactProduced event line, if the line has one.
func loggedFact(line []byte) (json.RawMessage, bool) {
	var l struct {
		Level      string          `json:"level"`
		GraphFact  json.RawMessage `json:"graph_fact"`
		DetailType string          `json:"detail-type"`
		Source     string          `json:"source"`
		Detail     json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(line, &l) != nil {
		return nil, false
	}
	if l.DetailType == clickfact.DetailType && l.Source == clickfact.Source && len(l.Detail) > 0 && string(l.Detail) != "null" {
		return l.Detail, true
	}
	if l.Level != "ERROR" || len(l.GraphFact) == 0 || string(l.GraphFact) == "null" {
		return nil, false
	}
	return l.GraphFact, true
}
