package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/local/localbus"
)

// recoverResult counts what recover did with the facts it found in a log.
type recoverResult struct {
	Republished int // published onto the bus
	Skipped     int // a fact this run had seen already (same idempotency key)
	Failed      int // the bus refused it
	Invalid     int // a graph_fact that is not a click fact Linoone builds
}

// recoverFromLog republishes onto the local bus every click fact a serve log holds
// whole (the graph_fact attribute of its ERROR lines), each once per run; the
// consumer and Persist dedupe across runs by idempotency key and identity.
func recoverFromLog(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("recover")
	from := fs.String("from-log", "", "a serve log (JSON lines) whose logged click facts to republish")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *from == "" {
		return &usageError{fs: fs, err: errors.New("--from-log FILE is required")}
	}
	cfg, err := config.LoadReplay(getenv)
	if err != nil {
		return err
	}
	if err := servedDataDir(cfg.DataDir); err != nil {
		return err
	}
	f, err := os.Open(*from)
	if err != nil {
		return err
	}
	defer f.Close()
	bus, err := localbus.OpenBus(filepath.Join(cfg.DataDir, busDir), localbus.BusOptions{Fault: cfg.BusFault, Region: cfg.Region})
	if err != nil {
		return err
	}
	defer bus.Close()
	res, err := republishLogged(ctx, f, bus, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "republished %d, skipped %d, failed %d, invalid %d\n", res.Republished, res.Skipped, res.Failed, res.Invalid)
	if res.Failed > 0 || res.Invalid > 0 {
		return fmt.Errorf("%d click facts were not republished (run recover again) and %d lines held a fact that cannot be read", res.Failed, res.Invalid)
	}
	return nil
}

// republishLogged reads the log line by line; lines that are not JSON or carry no
// fact are passed over.
func republishLogged(ctx context.Context, log io.Reader, pub shorturl.Publisher, stderr io.Writer) (recoverResult, error) {
	var res recoverResult
	seen := map[string]bool{}
	r := bufio.NewReader(log)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		fact, ok := loggedFact(line)
		if !ok && bytes.Contains(line, []byte(shorturl.MsgLostToLog)) {
			// Cut short (a full disk under the log): the fact it held is gone.
			res.Invalid++
			fmt.Fprintf(stderr, "line %d: a %q line that is not whole JSON: its fact cannot be republished\n", n, shorturl.MsgLostToLog)
		}
		if ok {
			f, err := clickfact.Parse(fact)
			switch {
			case err != nil:
				res.Invalid++
				fmt.Fprintf(stderr, "line %d: %v\n", n, err)
			case seen[f.IdempotencyKey]:
				res.Skipped++
			default:
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err = pub.Publish(pctx, f)
				cancel()
				if err != nil {
					res.Failed++
					fmt.Fprintf(stderr, "line %d: %v\n", n, err)
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
