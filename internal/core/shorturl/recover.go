package shorturl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
)

// Recovered counts what RepublishLogged did with the facts it found in a log.
type Recovered struct {
	Republished int // published onto the bus
	Skipped     int // a fact this run had seen already (same idempotency key)
	Failed      int // the bus refused it
	Invalid     int // a graph_fact that is not a click fact Linoone builds
}

// RepublishLogged publishes every click fact a log holds whole (the graph_fact of
// its ERROR lines, MsgLostToLog's, or of a file in their shape such as local mode's
// refused.jsonl), each once per run; consumers and Persist dedupe across runs by
// idempotency key and identity. It reads the log line by line, passing over lines
// that are not JSON or carry no fact, and tells warn of each line it could not
// republish.
func RepublishLogged(ctx context.Context, log io.Reader, pub Publisher, warn io.Writer) (Recovered, error) {
	var res Recovered
	seen := map[string]bool{}
	r := bufio.NewReader(log)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		fact, ok := loggedFact(line)
		if !ok && bytes.Contains(line, []byte(MsgLostToLog)) {
			// Cut short (a full disk under the log): the fact it held is gone.
			res.Invalid++
			fmt.Fprintf(warn, "line %d: a %q line that is not whole JSON: its fact cannot be republished\n", n, MsgLostToLog)
		}
		if ok {
			f, err := clickfact.Parse(fact)
			switch {
			case err != nil:
				res.Invalid++
				fmt.Fprintf(warn, "line %d: %v\n", n, err)
			case seen[f.IdempotencyKey]:
				res.Skipped++
			default:
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err = pub.Publish(pctx, f)
				cancel()
				if err != nil {
					res.Failed++
					fmt.Fprintf(warn, "line %d: %v\n", n, err)
				} else {
					seen[f.IdempotencyKey] = true
					res.Republished++
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			return res, nil
		}
		if rerr != nil {
			return res, fmt.Errorf("read log: %w", rerr)
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}

// loggedFact is the graph_fact of an ERROR log line, if it has one.
func loggedFact(line []byte) (json.RawMessage, bool) {
	var l struct {
		Level     string          `json:"level"`
		GraphFact json.RawMessage `json:"graph_fact"`
	}
	if json.Unmarshal(line, &l) != nil || l.Level != "ERROR" || len(l.GraphFact) == 0 || string(l.GraphFact) == "null" {
		return nil, false
	}
	return l.GraphFact, true
}
