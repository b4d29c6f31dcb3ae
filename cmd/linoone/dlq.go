package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/foundation/tty"
	"github.com/linoone/linoone/internal/local/localbus"
)

const dlqUsage = `usage: linoone dlq [--json]
       linoone dlq redrive --from DEADLETTER_QUEUE [--wait]

Lists the click facts waiting in the local click DLQ: when each failed, how many
publishes were tried, its short URL's token, its idempotency key and why it failed.
On AWS, 'linoone dlq redrive' moves the facts replay gave up on back to the click
DLQ ('linoone dlq redrive -h').

example:
  linoone dlq --json
`

// dlqCmd prints what waits in the local click DLQ.
func dlqCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "redrive" {
		return redriveCmd(ctx, args[1:], getenv, stdout)
	}
	fs := newFlags("dlq")
	asJSON := fs.Bool("json", false, "print the entries as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := config.LoadDLQ(getenv)
	if err != nil {
		return err
	}
	if err := datadir.CheckServed(cfg.DataDir); err != nil {
		return err
	}
	dir := filepath.Join(cfg.DataDir, datadir.DLQ)
	q, err := localbus.OpenDLQ(dir, localbus.DLQOptions{})
	if err != nil {
		return err
	}
	entries, err := q.List(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if entries == nil {
			entries = []localbus.Entry{}
		}
		return enc.Encode(entries)
	}
	if len(entries) == 0 {
		// A header over no rows is noise: one line says it all.
		_, err = fmt.Fprintf(stdout, "no click facts waiting in %s\n", dir)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAILED_AT\tATTEMPTS\tTOKEN\tIDEMPOTENCY_KEY\tREASON")
	for _, e := range entries {
		reason := e.Reason
		if e.Problem != "" {
			reason = "INVALID: " + e.Problem
		}
		token := e.Token
		if token == "" {
			token = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", e.FailedAt.UTC().Format(time.RFC3339), e.Attempts, tty.Cell(token, 40), tty.Cell(e.IdempotencyKey, 80), tty.Cell(reason, 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%d click facts waiting in %s\n", len(entries), dir)
	return err
}
